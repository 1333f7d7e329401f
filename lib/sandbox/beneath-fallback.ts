// SPDX-License-Identifier: MIT
// Without the addon's walk (an addon that failed to load, or an older build without the file
// verbs): the closest node:fs equivalents of beneath.ts's verbs, never throwing. A link or junction
// on the way stops each of them as it stops the walk (node:fs would follow it): every directory
// above the path is looked at without following it first. These run once every process of the
// sandbox is gone, so nothing of that run can swap a directory between the look and the use; a run
// of the same workspace still in flight could (see the README), which only the walk rules out.
import { lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { EntryInfo, EntryKind, RepositoryScan, ScanNames } from './beneath-types.js';

// process.platform: Windows file names are case-insensitive (the scan below runs there).
const WINDOWS = process.platform === 'win32';

function fsPath(path: string): Buffer {
  return Buffer.from(path, 'latin1');
}

/** Whether a directory above `path` is a link (or junction), or cannot be looked at. */
function linkOnTheWay(path: string): boolean {
  const above: string[] = [];
  for (let dir = dirname(path); dirname(dir) !== dir; dir = dirname(dir)) above.push(dir);
  for (const dir of above.reverse()) {
    try {
      const st = lstatSync(fsPath(dir), { throwIfNoEntry: false });
      if (st === undefined) return false; // missing from here on: nothing below it to reach
      if (st.isSymbolicLink() || !st.isDirectory()) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * Whether a listed name is `wanted` for the file system: on Windows (NTFS, and the case-insensitive
 * volumes of macOS) `.GIT` is what host git opens as `.git`; elsewhere a false match only guards
 * more. The one name comparison of the fallback scan.
 */
export function sameGitName(name: string, wanted: string, foldCase: boolean): boolean {
  return name === wanted || (foldCase && name.length === wanted.length && name.toLowerCase() === wanted.toLowerCase());
}

const FOLD_CASE = WINDOWS || process.platform === 'darwin';

export function inspectFallback(path: string): EntryInfo {
  if (linkOnTheWay(path)) return { kind: 'error', stamp: '' };
  try {
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false, bigint: true });
    if (st === undefined) return { kind: 'missing', stamp: '' };
    const kind: EntryKind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
    return { kind, stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` };
  } catch {
    return { kind: 'error', stamp: '' };
  }
}

export function makeFallback(path: string, mode: number, linkTarget: string | undefined): boolean {
  try {
    if (linkTarget !== undefined) symlinkSync(fsPath(linkTarget), fsPath(path));
    else mkdirSync(fsPath(path), { mode });
    return true;
  } catch (error) {
    return linkTarget === undefined && (error as NodeJS.ErrnoException).code === 'EEXIST' && inspectFallback(path).kind === 'dir';
  }
}

export function replaceFallback(path: string, data: Buffer, mode: number): boolean {
  if (linkOnTheWay(path)) return false;
  try {
    rmSync(fsPath(path), { recursive: true, force: true });
    writeFileSync(fsPath(path), data, { mode, flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

/** Whether a listed name is one `names` asks for (suffixes match a longer name's end). */
function isNamed(name: string, names: ScanNames): boolean {
  if (names.names.some((wanted) => sameGitName(name, wanted, FOLD_CASE))) return true;
  return names.suffixes.some((suffix) => name.length > suffix.length && sameGitName(name.slice(-suffix.length), suffix, FOLD_CASE));
}

export function scanFallback(root: string, maxDirs: number, maxRepos: number, names: ScanNames, listDir: (path: string, max: number) => Array<[string, EntryKind]> | undefined): RepositoryScan {
  const out: RepositoryScan = { worktrees: [], gitDirs: [], named: [], incomplete: false };
  const stack: Array<[string, boolean]> = [[root, false]];
  let dirs = 0;
  while (stack.length > 0) {
    const [dir, skip] = stack.pop() as [string, boolean];
    if (++dirs > maxDirs) return { ...out, incomplete: true };
    // Through the walk where the addon has it (Windows: it has no native scan), else node:fs.
    const entries = listDir(dir, Number.MAX_SAFE_INTEGER);
    if (entries === undefined) continue; // unreadable or missing: host git cannot enter it either
    const kindOf = (wanted: string): EntryKind | undefined => entries.find(([name]) => sameGitName(name, wanted, FOLD_CASE))?.[1];
    for (const [name] of skip ? [] : entries) {
      if (sameGitName(name, '.git', FOLD_CASE) || !isNamed(name, names)) continue;
      if (out.named.length >= names.max) return { ...out, incomplete: true };
      out.named.push(join(dir, name));
    }
    if (kindOf('.git') !== undefined) out.worktrees.push(dir);
    // As the addon: objects and refs of any kind make a git dir (git follows links there, and
    // on Windows does not test the execute bit); only real directories stop the walk.
    const gitDir = kindOf('HEAD') !== undefined && kindOf('objects') !== undefined && kindOf('refs') !== undefined;
    if (gitDir) out.gitDirs.push(dir);
    if (out.worktrees.length + out.gitDirs.length > maxRepos) return { ...out, incomplete: true };
    if (gitDir && kindOf('objects') === 'dir' && kindOf('refs') === 'dir') continue;
    for (const [name, kind] of entries) {
      if (kind === 'dir' && !sameGitName(name, '.git', FOLD_CASE)) stack.push([join(dir, name), skip || names.skip.some((s) => sameGitName(name, s, FOLD_CASE))]);
    }
  }
  return out;
}

export function readFallback(path: string, max: number): Buffer | undefined {
  if (linkOnTheWay(path)) return undefined;
  try {
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || st.size > max) return undefined;
    return readFileSync(fsPath(path));
  } catch {
    return undefined;
  }
}

export function listFallback(path: string, max: number): Array<[string, EntryKind]> | undefined {
  if (linkOnTheWay(path)) return undefined;
  try {
    // No link followed at the directory itself either.
    if (lstatSync(fsPath(path), { throwIfNoEntry: false })?.isDirectory() !== true) return undefined;
    return readdirSync(fsPath(path), { withFileTypes: true, encoding: 'buffer' }).slice(0, max).map((d) => [d.name.toString('latin1'), d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'link' : 'other']);
  } catch {
    return undefined;
  }
}

export function removeFallback(path: string): boolean {
  if (linkOnTheWay(path)) return false;
  try {
    rmSync(fsPath(path), { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}
