// SPDX-License-Identifier: MIT
// `zero-sandbox exec`: stream-json input combined into one shell script, decided by the engine, run sandboxed.
import { UsageError, flagString, parseArgs, parseTimeout } from './args.js';
import type { CliIo } from './io.js';

export const EXEC_HELP = `Usage: zero-sandbox exec --input-format stream-json [--file F] [--output-format FORMAT] [options]

Reads stream-json (schema version 2) input events from standard input or --file: one JSON
object per line, {"schemaVersion":2,"type":"message","role":"user","content":"..."} or
{"schemaVersion":2,"type":"prompt","content":"..."}; empty lines are ignored. The content of
the events is combined in order (blank line between) into one shell script, which the
permission engine evaluates as a bash call and which then runs inside the sandbox. Any bad
line (not JSON, unknown field or type, schemaVersion other than 2) rejects the whole input:
nothing runs.

Options:
  --input-format stream-json      input protocol (required)
  --file F                        read the input events from F instead of standard input
  --output-format FORMAT          stream-json (JSONL events), json (one document at the end) or
                                  text (default: the command's output, permissions on stderr)
  --workspace DIR                 writable workspace root (default: the current directory)
  --timeout SECONDS               kill the sandbox after SECONDS
  -h, --help                      show this help

Every output line is redacted (secret-named keys, sk-..., api_key=..., Bearer ...).
Headless: a call the engine would prompt for is not run (permission_request, then a denied
tool_result).

Exit status (also run_end.exitCode): the command's; 1 when the permission flow stopped the
command (run_end.status "denied"; it never ran); 2 for malformed input or usage errors (nothing
ran); 3 for an invalid config file; 124 on timeout; 125 when the sandbox could not be set up
(nothing ran); 130 when interrupted.
`;

const FLAGS = [
  { name: 'input-format', type: 'string' as const },
  { name: 'output-format', type: 'string' as const },
  { name: 'file', type: 'string' as const },
  { name: 'workspace', type: 'string' as const },
  { name: 'timeout', type: 'string' as const },
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

export async function runExec(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: FLAGS });
  if (args.help) {
    io.stdout(EXEC_HELP);
    return 0;
  }
  const input = flagString(args, 'input-format');
  if (input === undefined) throw new UsageError('--input-format stream-json is required');
  if (input !== 'stream-json') throw new UsageError(`--input-format must be stream-json, not "${input}"`);
  const format = flagString(args, 'output-format') ?? 'text';
  if (format !== 'stream-json' && format !== 'json' && format !== 'text') {
    throw new UsageError(`--output-format must be stream-json, json or text, not "${format}"`);
  }
  const timeoutMs = parseTimeout(flagString(args, 'timeout'));
  const file = flagString(args, 'file');
  const workspace = flagString(args, 'workspace');
  const { runExecStream } = await import('../stream-json/headless.js');
  return runExecStream({
    format,
    io,
    readStdin,
    ...(file === undefined ? {} : { file }),
    ...(workspace === undefined ? {} : { workspace }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}
