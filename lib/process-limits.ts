// SPDX-License-Identifier: MIT
// This process's resource limits as Linux lists them in /proc/self/limits, read once: the soft
// open-file limit sizes how many runs may be in flight (sandbox/run-admission.ts), and the hard
// limits bound the caps a sandbox is given (an unprivileged process, as the sandbox's first one is
// in its own user namespace, cannot raise a hard limit: asking for more failed the whole start).
// Also the user's namespace count limits, which tell a count reached from namespaces switched off.
import { readFileSync } from 'node:fs';

/** A limit's soft and hard values; `Infinity` for unlimited. */
export interface LimitPair {
  soft: number;
  hard: number;
}

/** The limits' names in /proc/self/limits by RLIMIT_* number (the same on x86_64 and aarch64). */
export const LIMIT_NAMES: Readonly<Record<number, string>> = { 0: 'Max cpu time', 1: 'Max file size', 2: 'Max data size', 6: 'Max processes', 7: 'Max open files' };

function value(text: string | undefined): number {
  if (text === 'unlimited') return Number.POSITIVE_INFINITY;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : Number.NaN;
}

/**
 * The limits of /proc/self/limits by name ("Max open files  1024  4096  files"); a line whose
 * values are not numbers or `unlimited` is left out.
 */
export function parseLimits(text: string): Map<string, LimitPair> {
  const out = new Map<string, LimitPair>();
  for (const line of text.split('\n')) {
    const match = /^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)/.exec(line);
    if (match === null) continue;
    const soft = value(match[2]);
    const hard = value(match[3]);
    if (!Number.isNaN(soft) && !Number.isNaN(hard)) out.set(match[1] as string, { soft, hard });
  }
  return out;
}

let own: Map<string, LimitPair> | undefined;

/** This process's limits, read at the first call (empty where /proc/self/limits cannot be read). */
export function processLimits(): ReadonlyMap<string, LimitPair> {
  if (own === undefined) {
    try {
      own = parseLimits(readLimitsText());
    } catch {
      own = new Map();
    }
  }
  return own;
}

function readLimitsText(): string {
  if (process.platform !== 'linux') return '';
  return readFileSync('/proc/self/limits', 'latin1');
}

/** The limits of an RLIMIT_* number for this process, or undefined when they are unknown. */
function limitOf(resource: number): LimitPair | undefined {
  const name = LIMIT_NAMES[resource];
  return name === undefined ? undefined : processLimits().get(name);
}

/** The hard limit of an RLIMIT_* number for this process, `Infinity` when unlimited or unknown. */
export function hardLimit(resource: number): number {
  return limitOf(resource)?.hard ?? Number.POSITIVE_INFINITY;
}

/** The soft limit of an RLIMIT_* number for this process, `Infinity` when unlimited or unknown. */
export function softLimit(resource: number): number {
  return limitOf(resource)?.soft ?? Number.POSITIVE_INFINITY;
}

/** The kinds of namespace a Linux sandbox makes, as /proc/sys/user names their count limits. */
const NAMESPACE_KINDS = ['user', 'mnt', 'pid', 'net', 'ipc', 'uts', 'cgroup'] as const;

/**
 * Whether every kind of namespace a sandbox makes may be made here at all: each
 * user.max_*_namespaces of this process's user namespace above 0, read now. A namespace refused
 * with ENOSPC is then a count reached (or the nesting depth), which frees up as other sandboxes
 * end, not namespaces switched off (a limit of 0). False where a limit cannot be read.
 */
export function namespaceCountsAboveZero(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return NAMESPACE_KINDS.every((kind) => Number(readFileSync(`/proc/sys/user/max_${kind}_namespaces`, 'latin1')) > 0);
  } catch {
    return false;
  }
}
