// SPDX-License-Identifier: MIT
// The entry of the shipped CLI's `run` bundle (scripts/bundle-cli.mjs): the bin runs this one for
// `zero-sandbox run ...` and the full CLI (main.ts) for everything else, so the most frequent start
// reads, compiles and caches only what a run can reach. Same answers as `main(['run', ...])`.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { preferBaselineWebAssembly } from '../bash/parse.js';
import { processIo, type CliIo } from './io.js';
import { runRun } from './run.js';
import { declareOneRun } from '../sandbox/one-run.js';
import { runSubcommand } from './subcommand.js';

/** Runs `zero-sandbox run` with the arguments after `run` and returns the exit code. */
export function mainRun(argv: string[], io: CliIo = processIo): Promise<number> {
  return runSubcommand('run', async () => runRun, argv, io);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly && process.argv[2] === 'run') {
  // A command-line run must not spend seconds of CPU optimizing the shell parser it uses once.
  preferBaselineWebAssembly();
  // This process runs one command and exits: nothing is kept for a later run (one-run.ts).
  declareOneRun();
  void mainRun(process.argv.slice(3)).then((code) => {
    process.exitCode = code;
  });
}
