// SPDX-License-Identifier: MIT
// Host-side reads, checks and removals of paths inside write roots. A sandboxed command (this
// run's, an earlier one's, or one still running in the same workspace) may have left links,
// FIFOs or trees of any shape there, so these go through the addon's descriptor walk: every
// component is opened with O_NOFOLLOW from "/", a link anywhere stops the walk, a FIFO is never
// opened for reading, and removal holds one descriptor at a time whatever the depth. On Windows
// the walk starts at the volume's root and opens each component relative to the directory handle
// before it as itself (FILE_OPEN_REPARSE_POINT): a junction or symlink anywhere on the way stops
// it (see walk-path.ts). None of these throws: an unexpected state is an answer ('error',
// undefined, a failed removal).
//
// Paths here are byte strings (one char code per byte, see `toBytes`), so that every name a file
// system can hold, valid UTF-8 or not, round-trips from a listing to a removal.
import { constants } from 'node:os';

import { inspectFallback, listFallback, makeFallback, readFallback, removeFallback, replaceFallback, scanFallback } from './beneath-fallback.js';
import type { EntryInfo, EntryKind, RepositoryScan, ScanNames } from './beneath-types.js';
import { loadNative } from '../native/load.js';
import type { NativeBinding, NativeFsKind } from '../native/types.js';
import { walkArgs } from './walk-path.js';
import { noteLook, noteRead, noteScan, recording } from './look-record.js';
import { oneRun } from './one-run.js';

export type { EntryInfo, EntryKind, RepositoryScan, ScanNames } from './beneath-types.js';
export { sameGitName } from './beneath-fallback.js';

const KINDS: Record<NativeFsKind, EntryKind> = { m: 'missing', f: 'file', d: 'dir', l: 'link', o: 'other', e: 'error' };

/** Any char code above 0x7f: an ASCII string is its own UTF-8 and its own byte string. */
const NOT_ASCII = /[^\x00-\x7f]/;

/** A (UTF-8) JS string as a byte string: one char code per byte. */
export function toBytes(path: string): string {
  // Most paths are ASCII: no buffer for them (a plan of many roots converts thousands per run).
  return NOT_ASCII.test(path) ? Buffer.from(path, 'utf8').toString('latin1') : path;
}

/** A byte string back to a JS string for people (invalid UTF-8 shows as U+FFFD). */
export function fromBytes(name: string): string {
  return NOT_ASCII.test(name) ? Buffer.from(name, 'latin1').toString('utf8') : name;
}

/** Whether the addon was told this process runs once (its scans then take no watch). */
let toldOneRun = false;

function native(): NativeBinding | undefined {
  try {
    const binding = loadNative();
    if (!toldOneRun && oneRun()) {
      // A watch costs more to take than this process's one later scan saves by it (one-run.ts).
      toldOneRun = true;
      binding.fsScanWatching?.(false);
    }
    return typeof binding.fsInspect === 'function' ? binding : undefined;
  } catch {
    return undefined;
  }
}

// process.platform: the walk's root is "/" on POSIX and the volume's root on Windows.
const WINDOWS = process.platform === 'win32';

/** The walk's [root, rel] for `path`; a Windows path naming no drive or share has none. */
function args(path: string): [string, string] | undefined {
  return walkArgs(path, WINDOWS);
}

/** What is at `path`, without following a link anywhere on the way. */
export function inspect(path: string): EntryInfo {
  const info = inspectOnce(path);
  // The guard's memo keeps a pass's answer only under what the pass looked at (look-record.ts).
  if (recording()) noteLook(path, info);
  return info;
}

function inspectOnce(path: string): EntryInfo {
  const binding = native();
  if (binding === undefined) return inspectFallback(path);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsInspect?.(...at) ?? null);
  if (r === null) return { kind: 'error', stamp: '' };
  return { kind: KINDS[r.kind] ?? 'error', stamp: r.stamp };
}

/** The looks of a batch, for the guard's memo (look-record.ts) when a pass is recorded. */
function noted(paths: readonly string[], found: EntryInfo[]): EntryInfo[] {
  if (recording()) for (let i = 0; i < paths.length; i++) noteLook(paths[i] as string, found[i] as EntryInfo);
  return found;
}

/** The path the batch walks for `path` on POSIX: "/" and what `args` gives below it. */
function posixWalkPath(path: string): string {
  // Most paths start with one slash: then that is the path itself (no regex, no copy).
  return path.charCodeAt(0) === 0x2f && path.charCodeAt(1) !== 0x2f ? path : `/${(args(path) as [string, string])[1]}`;
}

/**
 * What is at each of `paths`, as `inspect` one by one would answer, in one call: paths sharing a
 * directory share one no-follow walk to it, and directories sharing ancestors share their opens (a
 * pass over a thousand sibling roots opens each parent once, from the directory above it).
 */
export function inspectMany(paths: readonly string[]): EntryInfo[] {
  const all = WINDOWS ? [...paths] : paths.map(posixWalkPath);
  const r = paths.length === 0 ? null : (native()?.fsInspectMany?.(all) ?? null);
  if (r === null || r.length !== paths.length) return paths.map(inspect);
  return noted(paths, r.map((found) => ({ kind: KINDS[found[0] as NativeFsKind] ?? 'error', stamp: found.slice(1) })));
}

/** How many paths inspectManyWatched looked at and how many it answered from its memo (tests count them). */
export const watchedLookCounts = { looked: 0, answered: 0 };

/**
 * inspectMany for the existence and kind of entries at and near the top of write roots, looked at
 * before and after every run: the same answers, but where the platform can watch directories
 * (Linux inotify) a path missing below a watched directory, or a watched directory, whose watches
 * reported no change since it was last looked at is answered without a look (see
 * native/linux/watched_looks.cc for why that answer is the one a look would give). Files are
 * looked at every time. Without the addon's verb, every path is looked at.
 */
export function inspectManyWatched(paths: readonly string[]): EntryInfo[] {
  const verb = WINDOWS || paths.length === 0 || oneRun() ? undefined : native()?.fsInspectManyWatched;
  if (verb === undefined) return inspectMany(paths);
  const r = verb(paths.map(posixWalkPath));
  if (r === null || r.length !== paths.length + 1) return inspectMany(paths);
  const answered = r[paths.length] as number;
  watchedLookCounts.answered += answered;
  watchedLookCounts.looked += paths.length - answered;
  const out: EntryInfo[] = new Array<EntryInfo>(paths.length);
  for (let i = 0; i < paths.length; i++) {
    const found = r[i] as string;
    out[i] = { kind: KINDS[found[0] as NativeFsKind] ?? 'error', stamp: found.slice(1) };
  }
  return noted(paths, out);
}

/**
 * inspectMany (or `look`), taking the answers of `known` instead where it has one: a batch looked
 * at just before, in the same state (nothing was changed in between), that also read a few paths
 * more.
 */
export function inspectPast(known: ReadonlyMap<string, EntryInfo>, paths: readonly string[], look: (paths: readonly string[]) => EntryInfo[] = inspectMany): EntryInfo[] {
  const ask = paths.filter((path) => !known.has(path));
  const found = look(ask);
  let next = 0;
  return paths.map((path) => known.get(path) ?? (found[next++] as EntryInfo));
}

/**
 * The answers of one batched look (inspectMany) for a pass that then asks about those paths one
 * at a time within the same synchronous turn: each answer is given once, a path asked again (or
 * not in the batch) is looked at afresh, and after `drop` (call it as soon as the pass changes
 * anything on the file system) every ask looks afresh.
 */
export class Lookahead {
  readonly #known = new Map<string, EntryInfo>();

  /** `look`: how the batch is looked at (inspectMany, or a memo in front of it: see root-tops.ts). */
  constructor(paths: Iterable<string>, look: (paths: readonly string[]) => EntryInfo[] = inspectMany) {
    const unique = [...new Set(paths)];
    look(unique).forEach((info, i) => this.#known.set(unique[i] as string, info));
  }

  /** What is at `path`: the batch's answer the first time, else `inspect`. */
  take(path: string): EntryInfo {
    const known = this.#known.get(path);
    if (known === undefined) return inspect(path);
    this.#known.delete(path);
    return known;
  }

  drop(): void {
    this.#known.clear();
  }
}

/** The content of a regular file of at most `max` bytes at `path` (no link, FIFO or device). */
export function readSmall(path: string, max: number): Buffer | undefined {
  if (!recording()) return readSmallOnce(path, max);
  // Recorded for the guard's memo: the file's stamp before and after the read (look-record.ts).
  const before = inspectOnce(path);
  const bytes = readSmallOnce(path, max);
  if (bytes !== undefined || before.kind === 'file') noteRead(path, before, inspectOnce(path));
  else noteLook(path, before);
  return bytes;
}

function readSmallOnce(path: string, max: number): Buffer | undefined {
  const binding = native();
  if (binding === undefined) return readFallback(path, max);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsRead?.(...at, max) ?? null);
  return Buffer.isBuffer(r) ? r : undefined;
}

/**
 * Up to `max` entries of the directory at `path` (names as byte strings), kinds without following
 * links. Undefined when it is not a readable directory.
 */
export function listDir(path: string, max: number): Array<[string, EntryKind]> | undefined {
  // Recorded for the guard's memo as a look at the directory (look-record.ts): what it holds
  // changes only with its entries.
  const before = recording() ? inspectOnce(path) : undefined;
  const entries = listDirOnce(path, max);
  if (before !== undefined) noteLook(path, entries === undefined && before.kind === 'dir' ? { kind: 'error', stamp: '' } : before);
  return entries;
}

function listDirOnce(path: string, max: number): Array<[string, EntryKind]> | undefined {
  const binding = native();
  if (binding === undefined) return listFallback(path, max);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsList?.(...at, max) ?? null);
  if (!Array.isArray(r)) return undefined;
  return r.map(([name, kind]) => [name, KINDS[kind] ?? 'error']);
}

/** Removes the entry at `path` (a whole tree included); true when nothing is left there. */
export function removeEntry(path: string): boolean {
  handing?.drop();
  const binding = native();
  if (binding === undefined) return removeFallback(path);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsRemove?.(...at) ?? null);
  if (r === null) return false;
  return r.ok || inspect(path).kind === 'missing';
}

/**
 * removeEntry on a thread of the addon's own where it has one, so that the caller's event loop
 * does not wait for a tree of any size; elsewhere (Windows, the fallback) removeEntry itself.
 * Never rejects.
 */
export async function removeEntryAsync(path: string): Promise<boolean> {
  const verb = native()?.fsRemoveAsync;
  const at = verb === undefined ? undefined : args(path);
  if (verb === undefined || at === undefined) return removeEntry(path);
  handing?.drop();
  const r = await verb(...at);
  if (r === null || !('ok' in r)) return false;
  return r.ok || inspect(path).kind === 'missing';
}

/** Puts a regular file with `data` at `path` in place of whatever is there; true when it did. */
export function replaceFile(path: string, data: Buffer, mode = 0o644): boolean {
  handing?.drop();
  const binding = native();
  if (binding === undefined) return replaceFallback(path, data, mode);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsReplace?.(...at, data, mode) ?? null);
  return r !== null && r.ok;
}

/**
 * Makes a directory at `path` (an existing directory will do), or a symlink to `linkTarget` when
 * given (nothing may be there), in a parent reached without following any link; true when it did.
 */
export function makeEntry(path: string, mode: number, linkTarget?: string): boolean {
  handing?.drop();
  const binding = native();
  if (binding === undefined) return makeFallback(path, mode, linkTarget);
  const at = args(path);
  const r = at === undefined ? null : (binding.fsMake?.(...at, mode, linkTarget) ?? null);
  return r !== null && r.ok;
}

const NO_NAMES: ScanNames = { names: [], suffixes: [], skip: [], max: 0 };

/** A scan that found nothing: of a root holding nothing, or (incomplete) one that failed. */
function noRepositories(incomplete: boolean): RepositoryScan {
  return { worktrees: [], gitDirs: [], named: [], incomplete };
}

/**
 * Every repository under `root` (byte strings), walked without following links; `.git`
 * directories and git dirs are not entered. At most `maxDirs` directories and `maxRepos`
 * repositories, else `incomplete`. The addon remembers listings of unchanged directories, so a
 * repeated scan of a large tree costs about one stat per directory, or none for directories whose
 * inotify watch reported no change (Linux).
 */
export function scanRepositories(root: string, maxDirs: number, maxRepos: number, names: ScanNames = NO_NAMES): RepositoryScan {
  const scan = scanOnce(root, maxDirs, maxRepos, names);
  if (recording()) noteScan({ root, maxDirs, maxRepos, names, scan });
  return scan;
}

function scanOnce(root: string, maxDirs: number, maxRepos: number, names: ScanNames): RepositoryScan {
  const ahead = handing?.take(root, maxDirs, maxRepos, names);
  if (ahead !== undefined) return ahead;
  // A root that is missing or not a directory holds no repository.
  if (holdsNothing(root)) return noRepositories(false);
  const binding = native();
  if (binding?.fsScanGit === undefined) return scanFallback(root, maxDirs, maxRepos, names, listDir);
  const r = binding.fsScanGit(root, '', maxDirs, maxRepos, names.names, names.suffixes, names.skip, names.max);
  const scan = fromNativeScan(r, names);
  // Its size decides where the next scan made ahead of it runs (the after-run check's, of a run
  // whose look was made here): a small tree on this thread, not a round trip to the scan thread.
  if (r !== null && 'dirs' in r) noteSize(root, scan, r.dirs);
  return scan;
}

function holdsNothing(root: string): boolean {
  const kind = inspect(root).kind;
  return kind === 'missing' || kind === 'file' || kind === 'other';
}

function fromNativeScan(r: ReturnType<NonNullable<NativeBinding['fsScanGit']>>, names: ScanNames): RepositoryScan {
  // An addon without the named entries cannot answer for them: incomplete, when they are asked for.
  if (r === null || !('worktrees' in r) || (r.named === undefined && names.max > 0)) return noRepositories(true);
  const gone = r.errno === constants.errno.ENOENT || r.errno === constants.errno.ENOTDIR; // since the look above
  return { worktrees: r.worktrees, gitDirs: r.gitDirs, named: r.named ?? [], incomplete: r.truncated || (r.errno !== 0 && !gone) };
}

/**
 * scanRepositories with the walk on the addon's scan thread: the answer scanRepositories gives when
 * called at the moment the walk runs (the same walk, under the addon's one lock; its memory of
 * listings is shared). Where the addon has no such verb, the scan runs on this thread. Never rejects.
 */
export async function scanRepositoriesAsync(root: string, maxDirs: number, maxRepos: number, names: ScanNames = NO_NAMES): Promise<RepositoryScan> {
  return (await scanOffThread(root, maxDirs, maxRepos, names)).scan;
}

/** scanRepositoriesAsync, with how many directories the walk looked at (Infinity when unknown). */
async function scanOffThread(root: string, maxDirs: number, maxRepos: number, names: ScanNames): Promise<{ scan: RepositoryScan; dirs: number }> {
  if (holdsNothing(root)) return { scan: noRepositories(false), dirs: 0 };
  const verb = native()?.fsScanGitAsync;
  if (verb === undefined) return { scan: scanRepositories(root, maxDirs, maxRepos, names), dirs: Infinity };
  try {
    const r = await verb(root, '', maxDirs, maxRepos, names.names, names.suffixes, names.skip, names.max);
    return { scan: fromNativeScan(r, names), dirs: r !== null && 'dirs' in r ? r.dirs : Infinity };
  } catch {
    return { scan: noRepositories(true), dirs: Infinity };
  }
}

/**
 * A tree of at most this many directories is walked on the caller's thread when its scan is made
 * ahead: the walk of a small remembered tree (a stat or less per directory) costs less than the
 * hop to the scan thread and back (a wake-up of each thread and a turn of the event loop, twice
 * per run).
 */
const CALLER_THREAD_SCAN_DIRS = 64;

/** Roots (byte strings) whose last scan looked at no more than CALLER_THREAD_SCAN_DIRS directories; at most SMALL_ROOTS. */
const smallRoots = new Set<string>();
const SMALL_ROOTS = 1024;

/** How many scans made ahead ran on the caller's thread and how many on the scan thread (tests count them). */
export const aheadScanCounts = { here: 0, offThread: 0 };

/**
 * The scan of a root last seen small, on this thread: undefined when the tree has grown past
 * CALLER_THREAD_SCAN_DIRS (the walk stops there, and it is made on the scan thread instead) or the
 * scan thread is walking (this thread never waits for it). A complete answer under the lower
 * directory limit is the answer under the higher one: the same walk, in the same order.
 */
function scanHere(root: string, maxDirs: number, maxRepos: number, names: ScanNames): RepositoryScan | undefined {
  const verb = native()?.fsScanGit;
  if (verb === undefined || maxDirs <= 0) return undefined;
  if (holdsNothing(root)) return noRepositories(false);
  const r = verb(root, '', Math.min(maxDirs, CALLER_THREAD_SCAN_DIRS), maxRepos, names.names, names.suffixes, names.skip, names.max, true);
  if (r === null || !('worktrees' in r) || r.truncated) {
    if (r === null || 'worktrees' in r) smallRoots.delete(root); // not a busy answer: grown, or a fault
    return undefined;
  }
  return fromNativeScan(r, names);
}

/** Notes how many directories the scan of `root` looked at, for the next scan made ahead of it. */
function noteSize(root: string, scan: RepositoryScan, dirs: number): void {
  if (scan.incomplete || dirs > CALLER_THREAD_SCAN_DIRS) return void smallRoots.delete(root);
  if (smallRoots.size >= SMALL_ROOTS && !smallRoots.has(root)) smallRoots.delete(smallRoots.values().next().value as string);
  smallRoots.add(root);
}

/** Which roots a pass scans, in its order: one walked with an earlier root's scan is not scanned again. */
export interface ScanCover {
  covers(root: string): boolean;
  add(root: string, gitDirs: readonly string[]): void;
}

/** The ScansAhead whose answers scanRepositories hands out now (within its `use`). */
let handing: ScansAhead | undefined;

/**
 * The repository scans of a synchronous pass (the git guard's look before a run, the check after
 * it), made before it on the addon's scan thread, so that the caller's thread does not walk the
 * tree (a tree last seen small is walked here: see CALLER_THREAD_SCAN_DIRS). Make
 * them where the pass's own scans would be right (the notes' window is open; the sandbox is gone):
 * each answer is then the one the pass would have had at that moment, from a look at no other
 * moment than one the pass itself could have made it at. Within `use`, each is handed once to the
 * scanRepositories call asking the same (root, limits, names); after any change made through this
 * module (removeEntry, replaceFile, makeEntry), none is: a look after a change is made afresh.
 */
export class ScansAhead {
  readonly #ready = new Map<string, { maxDirs: number; maxRepos: number; names: ScanNames; scan: RepositoryScan }>();

  /** The scans of `roots` (byte strings) in the pass's order, `cover` deciding which it scans. */
  static async make(roots: readonly string[], maxDirs: number, maxRepos: number, names: ScanNames, cover: ScanCover): Promise<ScansAhead> {
    const ahead = new ScansAhead();
    for (const root of roots) {
      if (cover.covers(root)) continue;
      let scan = smallRoots.has(root) ? scanHere(root, maxDirs, maxRepos, names) : undefined;
      if (scan !== undefined) aheadScanCounts.here++;
      else {
        const off = await scanOffThread(root, maxDirs, maxRepos, names);
        aheadScanCounts.offThread++;
        noteSize(root, off.scan, off.dirs);
        scan = off.scan;
      }
      cover.add(root, scan.gitDirs);
      ahead.#ready.set(root, { maxDirs, maxRepos, names, scan });
    }
    return ahead;
  }

  /** Runs `pass` with these answers handed to its scans. */
  use<T>(pass: () => T): T {
    const before = handing;
    handing = this;
    try {
      return pass();
    } finally {
      handing = before;
      this.#ready.clear();
    }
  }

  /** The answer for exactly this ask, once; undefined otherwise. */
  take(root: string, maxDirs: number, maxRepos: number, names: ScanNames): RepositoryScan | undefined {
    const ready = this.#ready.get(root);
    if (ready === undefined || ready.maxDirs !== maxDirs || ready.maxRepos !== maxRepos || ready.names !== names) return undefined;
    this.#ready.delete(root);
    return ready.scan;
  }

  /** Something changed: no answer is handed out any more. */
  drop(): void {
    this.#ready.clear();
  }
}
