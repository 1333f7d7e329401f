// SPDX-License-Identifier: MIT
// What this process holds, for the tests and benches that look for leaks: its open descriptors
// and its children that exited without being reaped.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The process's open descriptors as `number -> what it names` (a pipe, a socket, a file...). */
export function openDescriptors(): Map<string, string> {
  const open = new Map<string, string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      open.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // Closed between the listing and the read (the listing's own descriptor is one).
    }
  }
  return open;
}

/** Children of this process that exited and were never reaped: `pid (comm)` each. */
export function zombieChildren(): string[] {
  const zombies: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const end = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(end + 2).split(' ');
      if (state === 'Z' && Number(ppid) === process.pid) zombies.push(stat.slice(0, end + 1));
    } catch {
      // gone meanwhile
    }
  }
  return zombies;
}
