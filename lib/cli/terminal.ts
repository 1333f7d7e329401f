// SPDX-License-Identifier: MIT
// Whether a standard stream is a terminal, without creating process.stdin/stderr unless it may be one.
import { fstatSync, statSync } from 'node:fs';

/**
 * `process.stdin.isTTY` (fd 0) or `process.stderr.isTTY` (fd 2), answered without touching those
 * streams when the descriptor cannot be a terminal: not a character device, or /dev/null (the
 * usual stdin of agents and CI). Creating the stream objects loads node:net and node:stream,
 * ~2 ms of every `zero-sandbox run`. When in doubt, the stream itself answers.
 */
export function isTerminal(fd: 0 | 2): boolean {
  try {
    const stats = fstatSync(fd);
    if (!stats.isCharacterDevice()) return false;
    const devNull = statSync('/dev/null');
    if (devNull.isCharacterDevice() && devNull.rdev === stats.rdev) return false;
  } catch {
    // fall through to the stream's own answer
  }
  return (fd === 0 ? process.stdin : process.stderr).isTTY === true;
}
