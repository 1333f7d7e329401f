// SPDX-License-Identifier: MIT
// A value computed from the file system, kept across runs while nothing it looked at can have
// changed: the memo under the plan and the Linux spec of a repeated policy (plan-memo.ts,
// backend/linux/spec-memo.ts). What a computation depends on besides its key is written down while
// it runs (look-log.ts): the entries it looked at, the directories it listed, the files it read.
//
// Why a kept value is the value a fresh computation would give (Linux, watch-set.ts):
// - Its key holds every input that is not the file system, compared element by element (never by
//   identity: callers change their arrays in place).
// - What lstat, stat or realpath says of a path, when no link is followed, changes only with an
//   event at its entry or at an entry on the way down to it (made, removed, renamed, attributes);
//   a listing changes only with an event in the directory listed. The watch set holds every path
//   looked at as an entry (a missing one by the deepest directory on its way) and every directory
//   listed, with the way down to each.
// - A look the set cannot vouch for (a link followed, a path that is not clean) keeps the value off
//   the memo: it is computed on every run.
// - File content makes no event: every file read is read again on each use and compared.
// - The order (the safe pattern): a key's first computation makes the set of what it looked at
//   (in a process that runs once, it is only noted: no later run would use the set); the next,
//   with the set quiet, computes afresh and keeps its value only when the set covers all it looked
//   at (every look of it came after the set was made, under its watch). Later ones use that value
//   while the set stays quiet and every file read reads the same. Any event since the set was made
//   (also one between a look and the keeping) makes it unquiet for good.
import { readFileSync } from 'node:fs';

import { isCleanAbsolute } from '../path-within.js';
import { dropsOldest, PATHS_KEPT, restRuns, usedLately } from './kept-bounds.js';
import { nextLookEpoch, withLookLog, type LookLog } from './look-log.js';
import { oneRun } from './one-run.js';
import { watchEntries, type WatchSet } from './watch-set.js';

/** Computations made without a memo after a watch set could not be made, before trying again. */
const UNWATCHED_RUNS = 32;

/** The most computations made without a memo after sets that changed before they were used. */
const MAX_BACKOFF_RUNS = 64;

interface Entry<K, V> {
  key: K;
  /** Undefined when no set could be made, or while backing off: `unwatched` more runs compute without one. */
  set: WatchSet | undefined;
  unwatched: number;
  /**
   * Sets in a row that changed before a value kept under them was used (a command that writes
   * where the policy looked, run after run): a set costs a walk of every path, so each such set
   * doubles the runs computed without one (at most MAX_BACKOFF_RUNS); an answer resets it.
   */
  wasted: number;
  /** What the set watches. */
  watched: Watched;
  /** When the set was made (look-log.ts nextLookEpoch). */
  madeAt: number;
  /** The value, once a computation made after the set vouches for it. */
  value?: V;
  /** The files its computation read, with what it read. */
  contents: Array<[string, string | undefined]>;
  /** When the memo last answered from it (the memo's count of calls then); undefined: never. */
  answeredAt?: number;
  /** Its key's rest, when the key came back from one (see #makeRoom). */
  rested?: Rest<K> | undefined;
}

/** A key whose values were dropped to make room before the memo answered from them. */
interface Rest<K> {
  key: K;
  /** Times in a row. */
  times: number;
  /** Its runs still to compute without a set. */
  runs: number;
}

/** How often the memos answered and computed (tests count them). */
export const watchedMemoCounts = { answered: 0, computed: 0 };

/** What a set must watch for a log: the paths looked at and read as entries, the directories listed. */
export interface Watched {
  entries: Set<string>;
  dirs: Set<string>;
}

/** What a set must watch for what `log` looked at; undefined when it cannot vouch for it (see the header). */
export function watchedOf(log: LookLog): Watched | undefined {
  if (log.uncovered) return undefined;
  const entries = new Set([...log.looked, ...log.contents.keys()]);
  // "/" is no entry of any directory: nothing can make, remove or rename it.
  entries.delete('/');
  const dirs = new Set(log.listed);
  for (const path of entries) if (!isCleanAbsolute(path)) return undefined;
  for (const dir of dirs) if (!isCleanAbsolute(dir)) return undefined;
  return { entries, dirs };
}

/** What a kept value weighs against the memo's bound: the paths its set watches. */
function weightOf(watched: Watched): number {
  return watched.entries.size + watched.dirs.size;
}

/** True when `set` watches all that `need` asks for. */
function covers(set: Watched, need: Watched): boolean {
  for (const path of need.entries) if (!set.entries.has(path)) return false;
  for (const dir of need.dirs) if (!set.dirs.has(dir)) return false;
  return true;
}

function readNow(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** An array frozen with each of its items (each root's `root` cannot change). */
export function frozenRoots(roots: readonly object[]): boolean {
  return Object.isFrozen(roots) && roots.every((w) => Object.isFrozen(w));
}

/** A write root frozen with its arrays (the plan memo's): its content is what it was when it was kept. */
export function frozenRoot(w: { readonly readOnlySubpaths: readonly string[]; readonly protectedNames: readonly string[] }): boolean {
  return Object.isFrozen(w) && Object.isFrozen(w.readOnlySubpaths) && Object.isFrozen(w.protectedNames);
}

/** Freezes a value and everything in it (arrays, plain objects, typed arrays are left as they are). */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  for (const item of Object.values(value)) deepFreeze(item);
  return Object.freeze(value);
}

/**
 * Values kept by key across runs (see the header). `same` compares two keys element by element;
 * `copy` makes a key the memo may keep (the caller's arrays may change after the call).
 */
export class WatchedMemo<K, V> {
  readonly #entries: Array<Entry<K, V>> = [];
  readonly #resting: Array<Rest<K>> = [];
  #calls = 0;

  constructor(
    readonly max: number,
    readonly same: (a: K, b: K) => boolean,
    readonly copy: (key: K) => K,
    /** Makes a watch set (tests hand in their own). */
    readonly watch: (entries: readonly string[], dirs: readonly string[]) => WatchSet | undefined = watchEntries,
    /** Paths watched over all kept values at most (kept-bounds.ts). */
    readonly maxPaths = PATHS_KEPT,
  ) {}

  /**
   * The value kept for `key` while it holds, else `compute()` (see the header). Kept values are
   * frozen. `since`: the epoch of the oldest answer `compute` may use that it does not look up
   * itself (a HostFacts gathered earlier: its epoch); a value computed from answers older than
   * the set is not kept.
   */
  get(key: K, compute: () => V, since = nextLookEpoch()): V {
    this.#calls++;
    const at = this.#entries.findIndex((entry) => this.same(entry.key, key));
    const entry = at === -1 ? undefined : this.#entries[at];
    if (entry !== undefined) {
      this.#entries.splice(at, 1);
      this.#entries.push(entry);
    }
    // A key seen for the first time makes its set now, so that the second run keeps its value and
    // the third is answered: a policy's first runs each compute it in full (tens of milliseconds
    // for a thousand write roots), and each such run a caller repeating the policy waits through
    // is one too many. In a process that runs once (the CLI) the key is only noted: the set costs
    // a walk of every path it watches, for a later run that will not come.
    if (entry === undefined && oneRun()) {
      const value = compute();
      this.#makeRoom(0);
      this.#entries.push({ key: this.copy(key), set: undefined, unwatched: 0, wasted: 0, watched: { entries: new Set(), dirs: new Set() }, madeAt: 0, contents: [] });
      return value;
    }
    const rest = entry === undefined ? this.#resting.find((r) => this.same(r.key, key)) : undefined;
    if (rest !== undefined && rest.runs > 0) {
      rest.runs--;
      return compute();
    }
    if (entry !== undefined && entry.set === undefined && entry.unwatched > 0) {
      entry.unwatched--;
      return compute();
    }
    // Made before the looks of the computation below, when quiet now.
    const quiet = entry?.set !== undefined && entry.set.quiet();
    if (entry?.value !== undefined && quiet && entry.contents.every(([path, text]) => readNow(path) === text)) {
      watchedMemoCounts.answered++;
      entry.answeredAt = this.#calls;
      entry.wasted = 0;
      const rested = entry.rested === undefined ? -1 : this.#resting.indexOf(entry.rested);
      if (rested !== -1) this.#resting.splice(rested, 1);
      entry.rested = undefined;
      return entry.value;
    }
    watchedMemoCounts.computed++;
    const { value, log } = withLookLog(compute);
    const watched = watchedOf(log);
    if (watched === undefined) {
      this.#drop(entry);
      return value;
    }
    if (entry !== undefined && quiet && covers(entry.watched, watched)) {
      // Answers older than the set (a start deferred in a burst while another made it) vouch for nothing.
      if (since <= entry.madeAt) return value;
      // This run's key kept: what it shares with the value now kept (frozen arrays) then compares by identity.
      entry.key = this.copy(key);
      entry.value = deepFreeze(value);
      entry.contents = [...log.contents];
      return value;
    }
    // A set that changed before anything kept under it was used: after two in a row, back off.
    const setWasted = entry?.set !== undefined && entry.answeredAt === undefined;
    const wasted = setWasted ? (entry?.wasted ?? 0) + 1 : (entry?.wasted ?? 0);
    this.#drop(entry);
    if (!this.#makeRoom(weightOf(watched), rest)) return value;
    const backoff = setWasted && wasted >= 2 ? Math.min(2 ** wasted, MAX_BACKOFF_RUNS) : 0;
    const madeAt = nextLookEpoch();
    const set = backoff > 0 ? undefined : this.watch([...watched.entries], [...watched.dirs]);
    const unwatched = backoff > 0 ? backoff : set === undefined ? UNWATCHED_RUNS : 0;
    this.#entries.push({ key: this.copy(key), set, unwatched, wasted, watched, madeAt, contents: [], rested: rest });
    return value;
  }

  /** Drops every kept value and releases its set. */
  clear(): void {
    for (const entry of [...this.#entries]) this.#drop(entry);
  }

  /**
   * Drops the least recently used values until one more weighing `adding` fits the bounds; false
   * when it is not to be kept. More keys in turn than fit keep dropping one another's values before
   * the memo answers from any, each paying its set for nothing. So a key whose value was dropped
   * unanswered computes without a set for its next few runs (twice as many each time in a row), and
   * once back (`rest`) it does not take the room of a value answered from within the last two rounds
   * of the kept ones: those stay kept, and it rests longer.
   */
  #makeRoom(adding: number, rest?: Rest<K>): boolean {
    while (dropsOldest(this.#entries.length, this.#entries.reduce((sum, e) => sum + weightOf(e.watched), 0), adding, this.max, this.maxPaths)) {
      const oldest = this.#entries[0] as Entry<K, V>;
      if (rest !== undefined && usedLately(oldest.answeredAt, this.#calls, this.#entries.length)) {
        this.#rest(rest.key, rest);
        return false;
      }
      this.#drop(oldest);
      if (oldest.answeredAt === undefined && oldest.set !== undefined) this.#rest(oldest.key, oldest.rested);
    }
    return true;
  }

  /** Sends `key` to rest (again, when `known` is its rest already). */
  #rest(key: K, known?: Rest<K>): void {
    let rest = known;
    if (rest === undefined) {
      if (this.#resting.length >= 2 * this.max) this.#resting.shift();
      rest = { key, times: 0, runs: 0 };
      this.#resting.push(rest);
    }
    rest.times++;
    rest.runs = restRuns(rest.times);
  }

  #drop(entry: Entry<K, V> | undefined): void {
    if (entry === undefined) return;
    const at = this.#entries.indexOf(entry);
    if (at !== -1) this.#entries.splice(at, 1);
    entry.set?.release();
  }
}
