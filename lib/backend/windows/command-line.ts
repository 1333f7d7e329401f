// SPDX-License-Identifier: MIT
// Pure builder: argv → one Windows command line that CommandLineToArgvW and the MSVC runtime
// split back into exactly the same argv.
import { SandboxError } from '../../errors.js';

/**
 * Quotes one argument after argv[0]. An argument needs quotes when it is empty or holds a space,
 * tab, newline, vertical tab or double quote. Inside quotes, a run of backslashes is literal
 * unless a double quote follows it: then each backslash is doubled and the quote escaped; a run
 * of backslashes at the end is doubled so that it does not escape the closing quote.
 */
export function buildWindowsArgument(arg: string): string {
  if (arg.includes('\0')) {
    throw new SandboxError('invalid_argument', `windows command line: argument ${JSON.stringify(arg)} contains a NUL character`);
  }
  if (arg !== '' && !/[ \t\n\v"]/.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes++;
      continue;
    }
    if (ch === '"') {
      out += '\\'.repeat(backslashes * 2 + 1) + '"';
    } else {
      out += '\\'.repeat(backslashes) + ch;
    }
    backslashes = 0;
  }
  return `${out}${'\\'.repeat(backslashes * 2)}"`;
}

/**
 * Builds the full command line. argv[0] follows the program-name rule instead: it ends at the
 * first space unless quoted, and backslashes are never escapes there, so it may not contain a
 * double quote (no quoting can carry one through).
 */
export function buildWindowsCommandLine(argv: readonly string[]): string {
  const [program, ...args] = argv;
  if (program === undefined || program === '') {
    throw new SandboxError('invalid_argument', 'windows command line: argv[0] (the program) is empty');
  }
  if (program.includes('"') || program.includes('\0')) {
    throw new SandboxError('invalid_argument', `windows command line: argv[0] ${JSON.stringify(program)} contains a double quote or NUL, which no Windows command line can carry`);
  }
  const head = /[ \t]/.test(program) ? `"${program}"` : program;
  return [head, ...args.map(buildWindowsArgument)].join(' ');
}
