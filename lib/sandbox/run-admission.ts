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
//
// What the first run measured can run out all the same: descriptors the caller opened since,
// the user's process limit (RLIMIT_NPROC, which commands that fork fill long before the
// descriptors) or namespace counts, another process of the same user. A runSandboxed start that
// fails so, with nothing run, waits for another run to end and starts again, ahead of the runs
// waiting to start; one end lets one such start go. With no other run in flight it tries again
// after pauses (ALONE_PAUSES_MS), then fails with `resource_exhausted`; the run's timeoutMs
// bounds the whole wait (run.ts). Beside other runs, once STALL_MS passed with none of them
// ended, the first such start tries again, one each STALL_MS while none ends: what refused it may
// be held by another process, and freed long before this process's own runs end.
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

/**
 * The pauses before a start that ran out of a resource, with no other run of this process in
 * flight, tries again: short at first, for what the kernel frees a little after a run's end (a
 * user namespace goes on a kernel worker once the last descriptor of the run's namespaces is
 * closed: 10-70 ms here), then up to a second each, for what other processes' runs hold (parallel
 * `zero-sandbox run` commands under one limit); about 8 s in all before the start fails.
 */
export const ALONE_PAUSES_MS: readonly number[] = [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000, 1000, 1000, 1000];

/**
 * How long no run of this process ends before one start waiting to start again beside them tries
 * again anyway. One at a time: a burst's hundreds of such starts, each trying again on a timer of
 * its own, had made ten times the starts and three times the caller's CPU (1,024 runs of `sleep
 * 10` under RLIMIT_NPROC 300), and such a start gives up only alone, so a burst of long commands
 * still waits for its runs to end.
 */
export const STALL_MS = 1000;

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
  // Runs whose start ran out of a resource, each waiting for another run's end.
  readonly #retrying: Waiter[] = [];
  // Lets the first of #retrying go once STALL_MS passed with no end (set again at every end).
  #stall: NodeJS.Timeout | undefined;
  readonly #stallMs: number;

  constructor(measure: () => number = measuredAllowance, stallMs = STALL_MS) {
    this.#measure = measure;
    this.#stallMs = stallMs;
  }

  /** Runs counted now (admitted and not yet released). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Runs waiting for a slot (to start, or to start again after running out of a resource). */
  get waiting(): number {
    return this.#waiting.length + this.#retrying.length;
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
    if (this.#waiting.length === 0 && this.#retrying.length === 0 && this.#inFlight < this.allowed) {
      this.#inFlight++;
      return undefined;
    }
    return this.#wait(this.#waiting, signal);
  }

  /**
   * A counted run whose start ran out of a resource, nothing run: it gives its slot back and
   * waits for another run to end (the promise, which rejects with `aborted` if `signal` aborts
   * first), counted again from then. With no other run in flight it waits `aloneMs` instead (or an
   * end, whichever comes first): the kernel frees some things a little after the run that held
   * them has ended (a user namespace is freed by a kernel worker). Undefined when alone without
   * `aloneMs`: the run is still counted, and reports its failure and releases. Beside other runs,
   * the first waiting goes once the stall time passed with no end, and the next after as long
   * again (see STALL_MS).
   */
  retryAfterAnEnd(signal?: AbortSignal, aloneMs?: number): Promise<void> | undefined {
    const alone = this.#inFlight <= 1;
    if (alone && aloneMs === undefined) return undefined;
    this.#inFlight--;
    const waiting = this.#wait(this.#retrying, signal, alone ? aloneMs : undefined);
    this.#watchStall();
    return waiting;
  }

  /** No run ended for the stall time: the first waiting to start again goes; the next waits. */
  #stalled(): void {
    this.#stall = undefined;
    const first = this.#retrying.shift();
    if (first !== undefined) this.#admit(first);
    this.#watchStall();
  }

  /** The stall timer runs while a start waits to start again, and only then (it holds the loop). */
  #watchStall(): void {
    if (this.#retrying.length === 0) {
      clearTimeout(this.#stall);
      this.#stall = undefined;
    } else {
      this.#stall ??= setTimeout(() => this.#stalled(), this.#stallMs);
    }
  }

  /** Waits in `queue` until admitted, aborted, or (with `timeoutMs`) admitted when that passes. */
  #wait(queue: Waiter[], signal: AbortSignal | undefined, timeoutMs?: number): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortedWhileWaiting(signal));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (): boolean => {
        clearTimeout(timer);
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        return at >= 0;
      };
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
        signal,
        onAbort: () => {
          leave();
          reject(abortedWhileWaiting(signal));
          // The last run waiting to start again no longer holds back those waiting to start.
          this.#admitWaiting();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      queue.push(waiter);
      // Past the pause, runs waiting to start meanwhile go too, as far as the allowance goes.
      timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        if (!leave()) return;
        this.#admit(waiter);
        this.#admitWaiting();
      }, timeoutMs);
    });
  }

  /**
   * A counted run ended: what it held goes first to a run waiting to start again (one, for one
   * end), else to the runs waiting to start, longest first.
   */
  release(): void {
    this.#inFlight--;
    if (this.#stall !== undefined) this.#stall.refresh();
    const again = this.#retrying.shift();
    if (again !== undefined) {
      this.#admit(again);
      this.#watchStall();
      return;
    }
    this.#admitWaiting();
  }

  /** Starts the runs waiting to start, longest first, while none waits to start again. */
  #admitWaiting(): void {
    this.#watchStall();
    while (this.#retrying.length === 0 && this.#inFlight < this.allowed) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      this.#admit(next);
    }
  }

  #admit(waiter: Waiter): void {
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    this.#inFlight++;
    waiter.admit();
  }
}

function abortedWhileWaiting(signal: AbortSignal | undefined): SandboxError {
  return new SandboxError('aborted', 'aborted while waiting for other runs to end (the command never started)', { cause: signal?.reason });
}

/** The process's admission: every runSandboxed and spawnSandboxed call of this process counts. */
export const runAdmission = new RunAdmission();
