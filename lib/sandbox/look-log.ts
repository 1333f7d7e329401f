// SPDX-License-Identifier: MIT
// What a computation kept across runs (plan-memo.ts) asked of the file system, written down while
// it runs: the paths whose entry it looked at, the directories whose listing it read, the files
// whose content it read (with what it read), and whether it made a look no watched directory can
// vouch for (a link followed, a path that is not clean). The places that ask (host-facts.ts,
// dir-listing.ts, plan.ts) write here only while a log is open; otherwise each note is one test.

/** What one computation asked of the file system. */
export interface LookLog {
  /** Paths whose entry was looked at (lstat, stat, realpath, a kind): their directory decides. */
  looked: string[];
  /** Directories whose listing was read: their own entries decide. */
  listed: string[];
  /** Files whose content was read, with that content (undefined: the read failed). */
  contents: Map<string, string | undefined>;
  /** Set when a look depends on more than the entries of the directories above (a followed link). */
  uncovered: boolean;
}

let open: LookLog | undefined;
let epoch = 0;

/**
 * A number larger than any given before: what gathers answers for later use (a HostFacts) takes
 * one when made, and a watch set one when made, so a memo can tell answers gathered before its set
 * from answers gathered after it (watched-memo.ts).
 */
export function nextLookEpoch(): number {
  return ++epoch;
}

/** Runs `fn` with a new log open (logs do not nest: an inner one is the caller's error). */
export function withLookLog<T>(fn: () => T): { value: T; log: LookLog } {
  if (open !== undefined) throw new Error('withLookLog: a look log is already open');
  const log: LookLog = { looked: [], listed: [], contents: new Map(), uncovered: false };
  open = log;
  try {
    return { value: fn(), log };
  } finally {
    open = undefined;
  }
}

/** True while a log is open. */
export function lookLogOpen(): boolean {
  return open !== undefined;
}

export function logLooked(path: string): void {
  open?.looked.push(path);
}

export function logListed(dir: string): void {
  open?.listed.push(dir);
}

export function logContent(path: string, text: string | undefined): void {
  if (open !== undefined && !open.contents.has(path)) open.contents.set(path, text);
}

export function logUncovered(): void {
  if (open !== undefined) open.uncovered = true;
}
