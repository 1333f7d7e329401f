// SPDX-License-Identifier: MIT
// Directory listings remembered across calls while the directory is unchanged: the credential
// deny set and the Landlock read tree list the same few directories (the home directory,
// ~/.config, ...) on every run. A listing is reused only while the directory's inode, mtime and
// ctime are what they were (adding, removing or renaming an entry changes them); a stale answer
// could only miss an entry made within one timestamp tick, which then gets no read grant.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { logListed, logLooked } from './sandbox/look-log.js';

/** An entry of a directory: its name and what it is (symlinks not followed). */
export interface DirEntry {
  name: string;
  kind: 'dir' | 'file' | 'symlink';
}

const listings = new Map<string, { stamp: string; entries: DirEntry[]; names: Set<string> }>();
const LISTINGS_KEPT = 64;

function listing(dir: string): { entries: DirEntry[]; names: Set<string> } | undefined {
  let stamp: string;
  try {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory()) return undefined;
    stamp = `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return undefined;
  }
  const known = listings.get(dir);
  if (known !== undefined && known.stamp === stamp) return known;
  let entries: DirEntry[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).map((entry): DirEntry => {
      if (entry.isSymbolicLink()) return { name: entry.name, kind: 'symlink' };
      if (entry.isDirectory()) return { name: entry.name, kind: 'dir' };
      if (entry.isFile() || entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) return { name: entry.name, kind: 'file' };
      // d_type unknown on this filesystem: ask.
      const st = lstatSync(join(dir, entry.name), { throwIfNoEntry: false });
      return { name: entry.name, kind: st?.isSymbolicLink() === true ? 'symlink' : st?.isDirectory() === true ? 'dir' : 'file' };
    });
  } catch {
    return undefined;
  }
  const value = { stamp, entries, names: new Set(entries.map((entry) => entry.name)) };
  listings.delete(dir);
  if (listings.size >= LISTINGS_KEPT) listings.delete(listings.keys().next().value as string);
  listings.set(dir, value);
  return value;
}

/** The entries of a directory, or undefined when it is missing, not a directory or unlistable. */
export function listDirEntries(dir: string): DirEntry[] | undefined {
  return logged(dir, listing(dir))?.entries;
}

/** The entry names of a directory, or undefined when it is missing, not a directory or unlistable. */
export function listDirNames(dir: string): ReadonlySet<string> | undefined {
  return logged(dir, listing(dir))?.names;
}

/** A listing as an open look log notes it (look-log.ts): its entries, or the directory's absence. */
function logged<T>(dir: string, found: T | undefined): T | undefined {
  if (found === undefined) logLooked(dir);
  else logListed(dir);
  return found;
}
