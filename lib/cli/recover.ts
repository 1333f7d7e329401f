// SPDX-License-Identifier: MIT
// `zero-sandbox recover`: the after-run checks that runs whose process was killed never ran, run
// now without starting a command (the next run of an overlapping workspace runs them anyway).
import { finishInterruptedRuns } from '../sandbox/protected.js';
import { flagBool, parseArgs } from './args.js';
import type { CliIo } from './io.js';

export const RECOVER_HELP = `Usage: zero-sandbox recover [--json]

A sandboxed command may plant things at protected paths (a git config key that runs a program, a
hook, a new repository, .zero/.agents, an agent or editor config); the check after its run removes
or puts back what it planted. When the process running the sandbox (\`zero-sandbox run\`, a program
calling runSandboxed) is killed while the command runs, that check is missed: the next run of an
overlapping workspace runs it before it starts. This command runs every such check of this user
now (Linux; once the killed run's sandbox is gone) and prints what each removed or put back.

Options:
  --json      print JSON: [{ path, reason, interruptedRun }]
  -h, --help  show this help

Exit status: 0 (also when something was removed or put back), 1 when the shared notes of runs
cannot be read, 2 for usage errors.
`;

export async function runRecover(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: [{ name: 'json', type: 'boolean' as const }] });
  if (args.help) {
    io.stdout(RECOVER_HELP);
    return 0;
  }
  const repairs = finishInterruptedRuns();
  if (flagBool(args, 'json')) io.stdout(`${JSON.stringify(repairs, null, 2)}\n`);
  else if (repairs.length === 0) io.stdout('No run was killed before its after-run check.\n');
  else for (const { path, reason, interruptedRun } of repairs) io.stdout(`${path}: ${reason} (a run of ${interruptedRun.join(', ')})\n`);
  return 0;
}
