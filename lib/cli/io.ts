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
