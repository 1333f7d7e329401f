// SPDX-License-Identifier: MIT
// One subcommand's run with the CLI's error mapping, shared by the full CLI (main.ts) and the
// `run` entry (run-main.ts), so both answer the same way for every outcome.
import { SandboxError } from '../errors.js';
import { UsageError } from './args.js';
import { EXIT, type CliIo } from './io.js';

export type Handler = (argv: string[], io: CliIo) => Promise<number>;

/** Loads and runs `command`'s handler; usage, sandbox and internal errors become exit codes. */
export async function runSubcommand(command: string, load: () => Promise<Handler>, argv: string[], io: CliIo): Promise<number> {
  try {
    const handler = await load();
    return await handler(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`zero-sandbox ${command}: ${error.message}\nRun 'zero-sandbox ${command} --help' for usage.\n`);
      return EXIT.usage;
    }
    if (error instanceof SandboxError) {
      io.stderr(`zero-sandbox ${command}: ${error.message} [${error.code}]\n`);
      // A refused argument (a path that is missing, reached through a symlink or that would hand
      // the host over, wherever it was given) is a usage error, as in `run`.
      return error.code === 'config_invalid' ? EXIT.config : error.code === 'invalid_argument' ? EXIT.usage : EXIT.failure;
    }
    io.stderr(`zero-sandbox ${command}: internal error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    return EXIT.failure;
  }
}
