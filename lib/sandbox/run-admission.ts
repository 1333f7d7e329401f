// SPDX-License-Identifier: MIT
// How many runs may be in flight at once, by the descriptors they hold in the caller. Each run in
// flight keeps some open until its sandbox is gone (on Linux its stdout, stderr and exit-report
// pipes, the sandbox's pidfd, its mount namespace for the check after it and its network holder's
// two namespaces; an output file two more), and the sandbox's first process begins with a copy of
// the caller's descriptor table, to which its set-up adds its own. Under RLIMIT_NOFILE 1,024 (the
// kernel's default, and the hard limit of many containers and CI runners) 1,024 runs of a command
// that outlives its start would fill the table: starts then failed part-way with EMFILE, in the
// caller or in the sandbox's set-up. runSandboxed calls beyond what the limit holds wait for a run
// to end instead, in call order; spawnSandboxed, which returns its process at once, is counted
// but never waits. The limit is read, and the caller's own descriptors counted, at the first run
// (Linux, from /proc); where neither can be read (other systems) nothing waits.
import { readdirSync } from 'node:fs';

import { SandboxError } from '../errors.js';
import { softLimit } from '../process-limits.js';
import { LIMIT_RLIMITS } from './default-limits.js';

/** The most descriptors the caller holds per run in flight (6, or 8 with keepOutputFile). */
export const DESCRIPTORS_PER_RUN = 8;

/**
 * Descriptors left for everything else: starts being made (their pipes before the clone, the
 * sandbox's set-up in its copy of the table), repository scans walking with a descriptor per
 * level, the notes shared with other processes, and whatever the caller opens meanwhile.
 */
export const DESCRIPTOR_RESERVE = 128;

/** Runs that may be in flight under `limit` descriptors, `opened` of them open before any run. */
export function runsAllowed(limit: number, opened: number): number {
  if (!Number.isFinite(limit)) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.floor((limit - opened - DESCRIPTOR_RESERVE) / DESCRIPTORS_PER_RUN));
}

function measuredAllowance(): number {
  // Unknown off Linux (process-limits.ts reads /proc): nothing waits there.
  const limit = softLimit(LIMIT_RLIMITS.openFiles);
  if (!Number.isFinite(limit)) return Number.POSITIVE_INFINITY;
  try {
    return runsAllowed(limit, readdirSync('/proc/self/fd').length);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

interface Waiter {
  admit: () => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Runs in flight against an allowance; the runs over it wait in call order. */
export class RunAdmission {
  #allowed: number | undefined;
  readonly #measure: () => number;
  #inFlight = 0;
  readonly #waiting: Waiter[] = [];

  constructor(measure: () => number = measuredAllowance) {
    this.#measure = measure;
  }

  /** Runs counted now (admitted and not yet released). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Runs waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** How many runs may be in flight (measured at the first call). */
  get allowed(): number {
    this.#allowed ??= this.#measure();
    return this.#allowed;
  }

  /** Counts a run that does not wait (spawnSandboxed): it may take the table past the allowance. */
  count(): void {
    this.#inFlight++;
  }

  /**
   * Counts a run: undefined when it may start now, else a promise that resolves when a run ends
   * and its slot is this one's, or rejects with `aborted` if `signal` aborts first (the command
   * never started).
   */
  take(signal?: AbortSignal): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#inFlight < this.allowed) {
      this.#inFlight++;
      return undefined;
    }
    if (signal?.aborted === true) return Promise.reject(abortedWhileWaiting(signal));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: resolve,
        signal,
        onAbort: () => {
          const at = this.#waiting.indexOf(waiter);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(abortedWhileWaiting(signal));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** A counted run ended: its slot goes to the run that has waited longest. */
  release(): void {
    this.#inFlight--;
    while (this.#inFlight < this.allowed) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      next.signal?.removeEventListener('abort', next.onAbort);
      this.#inFlight++;
      next.admit();
    }
  }
}

function abortedWhileWaiting(signal: AbortSignal | undefined): SandboxError {
  return new SandboxError('aborted', 'aborted while waiting for other runs to end (the command never started)', { cause: signal?.reason });
}

/** The process's admission: every runSandboxed and spawnSandboxed call of this process counts. */
export const runAdmission = new RunAdmission();
