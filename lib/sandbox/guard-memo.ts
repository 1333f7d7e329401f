// SPDX-License-Identifier: MIT
// The protected-path guard's look before a run (the repositories, hooks, configs, pointer files
// and agent and editor configs of every write root), kept across the runs of this process for the
// same write roots while nothing it depends on changed. With a thousand write roots that look is
// a few tens of milliseconds of work per run, almost all of it finding the same thing again.
//
// What a kept look depends on, and how each is known unchanged (Linux: where the platform has no
// watch set, nothing is kept and every run looks):
// - every entry it looked at (present, missing, its kind, a directory's stamp) and every listing
//   it read: a watch set (watch-set.ts) over each directory it found (every entry made, removed,
//   renamed or given other attributes in it counts: its stamp and listing may be in the answer)
//   and each other path it looked at as an entry (that entry made, removed, renamed over or away,
//   its attributes; for a missing path, the name leading down to it from the deepest directory
//   there), with the entry leading down to each from every directory above it, a mount-table
//   change and lost events. A quiet set means none of those looks would answer otherwise now
//   (other entries of /tmp, say, do not count). Where a look met an error on the way, nothing is
//   kept.
// - the content of every file it read or stamped (configs, pointer files, indexes, tool configs):
//   a content write queues no directory event, so each is stamped again on every run and must
//   have the stamp it had when read (dev, inode, size, mtime, ctime; a write moves mtime and ctime,
//   nothing sets a ctime back). Kept only when last changed more than RACY_NANOS before it was
//   read, so a later write lands on a later clock tick and gives another stamp.
// - the repository scans of the workspace (the whole tree, not in the set): made again on every
//   run (the addon's own memo makes them cheap, and an async start makes them off the caller's
//   thread) and compared with the answers the kept look had.
// - the git configs outside every write root (the user's global and system config and what they
//   include): a stat and realpath of each again on every run (git-guard.ts outsideState).
// - what the look was asked (the write roots, their protected names and subpaths, the
//   environment naming the global configs): the key.
//
// When the answer is kept (the safe order): run N looks and then makes the set of everything it
// looked at; its answer is not kept (a change between a look and the watch would go unseen). Run
// N+1 finds the set quiet, looks afresh (every look after the set was made) and keeps that answer
// with the set when its directories and entries are all in it; runs N+2.. give it again while the
// set is quiet and the files, scans and outside configs are as they were. The same set tells the
// check after a run whether anything the look looked at changed during it (QuietSince).
import { sep } from 'node:path';

import type { WritableRoot } from '../backend/types.js';
import { sameList } from '../same-lists.js';
import { fromBytes, inspectMany, scanRepositories, toBytes } from './beneath.js';
import { outsideState } from './git-guard.js';
import { recordLooks, type LookRecord, type RecordedScan } from './look-record.js';
import { dropsOldest, POLICIES_KEPT, restRuns, usedLately } from './kept-bounds.js';
import { RACY_NANOS } from './root-tops.js';
import { standardSubpaths } from './standard-subpaths.js';
import { oneRun } from './one-run.js';
import { frozenRoot, frozenRoots } from './watched-memo.js';
import { watchEntries, type WatchSet } from './watch-set.js';

interface Kept {
  set: WatchSet;
  /** The directories (every entry) and entries the set watches (see keepable). */
  dirs: ReadonlySet<string>;
  entries: ReadonlySet<string>;
  /** What the look was asked. */
  inputs: Inputs;
  /** Runs whose check still asks the set; it is released once none does and it is dropped. */
  holders: number;
  dropped: boolean;
  /** When a run was last given the kept look (`calls` then; see makeRoom). */
  reusedAt?: number;
  /** The kept look, with what it read: files and their stamps, scans, outside configs. */
  answer?: { value: unknown; files: string[]; stamps: string[]; scans: RecordedScan[]; outside: Map<string, string> };
}

const kept = new Map<string, Kept>();

/** Keys whose look could not be watched lately: how many more runs look without recording. */
const unwatchable = new Map<string, number>();
const UNWATCHABLE_RUNS = 64;
/** The same for a look that could not be kept (a file changed too recently, an error on the way, a set not quiet at the next run). */
const UNKEPT_RUNS = 4;

function backOff(key: string, runs: number): void {
  if (unwatchable.size >= POLICIES_KEPT) unwatchable.delete(unwatchable.keys().next().value as string);
  unwatchable.set(key, runs);
}

/** Keys whose last looks were dropped before a run was given them, how many in a row (makeRoom). */
const wasted = new Map<string, number>();
/** Looks asked of the memo so far: when each kept look was last given counts in these. */
let calls = 0;

function noteWasted(key: string): void {
  const times = (wasted.get(key) ?? 0) + 1;
  wasted.delete(key);
  if (wasted.size >= 2 * POLICIES_KEPT) wasted.delete(wasted.keys().next().value as string);
  wasted.set(key, times);
  backOff(key, restRuns(times));
}

/** How often a look was given again and how often it was made (tests count them). */
export const guardMemoCounts = { reused: 0, looked: 0 };

/** A watch set a run's check asks after the run: quiet() since before the run's look was made. */
export interface QuietSince {
  quiet(): boolean;
  /** The run's check is done with it. Never throws. */
  release(): void;
}

/**
 * `look()` (a pass of the guard), or its answer kept from an earlier run under `key` when nothing
 * it depends on changed (see the header); the answer must not be changed by the caller. `quiet`,
 * when given, is a set covering every directory the answer depends on, made before the looks it
 * came from: quiet after the run, none of them changed during it.
 */
export function lookKept<T>(asked: LookAsked, look: () => T, keep: (value: T) => boolean = () => true): { value: T; quiet?: QuietSince } {
  // A process that runs once never asks again: the look is made, not recorded or watched.
  if (oneRun()) {
    guardMemoCounts.looked++;
    return { value: look() };
  }
  calls++;
  const env = envOf();
  const key = keyOf(asked, env);
  // Another root set under the same key: dropped, the look is made and kept for this one.
  if (kept.has(key) && !sameInputs((kept.get(key) as Kept).inputs, asked, env)) drop(key);
  const known = kept.get(key);
  if (known?.answer !== undefined && known.set.quiet() && unchanged(known.answer)) {
    guardMemoCounts.reused++;
    known.reusedAt = calls;
    wasted.delete(key);
    // Least recently used goes first.
    kept.delete(key);
    kept.set(key, known);
    return { value: known.answer.value as T, quiet: hold(known) };
  }
  guardMemoCounts.looked++;
  // Where no set could be made lately, the look is not recorded (it costs a little).
  const waiting = unwatchable.get(key);
  if (waiting !== undefined) {
    if (waiting <= 1) unwatchable.delete(key);
    else unwatchable.set(key, waiting - 1);
    return { value: look() };
  }
  // The set made before this look, still quiet: this look came after it.
  const before = known !== undefined && known.set.quiet() ? known : undefined;
  if (known !== undefined && before === undefined && known.answer === undefined) {
    // The set made by the run before saw a change already (commands that write where it watches):
    // the next few runs look without recording.
    drop(key);
    backOff(key, UNKEPT_RUNS);
    return { value: look() };
  }
  const { value, record } = recordLooks(look);
  const found = record.spoilt === undefined && keep(value) ? keepable(record) : undefined;
  if (found === undefined) {
    drop(key);
    backOff(key, UNKEPT_RUNS);
    return { value };
  }
  if (before !== undefined && kept.get(key) === before && isSubset(found.dirs, before.dirs) && isSubset(found.entries, before.entries) && before.set.quiet()) {
    before.answer = { value, files: found.files, stamps: found.stamps, scans: record.scans, outside: record.outside };
    return { value, quiet: hold(before) };
  }
  drop(key);
  // Room first: the sets are bounded too.
  if (!makeRoom(key, found.dirs.size + found.entries.size)) return { value };
  // The set is asked with UTF-8 paths: one a byte string does not round-trip to is not kept.
  const dirs = utf8Paths(found.dirs);
  const entries = utf8Paths(found.entries);
  const set = dirs === undefined || entries === undefined ? undefined : watchEntries(entries, dirs);
  if (set === undefined) backOff(key, UNWATCHABLE_RUNS);
  else kept.set(key, { set, dirs: found.dirs, entries: found.entries, inputs: inputsOf(asked, env), holders: 0, dropped: false });
  return { value };
}

/**
 * Drops the least recently used looks until one more of `adding` paths, for `key`, fits
 * (kept-bounds.ts); false when it is not to be kept. More policies in turn than fit keep dropping
 * one another's looks before any run is given them, each paying its recording and its set for
 * nothing (10 workspaces of 1,000 write roots in turn: 80-90 ms per run recorded, 51-61 ms not).
 * So a key whose look was dropped unused looks without recording for its next few runs (twice as
 * many each time in a row), and once back it does not take the room of a look given to a run
 * within the last two rounds of the kept ones: those stay kept, and it waits longer.
 */
function makeRoom(key: string, adding: number): boolean {
  // Each look weighs what its set watches.
  const weight = (k: Kept) => k.dirs.size + k.entries.size;
  while (dropsOldest(kept.size, [...kept.values()].reduce((sum, k) => sum + weight(k), 0), adding)) {
    const [oldKey, oldest] = kept.entries().next().value as [string, Kept];
    if (wasted.has(key) && usedLately(oldest.reusedAt, calls, kept.size)) {
      noteWasted(key);
      return false;
    }
    drop(oldKey);
    if (oldest.reusedAt === undefined) noteWasted(oldKey);
  }
  return true;
}

/** What the look before a run is asked: the plan's write roots and those of the caller (with protected names). */
export interface LookAsked {
  writeRoots: readonly WritableRoot[];
  user: readonly WritableRoot[];
}

/** LookAsked as kept with a look, compared with the next run's (a plan is made anew for each run). */
interface Inputs {
  env: string;
  roots: string[];
  user: Array<{ root: string; names: readonly string[]; standard: number; rest: readonly string[]; same: WritableRoot | undefined }>;
  /** The plan's write roots when frozen (the plan memo's, given run after run): the same array, the same roots. */
  same: readonly WritableRoot[] | undefined;
}

/** The environment naming the user's git configs (discoverGit reads these). */
function envOf(): string {
  const env = process.env;
  return `${env.HOME}\0${env.XDG_CONFIG_HOME}\0${env.GIT_CONFIG_GLOBAL}\0${env.GIT_CONFIG_SYSTEM}`;
}

/** The key a look is kept under: its environment and a few of its roots (inputs are compared whole, sameInputs). */
function keyOf(asked: LookAsked, env: string): string {
  const { writeRoots, user } = asked;
  return `${env}\0${writeRoots.length}\0${user.length}\0${user[0]?.root}\0${user[user.length - 1]?.root}`;
}

/**
 * How many of a root's read-only subpaths are the ones the plan makes for every root, in its
 * order (standard-subpaths.ts): the same strings, so an identity test each.
 */
function standardCount(w: WritableRoot): number {
  const paths = w.readOnlySubpaths;
  const made = standardSubpaths(paths, w.root, sep)?.made;
  if (made === undefined || made.length > paths.length) return 0;
  for (let i = 0; i < made.length; i++) if (paths[i] !== made[i]) return 0;
  return made.length;
}

function inputsOf(asked: LookAsked, env: string): Inputs {
  const { writeRoots } = asked;
  return {
    env,
    roots: writeRoots.map((w) => w.root),
    user: asked.user.map((w) => {
      const standard = standardCount(w);
      return { root: w.root, names: [...w.protectedNames], standard, rest: w.readOnlySubpaths.slice(standard), same: frozenRoot(w) ? w : undefined };
    }),
    same: frozenRoots(writeRoots) ? writeRoots : undefined,
  };
}

function sameInputs(inputs: Inputs, asked: LookAsked, env: string): boolean {
  const { writeRoots, user } = asked;
  if (inputs.env !== env || inputs.roots.length !== writeRoots.length || inputs.user.length !== user.length) return false;
  // The frozen arrays and roots kept by the plan memo, given again: compared by identity.
  if (writeRoots !== inputs.same) for (let i = 0; i < writeRoots.length; i++) if ((writeRoots[i] as WritableRoot).root !== inputs.roots[i]) return false;
  for (let i = 0; i < user.length; i++) {
    const w = user[i] as WritableRoot;
    const k = inputs.user[i] as Inputs['user'][number];
    if (w === k.same) continue;
    if (w.root !== k.root || !sameList(w.protectedNames, k.names)) return false;
    // A standard subpath is the root, a separator and a fixed relative path: the same root, the same strings.
    const standard = standardCount(w);
    if (standard !== k.standard || w.readOnlySubpaths.length - standard !== k.rest.length) return false;
    for (let j = 0; j < k.rest.length; j++) if (w.readOnlySubpaths[standard + j] !== k.rest[j]) return false;
    // Equal and frozen: the next run's (the same object, when the plan memo answers) compares by identity.
    if (frozenRoot(w)) k.same = w;
  }
  if (writeRoots !== inputs.same && frozenRoots(writeRoots)) inputs.same = writeRoots;
  return true;
}

/** Forgets every kept look (tests). */
export function forgetKeptLooks(): void {
  unwatchable.clear();
  wasted.clear();
  for (const key of [...kept.keys()]) drop(key);
}

function hold(entry: Kept): QuietSince {
  entry.holders++;
  let held = true;
  return {
    quiet: () => held && entry.set.quiet(),
    release: () => {
      if (!held) return;
      held = false;
      entry.holders--;
      if (entry.dropped && entry.holders === 0) entry.set.release();
    },
  };
}

function drop(key: string): void {
  const entry = kept.get(key);
  if (entry === undefined) return;
  kept.delete(key);
  entry.dropped = true;
  if (entry.holders === 0) entry.set.release();
}

/** Whether the files, scans and outside configs a kept look read are as they were. */
function unchanged(answer: NonNullable<Kept['answer']>): boolean {
  for (const [path, found] of answer.outside) if (outsideState(path) !== found) return false;
  if (answer.files.length > 0) {
    const now = inspectMany(answer.files);
    for (let i = 0; i < now.length; i++) {
      const info = now[i];
      if (info === undefined || `${info.kind}:${info.stamp}` !== answer.stamps[i]) return false;
    }
  }
  for (const s of answer.scans) {
    const scan = scanRepositories(s.root, s.maxDirs, s.maxRepos, s.names as Parameters<typeof scanRepositories>[3]);
    if (scan.incomplete !== s.scan.incomplete || !sameList(scan.worktrees, s.scan.worktrees) || !sameList(scan.gitDirs, s.scan.gitDirs) || !sameList(scan.named, s.scan.named)) return false;
  }
  return true;
}

function isSubset(some: ReadonlySet<string>, all: ReadonlySet<string>): boolean {
  for (const path of some) if (!all.has(path)) return false;
  return true;
}

/** Byte-string paths as UTF-8 (what a watch set is asked with), or undefined when one does not round-trip. */
function utf8Paths(paths: ReadonlySet<string>): string[] | undefined {
  const out: string[] = [];
  for (const path of paths) {
    const utf8 = fromBytes(path);
    if (toBytes(utf8) !== path) return undefined;
    out.push(utf8);
  }
  return out;
}

/**
 * What a recorded look depends on: the directories it found (each entry of theirs counts: their
 * stamps and listings may be part of the answer) and every other path it looked at as an entry
 * (only that entry counts: made, removed, renamed, its attributes; for a missing one, the name
 * leading down to it from the deepest directory there is), and the files whose content it depends
 * on, with their stamps; undefined when it cannot be kept (an error on the way, a file changed too
 * recently).
 */
function keepable(record: LookRecord): { dirs: Set<string>; entries: Set<string>; files: string[]; stamps: string[] } | undefined {
  const dirs = new Set<string>();
  const entries = new Set<string>();
  const files: string[] = [];
  const stamps: string[] = [];
  const limit = BigInt(Date.now()) * 1_000_000n - RACY_NANOS;
  for (const [path, state] of record.entries) {
    const kind = state.slice(0, state.indexOf(':'));
    if (kind === 'dir') dirs.add(path);
    else if (kind === 'error') return undefined;
    else {
      if (kind === 'file' || kind === 'other') {
        if (!settled(state, limit)) return undefined;
        files.push(path);
        stamps.push(state);
      }
      entries.add(path);
    }
  }
  return { dirs, entries, files, stamps };
}

/** Whether a stamp (`kind:dev:ino:size:mtime:ctime`) was last changed before `limit` (ns). */
function settled(state: string, limit: bigint): boolean {
  const parts = state.split(':');
  if (parts.length !== 6) return false;
  try {
    return BigInt(parts[4] as string) < limit && BigInt(parts[5] as string) < limit;
  } catch {
    return false;
  }
}
