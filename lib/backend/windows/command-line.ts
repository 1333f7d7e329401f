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

/**
 * The command line for a batch file (.cmd, .bat). Windows runs a batch file through cmd.exe,
 * which re-parses the whole line with its own rules: `&`, `|`, `<`, `>`, `^` and parentheses in
 * an argument would start another command unless quoted, and `%` expands a variable (and `"`
 * toggles quoting) even inside quotes. So the batch file is run explicitly as
 * `cmd.exe /d /s /c ""prog" args"`; each argument holding a space or one of those operators is
 * quoted, and an argument holding `"`, `%`, `!`, CR or LF (which no quoting makes literal to
 * cmd.exe) is refused with invalid_argument instead of being passed on as another command.
 */
export function buildBatchCommandLine(cmdExe: string, argv: readonly string[]): string {
  const [program, ...args] = argv;
  if (program === undefined || program === '') {
    throw new SandboxError('invalid_argument', 'windows command line: argv[0] (the program) is empty');
  }
  const unsafe = /["%!\r\n\0]/;
  if (unsafe.test(program)) {
    throw new SandboxError('invalid_argument', `windows command line: the batch file path ${JSON.stringify(program)} holds a character cmd.exe would interpret (" % ! CR LF)`);
  }
  const quoted = args.map((arg, i) => {
    if (unsafe.test(arg)) {
      throw new SandboxError('invalid_argument', `windows command line: argument ${i + 1} ${JSON.stringify(arg)} of batch file ${program} holds a character cmd.exe would interpret even inside quotes (" % ! CR LF); run the program the batch file wraps instead`);
    }
    return arg === '' || /[ \t&|<>^(),;=]/.test(arg) ? `"${arg}"` : arg;
  });
  return `${buildWindowsCommandLine([cmdExe])} /d /s /c "${[`"${program}"`, ...quoted].join(' ')}"`;
}
