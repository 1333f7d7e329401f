// SPDX-License-Identifier: MIT
// `zero-sandbox grants list|allow|deny|revoke|clear`: the persistent grants file.
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import { loadAnalyzer } from '../policy/engine/analyzer.js';
import { GrantStore, resolveGrantsPath } from '../policy/grants/grants-store.js';
import { formatGrantList } from '../policy/output/report.js';
import { realAsFarAsExists } from '../sandbox/host-handover.js';
import { flagBool, flagString, parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';

export const GRANTS_HELP = `Usage: zero-sandbox grants list [--json]
       zero-sandbox grants allow|deny <tool> [--path P] [--reason T] [--json]
       zero-sandbox grants revoke <tool> [--path P] [--json]
       zero-sandbox grants clear --confirm [--json]

Manages persistent sandbox grants in $ZERO_SANDBOX_GRANTS_PATH, else
$XDG_CONFIG_HOME/zero/sandbox-grants.json, else ~/.config/zero/sandbox-grants.json.
What each entry covers (every covered command still runs inside the sandbox):
  allow <tool>           every request of that tool that needs no risk approval. For a shell
                         tool (bash) that is an ordinary command when no native sandbox is
                         active (with one, those run without asking anyway); it never covers a
                         network or destructive command, nor running outside the sandbox.
  allow <tool> --path P  requests of that tool on P (a file), or on P and everything below it
                         (a directory). Answering "always" to a prompt about a path outside the
                         workspace stores one on that path's directory for the tool that asked.
  deny <tool> [--path P] refuses those requests without asking (a deny wins over allows).
  command prefixes       (stored by answering "always" to an ordinary shell prompt) commands
                         whose words start with the prefix, e.g. \`cargo build\`; never a network
                         or destructive command.
  exact commands         (stored by answering "always" to a network or destructive prompt) that
                         command text exactly, with at most the risks listed; network ones run
                         with network allowed for that call only.
"Session" answers record the same for the running process only; "once" records nothing.
Writes are atomic and locked against other processes. A grants file that cannot be read is
never rewritten: fix or remove it by hand. revoke <tool> removes all three kinds for the tool.

Options:
  --path P     scope the grant to P: a directory covers what lies below it, anything else
               (a file, a path that does not exist) that path alone
  --reason T   why (stored, secrets redacted)
  --confirm    required by clear
  --json       print JSON
  -h, --help   show this help

Exit status: 0 on success, 1 when the grants file is unusable or locked, 2 for usage errors.
`;

/**
 * The scope `--path` names: the real path and its kind. A path that does not exist (yet, or any
 * more: a grant on a file since deleted must stay revocable) is a file scope, with its deepest
 * existing ancestor resolved, as the engine resolves a request's path.
 */
function grantTarget(raw: string | undefined): { path: string; kind: 'file' | 'dir' } | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '') throw new UsageError('--path requires a non-empty file path');
  let real: string;
  try {
    real = realpathSync(raw);
  } catch {
    return { path: realAsFarAsExists(resolve(raw)), kind: 'file' };
  }
  return { path: real, kind: statSync(real).isDirectory() ? 'dir' : 'file' };
}

function oneTool(positionals: string[], sub: string): string {
  if (positionals.length !== 1) throw new UsageError(`grants ${sub} takes exactly one tool name: zero-sandbox grants ${sub} <tool>`);
  const tool = (positionals[0] as string).trim();
  if (!/^[A-Za-z0-9._-]+$/.test(tool)) throw new UsageError(`invalid tool name "${tool}" (letters, digits, ".", "_" and "-" only)`);
  return tool;
}

export async function runGrants(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(GRANTS_HELP);
    return sub === undefined ? 2 : 0;
  }
  const flags = {
    list: [{ name: 'json', type: 'boolean' as const }],
    allow: [{ name: 'path', type: 'string' as const }, { name: 'reason', type: 'string' as const }, { name: 'json', type: 'boolean' as const }],
    deny: [{ name: 'path', type: 'string' as const }, { name: 'reason', type: 'string' as const }, { name: 'json', type: 'boolean' as const }],
    revoke: [{ name: 'path', type: 'string' as const }, { name: 'json', type: 'boolean' as const }],
    clear: [{ name: 'confirm', type: 'boolean' as const }, { name: 'json', type: 'boolean' as const }],
  }[sub];
  if (flags === undefined) throw new UsageError(`unknown grants subcommand "${sub}" (list, allow, deny, revoke, clear)`);
  const args = parseArgs(rest, { flags, maxPositionals: sub === 'list' || sub === 'clear' ? 0 : 1 });
  if (args.help) {
    io.stdout(GRANTS_HELP);
    return 0;
  }
  const json = flagBool(args, 'json');
  const out = (value: unknown, text: string) => io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
  const tool = sub === 'list' || sub === 'clear' ? '' : oneTool(args.positionals, sub);
  if (sub === 'clear' && !flagBool(args, 'confirm')) throw new UsageError('zero-sandbox grants clear requires --confirm');
  const target = sub === 'list' || sub === 'clear' ? undefined : grantTarget(flagString(args, 'path'));
  const analyzer = await loadAnalyzer();
  const store = new GrantStore(resolveGrantsPath(), { validatePrefix: analyzer.validateCommandPrefix });
  try {
    const notice = store.consumeMigrationNotice();
    if (notice !== undefined) io.stderr(`${notice}\n`);
  } catch (error) {
    if (!(error instanceof SandboxError)) throw error;
  }
  switch (sub) {
    case 'list': {
      const grants = store.list();
      const prefixes = store.listCommandPrefixes();
      const approved = store.listApprovedCommands();
      const value: Record<string, unknown> = { grants };
      if (prefixes.length > 0) value.commandPrefixes = prefixes;
      if (approved.length > 0) value.approvedCommands = approved;
      io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : formatGrantList(grants, prefixes, approved));
      return 0;
    }
    case 'allow':
    case 'deny': {
      const reason = flagString(args, 'reason');
      const grant = store.grant({
        toolName: tool,
        decision: sub,
        ...(target === undefined ? {} : { scope: target.path, scopeKind: target.kind }),
        ...(reason === undefined ? {} : { reason }),
      });
      out({ grant }, `Sandbox grant saved: ${tool} [${sub}]${target === undefined ? '' : ` (${target.path})`}`);
      return 0;
    }
    case 'revoke': {
      const revoked = target === undefined ? store.revoke(tool) : store.revokePath(tool, target.path);
      out({ revoked }, `Sandbox grants revoked: ${revoked}`);
      return 0;
    }
    default: {
      const cleared = store.clear();
      out({ cleared }, `Sandbox grants cleared: ${cleared}`);
      return 0;
    }
  }
}
