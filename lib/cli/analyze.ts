// SPDX-License-Identifier: MIT
// `zero-sandbox analyze [--json] [--platform P] -- 'COMMAND'`: the analysis and risk of a shell command.
import { classifyCommand } from '../bash/classify.js';
import { detectInteractiveCommand } from '../bash/interactive.js';
import { classifyRisk } from '../bash/risk.js';
import { prepareShellParser } from '../bash/analyze.js';
import { warnParserFailure } from './io.js';
import { flagBool, flagString, parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';

/** The help text of `zero-sandbox analyze`. */
export const ANALYZE_HELP = `Usage: zero-sandbox analyze [--json] [--platform linux|darwin|win32] -- 'COMMAND STRING'
       echo 'COMMAND STRING' | zero-sandbox analyze [--json]

Parses a shell command (tree-sitter-bash, compiled to WebAssembly) and prints every simple command it runs
(through wrappers such as sudo/env/timeout and launchers such as bash -c, find -exec,
xargs, pwsh -Command, cmd /c), whether it uses the network, destroys data, needs a
terminal or is too complex to analyze, and the risk of running it as a bash tool call.

Without '--' the command is read from standard input.

Options:
  --json                 print the analysis and risk as JSON
  --platform <platform>  linux, darwin or win32 (default: this machine); changes the
                         interactive-program suggestions and Windows-only programs
  -h, --help             show this help

Exit status: 0 when the command was analyzed, 2 for usage errors.
`;

const PLATFORMS = new Set(['linux', 'darwin', 'win32']);

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new UsageError("give the command after '--' or on standard input");
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Runs `zero-sandbox analyze` and returns the exit code (usage errors are thrown as UsageError). */
export async function runAnalyze(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, {
    flags: [
      { name: 'json', type: 'boolean' },
      { name: 'platform', type: 'string' },
    ],
    acceptsRest: true,
  });
  if (args.help) {
    io.stdout(ANALYZE_HELP);
    return 0;
  }
  const platformFlag = flagString(args, 'platform');
  if (platformFlag !== undefined && !PLATFORMS.has(platformFlag)) {
    throw new UsageError(`--platform must be linux, darwin or win32, not "${platformFlag}"`);
  }
  // process.platform default: analysis follows the host OS's shell unless --platform says otherwise.
  const platform = (platformFlag ?? process.platform) as NodeJS.Platform;
  let command: string;
  if (args.rest !== undefined) {
    if (args.rest.length === 0) throw new UsageError("no command after '--'");
    command = args.rest.join(' ');
  } else {
    command = await readStdin();
  }
  if (command.trim() === '') throw new UsageError('the command is empty');
  const parser = await prepareShellParser(command);
  if (parser.state === 'failed') warnParserFailure(io, 'analyze', parser.reason);
  const classification = classifyCommand(command, { platform });
  const risk = classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command } });
  const interactive = detectInteractiveCommand(command, { platform });
  const { analysis } = classification;
  if (flagBool(args, 'json')) {
    const output = { command, platform, analysis, risk, categoryReasons: classification.reasons, interactive };
    io.stdout(`${JSON.stringify(output, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  lines.push(`risk       ${risk.reason}`);
  for (const category of risk.categories) {
    const reason = classification.reasons[category];
    if (reason !== undefined) lines.push(`           ${category}: ${reason}`);
  }
  const flags = (['network', 'destructive', 'interactive', 'tooComplex'] as const).filter((flag) => analysis[flag]);
  lines.push(`flags      ${flags.length === 0 ? 'none' : flags.join(', ')}`);
  for (const flag of flags) lines.push(`           ${flag}: ${analysis.reasons[flag] ?? ''}`);
  if (interactive.interactive && interactive.suggestion !== undefined) lines.push(`suggestion ${interactive.suggestion}`);
  lines.push(`commands   ${analysis.commands.length === 0 ? 'none found' : ''}`.trimEnd());
  for (const found of analysis.commands) {
    const via = found.via.length === 0 ? '' : `   (via ${found.via.join(' > ')})`;
    lines.push(`  ${found.program.padEnd(12)} ${JSON.stringify(found.argv)}${via}`);
  }
  io.stdout(`${lines.join('\n')}\n`);
  return 0;
}
