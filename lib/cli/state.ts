// SPDX-License-Identifier: MIT
// `zero-sandbox state list|prune`: the managed per-workspace state (tool caches) under the user
// cache dir. Only this user's real directories are listed or removed (never through a symlink),
// and never one a live run holds a lease on. `state acls|revert-acls`: the ACEs runs left on the
// user's files on Windows (the ACL journal), listed or taken off again.

import { cleanupRuntimeRoots, listRuntimeRoots, removeRuntimeTrash, runtimeMaxAgeMs, runtimeStateBase } from '../sandbox/runtime-state.js';
import { flagBool, flagString, parseArgs, UsageError, type ParsedArgs } from './args.js';
import type { CliIo } from './io.js';

export const STATE_HELP = `Usage: zero-sandbox state list [--json]
       zero-sandbox state prune [--older-than DAYS | --all] [--json]
       zero-sandbox state acls [--json]
       zero-sandbox state revert-acls [--workspace DIR] [--json]

Each workspace a sandboxed command ran in gets managed state (npm, pip, Go, Cargo and Yarn
caches) under $XDG_CACHE_HOME/zero/runtime/v1 (else ~/.cache/zero/runtime/v1), one directory
per workspace. Entries unused for ZERO_SANDBOX_STATE_MAX_AGE_DAYS days (default 30) are removed
automatically after a run, in the background; at most 64 are kept.

  list    each entry: its workspace, when it was last used, and whether a live run holds it
  prune   remove entries unused for the default age now (or --older-than DAYS, or --all);
          an entry a live run holds is kept, as are other users' files and symlinks

On Windows a run gives its AppContainer ACEs on the workspace, the paths it may read or write and
the credential directories it is denied, and they stay between runs of the same policy (they name
only that container's SID: the user's own access is unchanged). Each container's paths are kept
in a journal under %LOCALAPPDATA%\\zero\\windows-acl; a run whose workspace's policy changed
takes the old container's ACEs off. Other systems set no ACE: both commands have nothing to do.

  acls         each container in the journal: its workspace and the paths holding its ACEs
  revert-acls  take every container's ACEs off its paths and delete its AppContainer profile
               (or only those of --workspace DIR); a run of one still in flight loses its
               grants and fails, and the next run of a policy sets its ACEs again

Options:
  --older-than DAYS  prune entries unused for more than DAYS days (a number >= 0)
  --all              prune every entry no live run holds
  --workspace DIR    revert-acls: only the containers of this workspace
  --json             print JSON
  -h, --help         show this help

Exit status: 0 on success, 1 when the state directory or journal cannot be read or a container's
ACEs could not be taken off (its journal record is kept for another try), 2 for usage errors.
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
    acls: [{ name: 'json', type: 'boolean' as const }],
    'revert-acls': [{ name: 'workspace', type: 'string' as const }, { name: 'json', type: 'boolean' as const }],
  }[sub];
  if (flags === undefined) throw new UsageError(`unknown state subcommand "${sub}" (list, prune, acls, revert-acls)`);
  const args = parseArgs(rest, { flags });
  if (args.help) {
    io.stdout(STATE_HELP);
    return 0;
  }
  if (sub === 'acls' || sub === 'revert-acls') return runAcls(sub, args, io);
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

/** `state acls` and `state revert-acls` (Windows; elsewhere there is nothing to list or revert). */
async function runAcls(sub: 'acls' | 'revert-acls', args: ParsedArgs, io: CliIo): Promise<number> {
  const json = flagBool(args, 'json');
  const workspace = flagString(args, 'workspace');
  if (workspace !== undefined && workspace.trim() === '') throw new UsageError('--workspace needs a directory');
  // process.platform: only the Windows backend sets ACEs (and keeps their journal).
  if (process.platform !== 'win32') {
    if (json) io.stdout(`${JSON.stringify(sub === 'acls' ? { platform: process.platform, journal: null, containers: [] } : { platform: process.platform, journal: null, reverted: [], failed: [], inUse: [] }, null, 2)}\n`);
    else io.stdout(`No ACEs to ${sub === 'acls' ? 'list' : 'revert'}: only the Windows backend sets them (this is ${process.platform}).\n`);
    return 0;
  }
  const { defaultAclJournalDir, readAclJournal } = await import('../backend/windows/acl-journal-store.js');
  if (sub === 'acls') {
    const journal = defaultAclJournalDir();
    const { records, propagating } = readAclJournal(journal);
    const containers = records.map((r) => ({ container: r.container, workspace: r.workspace, propagating: propagating.includes(r.container), entries: r.entries }));
    if (json) io.stdout(`${JSON.stringify({ platform: process.platform, journal, containers }, null, 2)}\n`);
    else if (containers.length === 0) io.stdout(`No container holds ACEs (journal ${journal}).\n`);
    else for (const c of containers) io.stdout(`${c.container}  ${c.workspace}  ${c.entries.length} path${c.entries.length === 1 ? '' : 's'}${c.propagating ? '  (a propagation was cut short)' : ''}\n`);
    return 0;
  }
  const { revertJournaledAcls } = await import('../backend/windows/acl-revert.js');
  const report = await revertJournaledAcls(workspace === undefined ? {} : { workspace });
  if (json) io.stdout(`${JSON.stringify({ platform: process.platform, ...report }, null, 2)}\n`);
  else {
    for (const r of report.reverted) io.stdout(`reverted ${r.container} (${r.workspace}): ${r.changed ?? 0} ACE${r.changed === 1 ? '' : 's'} on ${r.paths.length} path${r.paths.length === 1 ? '' : 's'}, profile deleted\n`);
    for (const r of report.inUse) io.stdout(`kept ${r.container} (${r.workspace}): a run of it is in flight in this process\n`);
    for (const r of report.failed) io.stderr(`zero-sandbox: could not revert ${r.container} (${r.workspace}): ${r.error?.message ?? 'unknown error'} [${r.error?.code ?? 'internal_error'}]; its journal record is kept\n`);
    if (report.reverted.length + report.failed.length + report.inUse.length === 0) io.stdout(`No container holds ACEs${workspace === undefined ? '' : ` for ${workspace}`} (journal ${report.journal}).\n`);
  }
  return report.failed.length === 0 ? 0 : 1;
}
