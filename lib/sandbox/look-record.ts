// SPDX-License-Identifier: MIT
// What a pass of the protected-path guard looked at on the file system, recorded while it runs:
// the entries it looked at (with their kind and stamp), the files whose content it read, the
// repository scans it made and the configs outside every write root it read. The guard's memo
// (guard-memo.ts) keeps a pass's answer only while every directory it looked in stays unchanged
// and every file it read keeps its stamp; this record is how it knows which ones those are. A
// look that goes through none of the recorded verbs would be missed, so every look of the guard's
// pass is made through them (beneath.ts, and the outside configs of git-guard.ts).
//
// It imports nothing: beneath.ts reports to it, so the types it needs are stated here.

/** A look's answer (beneath.ts EntryInfo). */
interface Look {
  kind: string;
  stamp: string;
}

/** One recorded repository scan (beneath.ts scanRepositories): its ask and its answer. */
export interface RecordedScan {
  root: string;
  maxDirs: number;
  maxRepos: number;
  /** The names asked for, compared by identity (the guard asks with one constant). */
  names: unknown;
  scan: { worktrees: string[]; gitDirs: string[]; named: string[]; incomplete: boolean };
}

/** What one pass looked at (paths are byte strings, see beneath.ts). */
export interface LookRecord {
  /** Each path looked at: `kind:stamp` as first seen (a second look with another answer spoils the record). */
  entries: Map<string, string>;
  /** Each file whose content was read: its stamp before and after the read (equal, or the record is spoilt). */
  reads: Map<string, string>;
  scans: RecordedScan[];
  /** Files outside every write root (global git configs): `path`, and what a stat and realpath gave. */
  outside: Map<string, string>;
  /** Set when something was looked at that the record cannot vouch for (the memo then keeps nothing). */
  spoilt?: string;
}

let current: LookRecord | undefined;

/** Runs `pass` with its looks recorded. Records do not nest: an inner one sees the looks, the outer none of them. */
export function recordLooks<T>(pass: () => T): { value: T; record: LookRecord } {
  const record: LookRecord = { entries: new Map(), reads: new Map(), scans: [], outside: new Map() };
  const before = current;
  current = record;
  try {
    return { value: pass(), record };
  } finally {
    current = before;
  }
}

/** Whether a pass is being recorded now (a read then stamps its file before and after). */
export function recording(): boolean {
  return current !== undefined;
}

function spoil(why: string): void {
  if (current !== undefined) current.spoilt ??= why;
}

/** A look at `path` answered `info`. */
export function noteLook(path: string, info: Look): void {
  if (current === undefined) return;
  const state = `${info.kind}:${info.stamp}`;
  const had = current.entries.get(path);
  if (had === undefined) current.entries.set(path, state);
  else if (had !== state) spoil(`${path} changed while it was looked at`);
}

/** The content of the file at `path` was read between two looks at its stamp. */
export function noteRead(path: string, before: Look, after: Look): void {
  if (current === undefined) return;
  if (before.kind !== 'file' || before.stamp !== after.stamp || after.kind !== 'file') {
    spoil(`${path} changed while it was read`);
    return;
  }
  noteLook(path, before);
  const had = current.reads.get(path);
  if (had === undefined) current.reads.set(path, before.stamp);
  else if (had !== before.stamp) spoil(`${path} changed while it was read`);
}

/** A repository scan and its answer. */
export function noteScan(scan: RecordedScan): void {
  current?.scans.push(scan);
}

/** A file outside every write root and what was found of it (see LookRecord.outside). */
export function noteOutside(path: string, found: string | undefined): void {
  if (current === undefined) return;
  if (found === undefined) {
    spoil(`${path} changed too recently to be kept`);
    return;
  }
  const had = current.outside.get(path);
  if (had === undefined) current.outside.set(path, found);
  else if (had !== found) spoil(`${path} changed while it was read`);
}

/** Something was looked at that cannot be recorded. */
export function noteUnrecordable(why: string): void {
  spoil(why);
}
