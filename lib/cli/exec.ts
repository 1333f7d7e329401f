// SPDX-License-Identifier: MIT
// `zero-sandbox exec`: a shell script (text, or stream-json input events combined into one),
// decided by the engine, run sandboxed. Takes the flags of stream-json's `exec` with their meaning.
import { UsageError, flagBool, flagList, flagString, parseArgs, parseTimeout, type FlagSpec } from './args.js';
import type { CliIo } from './io.js';
import type { ResourceLimits } from '../backend/types.js';
import { buildLimitsFromFlags, LIMIT_FLAG_DEFS, LIMIT_FLAGS_HELP } from './limit-flags.js';

export const EXEC_HELP = `Usage: zero-sandbox exec [options] [SCRIPT...]
       zero-sandbox exec -i stream-json [-f FILE] [-o stream-json] [options]

Runs one shell script (bash) inside the sandbox, after the permission engine has decided. The
script is SCRIPT (the words joined by spaces), --prompt TEXT or the text of --file (given both,
the text, a blank line, then the file); with
-i stream-json it is read from stream-json (schema version 2) input events on standard input or
--file: one JSON object per line, {"schemaVersion":2,"type":"message","role":"user","content":"..."}
or {"schemaVersion":2,"type":"prompt","content":"..."}, empty lines ignored, the content combined
in order with a blank line between. Any bad line (not JSON, unknown field or type, schemaVersion
other than 2) rejects the whole input: nothing runs. The script reaches the shell through a pipe,
not argv, so it may be as long as the input limit (16 MiB). When the script does not come from
standard input, the command reads the caller's standard input.

Options:
  -i, --input-format FORMAT     text (default) or stream-json
  -o, --output-format FORMAT    text (default: the output, permissions on stderr), json (snake_case
                                records, one per line, ending with {"type":"done",...}) or
                                stream-json (stream-json v2 events; "debug" is an alias)
  -f, --file F                  read the script (text) or the input events (stream-json) from F
                                (relative to the workspace)
  -p, --prompt TEXT             the script, as a flag (text input only; repeatable, joined by spaces)
  -C, --cwd DIR                 workspace directory (default: the current directory)
      --workspace DIR           the same as --cwd
      --add-dir DIR             also allow writes in DIR (repeatable; --allow-write is the same)
      --network deny|allow      network access (default: deny; allow answers the network prompt,
                                still sandboxed)
      --permission-mode MODE    auto (default), ask or unsafe; auto and ask decide alike here
                                (the sandbox is the boundary, risky requests prompt)
      --skip-permissions-unsafe the same as --permission-mode unsafe: prompts are approved (hard
                                denies still hold, and everything still runs sandboxed)
      --timeout SECONDS         kill the sandbox after SECONDS
      --max-output BYTES        bytes of each stream tool_result.output keeps (default 32768): past
                                it the head and tail, around a truncation marker. A stream-json
                                line carries at most 10 KiB of tool_result.output (then
                                "\\n[truncated]"); the json format carries all of it
      --keep-output             also keep all of the output in a new private file under the temp
                                dir; its path is tool_result.meta.spill_path
  -h, --help                    show this help

Resource caps (Linux; also the "limits" key of the sandbox config):
${LIMIT_FLAGS_HELP}
Flags about models, providers and agent loops (-m/--model, --provider, --max-turns, --mode,
--profile, -r/--reasoning-effort, --allow-escalation, ...) are accepted and reported as not
applicable (a "warning" event with code flag_not_applicable): there is no model here.

Every output line is redacted (secret-named keys, sk-..., api_key=..., Bearer ...).
Headless: a call the engine would prompt for is not run (permission_request, then an error
tool_result with meta.permission_action "prompt"; a denied one has "deny").

Exit status (also run_end.exitCode): the command's; 1 when the permission flow stopped the
command (it never ran) or standard output was closed; 2 for malformed input or usage errors (an
"error" event with code usage_error in the structured formats; nothing ran); 3 for an invalid
config file; 124 on timeout; 125 when the sandbox could not be set up (nothing ran); 130 when
interrupted (run_end status "interrupted").
`;

/** Flags that concern models, providers or agent loops: accepted, reported as not applicable. */
const NOT_APPLICABLE_VALUES = ['model', 'provider', 'max-turns', 'mode', 'profile', 'reasoning-effort', 'exec-profile', 'auto', 'spec-model', 'spec-reasoning-effort', 'enabled-tools', 'disabled-tools', 'tag', 'session-title', 'notify'];
const NOT_APPLICABLE_SWITCHES = ['allow-escalation', 'self-correct', 'no-notify', 'no-completion-gate', 'use-spec'];

const FLAGS: FlagSpec[] = [
  { name: 'input-format', short: 'i', type: 'string' },
  { name: 'output-format', short: 'o', type: 'string' },
  { name: 'file', short: 'f', type: 'string' },
  { name: 'prompt', short: 'p', type: 'list' },
  { name: 'cwd', short: 'C', type: 'string' },
  { name: 'workspace', type: 'string' },
  { name: 'add-dir', type: 'list' },
  { name: 'allow-write', type: 'list' },
  { name: 'network', type: 'string' },
  { name: 'permission-mode', type: 'string' },
  { name: 'skip-permissions-unsafe', type: 'boolean' },
  { name: 'timeout', type: 'string' },
  { name: 'max-output', type: 'string' },
  { name: 'keep-output', type: 'boolean' },
  ...LIMIT_FLAG_DEFS,
  ...NOT_APPLICABLE_VALUES.map((name): FlagSpec => ({ name, type: 'string', ...(name === 'model' ? { short: 'm' } : name === 'reasoning-effort' ? { short: 'r' } : {}) })),
  ...NOT_APPLICABLE_SWITCHES.map((name): FlagSpec => ({ name, type: 'boolean' })),
];

/** Reads standard input to the end as UTF-8; undefined once more than `maxBytes` arrived. */
async function readStdin(maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The output format asked for, read before the arguments are parsed, so usage errors use it. */
function requestedFormat(argv: readonly string[]): 'stream-json' | 'json' | 'text' {
  let format: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg === '-o' || arg === '--output-format') format = argv[++i];
    else if (arg.startsWith('--output-format=')) format = arg.slice('--output-format='.length);
    else if (arg.startsWith('-o=')) format = arg.slice(3);
  }
  if (format === 'stream-json' || format === 'debug') return 'stream-json';
  return format === 'json' ? 'json' : 'text';
}

/** What runExec hands to the headless flow. */
interface ParsedExec {
  input: 'text' | 'stream-json';
  format: 'stream-json' | 'json' | 'text';
  script?: string;
  file?: string;
  workspace?: string;
  workspaceFlag?: string;
  timeoutMs?: number;
  maxOutputBytes?: number;
  network?: 'deny' | 'allow';
  addDirs: string[];
  keepOutput: boolean;
  /** The --limit-* flags given (absent ones leave config and defaults). */
  limits: ResourceLimits;
  permissionMode?: 'auto' | 'ask' | 'unsafe';
  warnings: Array<{ code: string; message: string }>;
}

function parseExec(argv: string[]): ParsedExec | 'help' {
  const args = parseArgs(argv, { flags: FLAGS, acceptsRest: true, maxPositionals: Number.MAX_SAFE_INTEGER });
  if (args.help) return 'help';
  const input = flagString(args, 'input-format') ?? 'text';
  if (input !== 'stream-json' && input !== 'text') throw new UsageError(`--input-format must be text or stream-json, not "${input}"`);
  const rawFormat = flagString(args, 'output-format') ?? 'text';
  if (!['stream-json', 'debug', 'json', 'text'].includes(rawFormat)) throw new UsageError(`--output-format must be text, json or stream-json, not "${rawFormat}"`);
  const format = rawFormat === 'debug' ? 'stream-json' : (rawFormat as ParsedExec['format']);
  const words = [...flagList(args, 'prompt'), ...args.positionals, ...(args.rest ?? [])];
  const file = flagString(args, 'file');
  const cwd = flagString(args, 'cwd');
  const workspace = flagString(args, 'workspace');
  if (cwd !== undefined && workspace !== undefined && cwd !== workspace) throw new UsageError('give either -C/--cwd or --workspace, not both');
  const parsed: ParsedExec = { input, format, addDirs: [...flagList(args, 'add-dir'), ...flagList(args, 'allow-write')], keepOutput: flagBool(args, 'keep-output'), limits: buildLimitsFromFlags(args), warnings: [] };
  const network = flagString(args, 'network');
  if (network !== undefined && network !== 'deny' && network !== 'allow') throw new UsageError(`--network must be deny or allow, not "${network}"`);
  if (network !== undefined) parsed.network = network;
  if (input === 'stream-json' && words.join(' ').trim() !== '') {
    throw new UsageError('stream-json input does not accept script text as arguments or --prompt: send it as input events on standard input or with --file');
  }
  if (input === 'text') {
    if (words.length > 0) parsed.script = words.join(' ');
    else if (file === undefined) throw new UsageError('a script is required: zero-sandbox exec "SCRIPT", --prompt SCRIPT, --file F, or -i stream-json with input events');
  }
  if (file !== undefined) parsed.file = file;
  if (cwd !== undefined || workspace !== undefined) {
    parsed.workspace = (cwd ?? workspace) as string;
    parsed.workspaceFlag = cwd !== undefined ? '--cwd' : '--workspace';
  }
  const timeoutMs = parseTimeout(flagString(args, 'timeout'));
  if (timeoutMs !== undefined) parsed.timeoutMs = timeoutMs;
  const maxOutput = flagString(args, 'max-output');
  if (maxOutput !== undefined) {
    const bytes = Number(maxOutput);
    if (!Number.isSafeInteger(bytes) || bytes < 256) throw new UsageError(`--max-output must be a whole number of bytes, at least 256, not "${maxOutput}"`);
    parsed.maxOutputBytes = bytes;
  }
  const mode = flagString(args, 'permission-mode');
  if (mode !== undefined && mode !== 'ask' && mode !== 'auto' && mode !== 'unsafe') {
    throw new UsageError(`--permission-mode must be ask, auto or unsafe, not "${mode}" (a sandbox runtime has no plan or member modes)`);
  }
  const skip = flagBool(args, 'skip-permissions-unsafe');
  if (skip && mode !== undefined && mode !== 'unsafe') throw new UsageError(`--skip-permissions-unsafe contradicts --permission-mode ${mode}`);
  // Headless runs default to auto, as Zero's exec does (clients read it in the events).
  parsed.permissionMode = skip ? 'unsafe' : (mode ?? 'auto');
  if (parsed.permissionMode === 'unsafe') {
    const flag = skip ? '--skip-permissions-unsafe' : '--permission-mode unsafe';
    parsed.warnings.push({ code: 'unsafe_permissions', message: `Unsafe permissions are active for this run because ${flag} was passed: prompts are approved (hard denies still hold, and the command still runs sandboxed).` });
  }
  for (const name of NOT_APPLICABLE_VALUES) {
    const value = flagString(args, name);
    if (value !== undefined) parsed.warnings.push(notApplicable(`--${name} ${value}`));
  }
  for (const name of NOT_APPLICABLE_SWITCHES) if (flagBool(args, name)) parsed.warnings.push(notApplicable(`--${name}`));
  return parsed;
}

function notApplicable(flag: string): { code: string; message: string } {
  return { code: 'flag_not_applicable', message: `${flag} does not apply: zero-sandbox exec runs shell scripts in a sandbox; there is no model, provider or agent loop (ignored)` };
}

export async function runExec(argv: string[], io: CliIo): Promise<number> {
  let parsed: ParsedExec | 'help';
  try {
    parsed = parseExec(argv);
  } catch (error) {
    const format = requestedFormat(argv);
    if (!(error instanceof UsageError) || format === 'text') throw error;
    // Structured output: a usage error is an `error` event (code usage_error) and the end of the run.
    const { reportUsageError } = await import('../stream-json/headless.js');
    return reportUsageError(format, io, error.message);
  }
  if (parsed === 'help') {
    io.stdout(EXEC_HELP);
    return 0;
  }
  const { runExecStream } = await import('../stream-json/headless.js');
  return runExecStream({
    format: parsed.format,
    input: parsed.input,
    io,
    readStdin,
    addDirs: parsed.addDirs,
    keepOutput: parsed.keepOutput,
    limits: parsed.limits,
    warnings: parsed.warnings,
    ...(parsed.script === undefined ? {} : { script: parsed.script }),
    ...(parsed.file === undefined ? {} : { file: parsed.file }),
    ...(parsed.workspace === undefined ? {} : { workspace: parsed.workspace, workspaceFlag: parsed.workspaceFlag }),
    ...(parsed.timeoutMs === undefined ? {} : { timeoutMs: parsed.timeoutMs }),
    ...(parsed.maxOutputBytes === undefined ? {} : { maxOutputBytes: parsed.maxOutputBytes }),
    ...(parsed.network === undefined ? {} : { network: parsed.network }),
    ...(parsed.permissionMode === undefined ? {} : { permissionMode: parsed.permissionMode }),
  });
}
