// SPDX-License-Identifier: MIT
// Host-side reads, checks and removals of paths inside write roots. A sandboxed command (this
// run's, an earlier one's, or one still running in the same workspace) may have left links,
// FIFOs or trees of any shape there, so these go through the addon's descriptor walk: every
// component is opened with O_NOFOLLOW from "/", a link anywhere stops the walk, a FIFO is never
// opened for reading, and removal holds one descriptor at a time whatever the depth. None of
// these throws: an unexpected state is an answer ('error', undefined, a failed removal).
//
// Paths here are byte strings (one char code per byte, see `toBytes`), so that every name a file
// system can hold, valid UTF-8 or not, round-trips from a listing to a removal.
import { lstatSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';

import { loadNative } from '../native/load.js';
import type { NativeBinding, NativeFsKind } from '../native/types.js';

export type EntryKind = 'missing' | 'file' | 'dir' | 'link' | 'other' | 'error';

export interface EntryInfo {
  kind: EntryKind;
  /** dev:ino:size:mtime:ctime: equal stamps mean the entry was not changed in between. */
  stamp: string;
}

const KINDS: Record<NativeFsKind, EntryKind> = { m: 'missing', f: 'file', d: 'dir', l: 'link', o: 'other', e: 'error' };

/** A (UTF-8) JS string as a byte string: one char code per byte. */
export function toBytes(path: string): string {
  return Buffer.from(path, 'utf8').toString('latin1');
}

/** A byte string back to a JS string for people (invalid UTF-8 shows as U+FFFD). */
export function fromBytes(name: string): string {
  return Buffer.from(name, 'latin1').toString('utf8');
}

function fsPath(path: string): Buffer {
  return Buffer.from(path, 'latin1');
}

function native(): NativeBinding | undefined {
  try {
    const binding = loadNative();
    return typeof binding.fsInspect === 'function' ? binding : undefined;
  } catch {
    return undefined;
  }
}

function split(path: string): string {
  return path.replace(/^\/+/, '');
}

/** What is at `path`, without following a link anywhere on the way. */
export function inspect(path: string): EntryInfo {
  const binding = native();
  if (binding === undefined) return inspectFallback(path);
  const r = binding.fsInspect?.('/', split(path)) ?? null;
  if (r === null) return { kind: 'error', stamp: '' };
  return { kind: KINDS[r.kind] ?? 'error', stamp: r.stamp };
}

/** The content of a regular file of at most `max` bytes at `path` (no link, FIFO or device). */
export function readSmall(path: string, max: number): Buffer | undefined {
  const binding = native();
  if (binding === undefined) return readFallback(path, max);
  const r = binding.fsRead?.('/', split(path), max) ?? null;
  return Buffer.isBuffer(r) ? r : undefined;
}

/**
 * Up to `max` entries of the directory at `path` (names as byte strings), kinds without following
 * links. Undefined when it is not a readable directory.
 */
export function listDir(path: string, max: number): Array<[string, EntryKind]> | undefined {
  const binding = native();
  if (binding === undefined) return listFallback(path, max);
  const r = binding.fsList?.('/', split(path), max) ?? null;
  if (!Array.isArray(r)) return undefined;
  return r.map(([name, kind]) => [name, KINDS[kind] ?? 'error']);
}

/** Removes the entry at `path` (a whole tree included); true when nothing is left there. */
export function removeEntry(path: string): boolean {
  const binding = native();
  if (binding === undefined) return removeFallback(path);
  const r = binding.fsRemove?.('/', split(path)) ?? null;
  if (r === null) return false;
  return r.ok || inspect(path).kind === 'missing';
}

/** Puts a regular file with `data` at `path` in place of whatever is there; true when it did. */
export function replaceFile(path: string, data: Buffer, mode = 0o644): boolean {
  const binding = native();
  if (binding === undefined) return replaceFallback(path, data, mode);
  const r = binding.fsReplace?.('/', split(path), data, mode) ?? null;
  return r !== null && r.ok;
}

/** Repositories inside a directory tree (see scanRepositories). */
export interface RepositoryScan {
  /** Directories holding a `.git` entry. */
  worktrees: string[];
  /** Directories that are git dirs themselves (HEAD, objects, refs of any kind): bare repositories. */
  gitDirs: string[];
  /** A limit was reached or the root could not be read: the answer is incomplete. */
  incomplete: boolean;
}

/**
 * Every repository under `root` (byte strings), walked without following links; `.git`
 * directories and git dirs are not entered. At most `maxDirs` directories and `maxRepos`
 * repositories, else `incomplete`. The addon remembers listings of unchanged directories, so a
 * repeated scan of a large tree costs about one stat per directory, or none for directories whose
 * inotify watch reported no change (Linux).
 */
export function scanRepositories(root: string, maxDirs: number, maxRepos: number): RepositoryScan {
  // A root that is missing or not a directory holds no repository.
  const kind = inspect(root).kind;
  if (kind === 'missing' || kind === 'file' || kind === 'other') return { worktrees: [], gitDirs: [], incomplete: false };
  const binding = native();
  if (binding?.fsScanGit === undefined) return scanFallback(root, maxDirs, maxRepos);
  const r = binding.fsScanGit(root, '', maxDirs, maxRepos);
  if (r === null || !('worktrees' in r)) return { worktrees: [], gitDirs: [], incomplete: true };
  const gone = r.errno === constants.errno.ENOENT || r.errno === constants.errno.ENOTDIR; // since the look above
  return { worktrees: r.worktrees, gitDirs: r.gitDirs, incomplete: r.truncated || (r.errno !== 0 && !gone) };
}

// Platforms without the descriptor walk (Windows): the closest node:fs equivalents, never throwing.
function inspectFallback(path: string): EntryInfo {
  try {
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false, bigint: true });
    if (st === undefined) return { kind: 'missing', stamp: '' };
    const kind: EntryKind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
    return { kind, stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` };
  } catch {
    return { kind: 'error', stamp: '' };
  }
}

function replaceFallback(path: string, data: Buffer, mode: number): boolean {
  try {
    rmSync(fsPath(path), { recursive: true, force: true });
    writeFileSync(fsPath(path), data, { mode, flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

function scanFallback(root: string, maxDirs: number, maxRepos: number): RepositoryScan {
  const out: RepositoryScan = { worktrees: [], gitDirs: [], incomplete: false };
  const stack = [root];
  let dirs = 0;
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    if (++dirs > maxDirs) return { ...out, incomplete: true };
    const entries = listFallback(dir, Number.MAX_SAFE_INTEGER);
    if (entries === undefined) continue; // unreadable or missing: host git cannot enter it either
    const names = new Map(entries);
    if (names.has('.git')) out.worktrees.push(dir);
    // As the addon: objects and refs of any kind make a git dir (git follows links there, and
    // on Windows does not test the execute bit); only real directories stop the walk.
    const gitDir = names.has('HEAD') && names.has('objects') && names.has('refs');
    if (gitDir) out.gitDirs.push(dir);
    if (out.worktrees.length + out.gitDirs.length > maxRepos) return { ...out, incomplete: true };
    if (gitDir && names.get('objects') === 'dir' && names.get('refs') === 'dir') continue;
    for (const [name, kind] of entries) if (kind === 'dir' && name !== '.git') stack.push(`${dir}/${name}`);
  }
  return out;
}

function readFallback(path: string, max: number): Buffer | undefined {
  try {
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || st.size > max) return undefined;
    return readFileSync(fsPath(path));
  } catch {
    return undefined;
  }
}

function listFallback(path: string, max: number): Array<[string, EntryKind]> | undefined {
  try {
    return readdirSync(fsPath(path), { withFileTypes: true, encoding: 'buffer' }).slice(0, max).map((d) => [d.name.toString('latin1'), d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'link' : 'other']);
  } catch {
    return undefined;
  }
}

function removeFallback(path: string): boolean {
  try {
    rmSync(fsPath(path), { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}
