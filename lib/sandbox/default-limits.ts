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

/** The caps the caller gave over the config's: an explicit option or flag stands. */
export function mergeLimits(config: ResourceLimits | undefined, given: { [K in keyof ResourceLimits]?: number | undefined } | undefined): ResourceLimits {
  const set = (limits: { [K in keyof ResourceLimits]?: number | undefined } | undefined) => Object.entries(limits ?? {}).filter(([, value]) => value !== undefined);
  return Object.fromEntries([...set(config), ...set(given)]) as ResourceLimits;
}

/** Where an effective cap comes from (`caller`: the caller's own hard limit, lower than asked). */
export type LimitSource = 'default' | 'config' | 'flag' | 'caller';

/** The Linux RLIMIT_* number of each cap that is an rlimit (the same on x86_64 and aarch64). */
export const LIMIT_RLIMITS = { cpuSeconds: 0, fileSizeBytes: 1, memoryBytes: 2, processes: 6, openFiles: 7 } as const;

/**
 * The caps lowered to the caller's hard limits (`hardOf`, by RLIMIT_* number) where an rlimit
 * enforces them, as the spawn does (buildRlimits), with `caller` as their source; `processes`
 * only when an rlimit is what enforces it (an ordinary caller's).
 */
export function underHardLimits(
  limits: ResourceLimits,
  sources: Partial<Record<keyof ResourceLimits, LimitSource>>,
  hardOf: (resource: number) => number,
  processesByRlimit: boolean,
): void {
  for (const [key, resource] of Object.entries(LIMIT_RLIMITS) as Array<[keyof typeof LIMIT_RLIMITS, number]>) {
    const value = limits[key];
    if (value === undefined || (key === 'processes' && !processesByRlimit)) continue;
    const hard = hardOf(resource);
    if (value <= hard) continue;
    limits[key] = hard;
    sources[key] = 'caller';
  }
}

/**
 * The caps a run would get here (defaults on Linux, then the config, then options or flags), with
 * where each came from: what `policy` reports. Other platforms have no default caps.
 */
export function effectiveLimits(
  config: ResourceLimits | undefined,
  given: ResourceLimits | undefined,
  // process.platform default: only the Linux backend has default caps (cgroup and rlimits).
  platform: NodeJS.Platform = process.platform,
): { limits: ResourceLimits; sources: Partial<Record<keyof ResourceLimits, LimitSource>> } {
  const merged = mergeLimits(config, given);
  const limits = platform === 'linux' ? buildLinuxLimits(merged) : merged;
  const sources: Partial<Record<keyof ResourceLimits, LimitSource>> = {};
  for (const key of Object.keys(limits) as Array<keyof ResourceLimits>) {
    sources[key] = given?.[key] !== undefined ? 'flag' : config?.[key] !== undefined ? 'config' : 'default';
  }
  return { limits, sources };
}
