#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The zero-sandbox CLI. Subcommands load lazily so `run` stays cheap to start.
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { preferBaselineWebAssembly } from '../bash/parse.js';
import { closest } from '../did-you-mean.js';
import { EXIT, processIo, type CliIo } from './io.js';
import { runSubcommand, type Handler } from './subcommand.js';

export const MAIN_HELP = `Usage: zero-sandbox <command> [options]

A sandbox runtime for the shell commands coding agents run.

Commands:
  run        run one command inside the sandbox
  exec       run stream-json input as one shell script, through the engine and the sandbox
  analyze    show what a shell command runs and how risky it is
  check      show what the permission engine decides for a tool request
  policy     show the sandbox policy, backend and what this machine enforces
  grants     list, add, revoke or clear persistent sandbox grants
  doctor     measure which isolation layers this machine can enforce
  setup      the one-time setup a backend needs (none does; reports the backend)
  state      list or prune the managed per-workspace state (tool caches)
  recover    run the after-run checks that killed runs missed (what their commands planted)


Run 'zero-sandbox <command> --help' for the options of a command; --version prints the version.
`;

/** The package version, from the package.json above this file (dist/lib/cli or the dist/cli bundle). */
export function packageVersion(): string {
  let dir = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'zero-sandbox' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: look one directory up
    }
  }
  return 'unknown';
}

const COMMANDS: Record<string, () => Promise<Handler>> = {
  run: async () => (await import('./run.js')).runRun,
  exec: async () => (await import('./exec.js')).runExec,
  analyze: async () => (await import('./analyze.js')).runAnalyze,
  doctor: async () => (await import('./doctor.js')).runDoctor,
  setup: async () => (await import('./setup.js')).runSetup,
  check: async () => (await import('./check.js')).runCheck,
  policy: async () => (await import('./policy.js')).runPolicy,
  grants: async () => (await import('./grants.js')).runGrants,
  state: async () => (await import('./state.js')).runState,
  recover: async () => (await import('./recover.js')).runRecover,
};

/** Runs the CLI with the given arguments and returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.stdout(MAIN_HELP);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    io.stdout(`zero-sandbox ${packageVersion()}\n`);
    return EXIT.ok;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) {
    const hint = closest(command.replace(/^-+/, ''), [...Object.keys(COMMANDS), 'help', 'version']);
    io.stderr(`zero-sandbox: unknown command "${command}"${hint === undefined ? '' : ` (did you mean "${hint}"?)`}\nRun 'zero-sandbox --help' for the list of commands.\n`);
    return EXIT.usage;
  }
  return runSubcommand(command, load, rest, io);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
// No top-level await: the shipped CLI is bundled as CommonJS (scripts/bundle-cli.mjs).
if (invokedDirectly) {
  // A command-line run must not spend seconds of CPU optimizing the shell parser it uses once.
  preferBaselineWebAssembly();
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
