// SPDX-License-Identifier: MIT
// The reads an AppContainer gets beyond what ALL APPLICATION PACKAGES may read (the Windows and
// Program Files directories). Read-all cannot be granted on a whole volume by ACL (it would rewrite
// every ACL on the drive), so the read set is these, each for a stated reason:
// - traverse (this folder only: traverse, read attributes; no listing, no file contents) on every
//   directory above a write root or extra read root, because Node's module loader and realpath
//   lstat each ancestor, and `cd` into a root needs them;
// - read of the directories on the command's PATH and of the directory of the running node.exe,
//   so tools installed under the user's profile or a tool cache start;
// - read of the user's git config files, so git has the user's identity and settings.
// A PATH entry that is a volume root, or the user's profile or a directory above it, is not granted
// (it would open every file of the user), and nothing at or below a denyRead path is granted (an
// explicit allow on a child would beat the deny it inherits). Grants on
// directories the user may not change the ACL of (WRITE_DAC refused) are skipped: reads are then
// narrower, never wider.
import { win32 } from 'node:path';

import type { AclEntry } from './acl-entry.js';

/** What the read set is built from (the caller's facts; nothing here touches the file system). */
export interface WindowsReadGrantInput {
  /** Write roots and extra read roots, absolute and normalised. */
  roots: readonly string[];
  /** The command's PATH (`;`-separated). */
  path: string;
  /** The user's profile directory (USERPROFILE), when known. */
  home?: string;
  /** The directory of the node.exe running zero-sandbox. */
  execDir?: string;
  /** Directories ALL APPLICATION PACKAGES already read (SystemRoot, Program Files): never granted. */
  systemDirs?: readonly string[];
  /**
   * The deny-read paths. Nothing at or below one is granted: an explicit allow ACE on a child
   * would take precedence over the deny ACE it inherits from the denied directory.
   */
  denied?: readonly string[];
}

const lower = (path: string): string => path.toLowerCase();
const within = (parent: string, child: string): boolean => {
  const p = lower(parent).replace(/\\$/, '');
  const c = lower(child);
  return c === p || c.startsWith(`${p}\\`);
};

/** An absolute, normalised drive-letter or UNC path without a trailing backslash, else undefined. */
function clean(raw: string): string | undefined {
  const trimmed = raw.trim().replace(/^"(.*)"$/, '$1');
  if (trimmed === '' || trimmed.includes('\0') || trimmed.includes('%')) return undefined;
  if (!/^[A-Za-z]:\\/.test(trimmed) && !/^\\\\[^\\?.]+\\[^\\]+/.test(trimmed)) return undefined;
  const normal = win32.normalize(trimmed).replace(/(.)\\+$/, '$1');
  return normal.split('\\').some((part) => part === '..') ? undefined : normal;
}

function isVolumeRoot(path: string): boolean {
  return /^[A-Za-z]:\\?$/.test(path) || /^\\\\[^\\]+\\[^\\]+\\?$/.test(path);
}

/** The directories strictly between the volume (or share) root and `path`, outermost first. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  let current = win32.dirname(path);
  while (!isVolumeRoot(current) && current !== win32.dirname(current)) {
    out.unshift(current);
    current = win32.dirname(current);
  }
  return out;
}

/** The read set, as ACL entries (see the file comment for each kind's reason). */
export function buildWindowsReadGrants(input: WindowsReadGrantInput): AclEntry[] {
  const entries: AclEntry[] = [];
  const seen = new Set<string>();
  const system = (input.systemDirs ?? []).map(clean).filter((dir): dir is string => dir !== undefined);
  const home = input.home === undefined ? undefined : clean(input.home);
  const denied = (input.denied ?? []).map(clean).filter((dir): dir is string => dir !== undefined);
  const add = (kind: AclEntry['kind'], path: string, ifMissing: AclEntry['ifMissing']): void => {
    if (denied.some((d) => within(d, path))) return;
    const key = `${kind}\0${lower(path)}`;
    if (seen.has(key)) return;
    seen.add(key);
    entries.push({ kind, path, ifMissing });
  };
  const readable = (dir: string): boolean =>
    !isVolumeRoot(dir) && !system.some((s) => within(s, dir)) && !(home !== undefined && within(dir, home));
  for (const root of input.roots) {
    const normal = clean(root);
    if (normal !== undefined) for (const dir of ancestors(normal)) add('allow-traverse', dir, 'best-effort');
  }
  const dirs = [...input.path.split(';'), ...(input.execDir === undefined ? [] : [input.execDir])];
  for (const raw of dirs) {
    const dir = clean(raw);
    if (dir === undefined || !readable(dir)) continue;
    for (const up of ancestors(dir)) add('allow-traverse', up, 'best-effort');
    add('allow-read', dir, 'best-effort');
  }
  if (home !== undefined && !isVolumeRoot(home)) {
    for (const file of [win32.join(home, '.gitconfig'), win32.join(home, '.config', 'git', 'config')]) {
      for (const up of ancestors(file)) add('allow-traverse', up, 'best-effort');
      add('allow-read', file, 'best-effort');
    }
  }
  return entries;
}
