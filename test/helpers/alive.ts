// SPDX-License-Identifier: MIT
// Whether a process still runs, for tests that check nothing of a run outlived it.
import { existsSync, readFileSync } from 'node:fs';

/** True while `pid` runs; a zombie (killed, not yet reaped) counts as gone. */
export function alive(pid: number): boolean {
  if (process.platform === 'linux') {
    if (!existsSync(`/proc/${pid}/stat`)) return false;
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
