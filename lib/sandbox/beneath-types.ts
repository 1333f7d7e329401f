// SPDX-License-Identifier: MIT
// The answers of the host-side walk (beneath.ts) and of its node:fs fallback (beneath-fallback.ts).

export type EntryKind = 'missing' | 'file' | 'dir' | 'link' | 'other' | 'error';

export interface EntryInfo {
  kind: EntryKind;
  /** dev:ino:size:mtime:ctime: equal stamps mean the entry was not changed in between. */
  stamp: string;
}

/** Repositories inside a directory tree (see scanRepositories). */
export interface RepositoryScan {
  /** Directories holding a `.git` entry. */
  worktrees: string[];
  /** Directories that are git dirs themselves (HEAD, objects, refs of any kind): bare repositories. */
  gitDirs: string[];
  /** Entries (of any kind) named as `ScanNames` asks: absolute byte strings. */
  named: string[];
  /** A limit was reached or the root could not be read: the answer is incomplete. */
  incomplete: boolean;
}

/**
 * Entries the scan reports besides repositories, found in the same walk: named one of `names` or
 * ending in one of `suffixes` (case-folded where the file system folds case: macOS, Windows),
 * except in directories below one named in `skip`. At most `max`, else the scan is incomplete.
 */
export interface ScanNames {
  names: readonly string[];
  suffixes: readonly string[];
  skip: readonly string[];
  max: number;
}
