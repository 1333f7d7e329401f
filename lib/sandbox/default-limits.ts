// SPDX-License-Identifier: MIT
// The resource caps every Linux run gets unless the caller sets its own: the private /tmp and
// /dev/shm are RAM-backed and charged to no process (an unbounded one lets a command fill memory
// until the OOM killer takes host processes), and an unbounded number of processes lets a fork
// bomb starve the host. The defaults sit well above what builds need (npm install, make -j,
// cargo build) and well below what hurts the host.
import { totalmem } from 'node:os';

import type { ResourceLimits } from '../backend/types.js';

const MIB = 1024 * 1024;

/** The private /tmp: 1 GiB, or a quarter of the machine's memory when that is less. */
export const DEFAULT_TMP_BYTES = Math.min(1024 * MIB, Math.floor(totalmem() / 4 / MIB) * MIB);
/** The private /dev/shm: 256 MiB, or a sixteenth of the machine's memory when that is less. */
export const DEFAULT_SHM_BYTES = Math.min(256 * MIB, Math.floor(totalmem() / 16 / MIB) * MIB);
/** Processes and threads in one sandbox (a parallel build uses a few hundred). */
export const DEFAULT_PROCESSES = 4096;

/** The limits a Linux run enforces: the caller's, with the defaults for the caps it left out. */
export function buildLinuxLimits(limits: ResourceLimits): ResourceLimits & { tmpBytes: number; shmBytes: number; processes: number } {
  return {
    ...limits,
    tmpBytes: limits.tmpBytes ?? DEFAULT_TMP_BYTES,
    shmBytes: limits.shmBytes ?? DEFAULT_SHM_BYTES,
    processes: limits.processes ?? DEFAULT_PROCESSES,
  };
}
