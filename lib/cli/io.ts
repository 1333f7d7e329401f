// SPDX-License-Identifier: MIT
// The output sink every subcommand writes through, so tests can capture it without a process.

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processIo: CliIo = {
  stdout: (text) => {
    process.stdout.write(text);
  },
  stderr: (text) => {
    process.stderr.write(text);
  },
};

/** Exit codes shared by every subcommand. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  config: 3,
} as const;

let parserWarned = false;

/**
 * Warns, once per process, that the shell parser could not be loaded: every shell command it would
 * have analyzed is then treated as unanalyzable and needs approval (headless: denied).
 */
export function warnParserFailure(io: CliIo, command: string, reason: string): void {
  if (parserWarned) return;
  parserWarned = true;
  io.stderr(
    `zero-sandbox ${command}: warning: the shell command analyzer is unavailable (${reason}); ` +
      'shell commands it cannot read need approval. `zero-sandbox doctor` shows the fix.\n',
  );
}
