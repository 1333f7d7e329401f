// SPDX-License-Identifier: MIT
// `zero-sandbox state list|prune`: the managed per-workspace state (tool caches) under the user
// cache dir. Only this user's real directories are listed or removed (never through a symlink),
// and never one a live run holds a lease on.

import { cleanupRuntimeRoots, listRuntimeRoots, removeRuntimeTrash, runtimeMaxAgeMs, runtimeStateBase } from '../sandbox/runtime-state.js';
import { flagBool, flagString, parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';

export const STATE_HELP = `Usage: zero-sandbox state list [--json]
       zero-sandbox state prune [--older-than DAYS | --all] [--json]

Each workspace a sandboxed command ran in gets managed state (npm, pip, Go, Cargo and Yarn
caches) under $XDG_CACHE_HOME/zero/runtime/v1 (else ~/.cache/zero/runtime/v1), one directory
per workspace. Entries unused for ZERO_SANDBOX_STATE_MAX_AGE_DAYS days (default 30) are removed
automatically after a run, in the background; at most 64 are kept.

  list    each entry: its workspace, when it was last used, and whether a live run holds it
  prune   remove entries unused for the default age now (or --older-than DAYS, or --all);
          an entry a live run holds is kept, as are other users' files and symlinks

Options:
  --older-than DAYS  prune entries unused for more than DAYS days (a number >= 0)
  --all              prune every entry no live run holds
  --json             print JSON
  -h, --help         show this help

Exit status: 0 on success, 1 when the state directory cannot be read, 2 for usage errors.
`;

const DAY_MS = 24 * 60 * 60 * 1000;

export async function runState(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(STATE_HELP);
    return sub === undefined ? 2 : 0;
  }
  const flags = {
    list: [{ name: 'json', type: 'boolean' as const }],
    prune: [{ name: 'older-than', type: 'string' as const }, { name: 'all', type: 'boolean' as const }, { name: 'json', type: 'boolean' as const }],
  }[sub];
  if (flags === undefined) throw new UsageError(`unknown state subcommand "${sub}" (list, prune)`);
  const args = parseArgs(rest, { flags });
  if (args.help) {
    io.stdout(STATE_HELP);
    return 0;
  }
  const json = flagBool(args, 'json');
  const base = runtimeStateBase();
  const now = Date.now();
  if (sub === 'list') {
    const roots = listRuntimeRoots(base).map((root) => ({
      name: root.name,
      path: root.path,
      workspace: root.workspace ?? null,
      lastUsed: new Date(root.mtime).toISOString(),
      inUse: root.liveLeases > 0,
    }));
    if (json) io.stdout(`${JSON.stringify({ base, maxAgeDays: runtimeMaxAgeMs() / DAY_MS, entries: roots }, null, 2)}\n`);
    else if (roots.length === 0) io.stdout(`No managed state under ${base}.\n`);
    else {
      io.stdout(`Managed state under ${base}:\n`);
      for (const root of roots) io.stdout(`  ${root.name}  last used ${root.lastUsed}${root.inUse ? '  (in use)' : ''}  ${root.workspace ?? '(workspace not recorded)'}\n`);
    }
    return 0;
  }
  const olderThan = flagString(args, 'older-than');
  if (olderThan !== undefined && flagBool(args, 'all')) throw new UsageError('give either --older-than DAYS or --all, not both');
  let maxAgeMs = runtimeMaxAgeMs();
  if (flagBool(args, 'all')) maxAgeMs = -1;
  else if (olderThan !== undefined) {
    const days = Number(olderThan);
    if (olderThan.trim() === '' || !Number.isFinite(days) || days < 0) throw new UsageError(`--older-than must be a number of days >= 0, not "${olderThan}"`);
    maxAgeMs = days * DAY_MS;
  }
  const before = listRuntimeRoots(base);
  // Moved aside under the lease mutex (a root a live run holds is skipped), removed after it.
  const trash = before.length === 0 ? [] : cleanupRuntimeRoots(base, { now, maxAgeMs, maxRoots: Number.MAX_SAFE_INTEGER });
  // Trees the sandboxed commands shaped: removed by the descriptor walk (see removeRuntimeTrash).
  for (const dir of trash) removeRuntimeTrash(dir);
  const left = new Set(listRuntimeRoots(base).map((root) => root.name));
  const removed = before.filter((root) => !left.has(root.name)).map((root) => ({ name: root.name, workspace: root.workspace ?? null }));
  const kept = before.length - removed.length;
  if (json) io.stdout(`${JSON.stringify({ base, removed, kept }, null, 2)}\n`);
  else io.stdout(`Removed ${removed.length} managed state ${removed.length === 1 ? 'entry' : 'entries'} under ${base}; kept ${kept}.\n`);
  return 0;
}
