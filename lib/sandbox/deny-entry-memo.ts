// SPDX-License-Identifier: MIT
// The kinds of a plan's deny entries (plan.ts lookAtDenyEntries), kept across the runs of this
// process: a policy names the same thousand files run after run, and a look at each is a walk to
// its directory and a stat (about 10 us an entry, most of the plan's cost).
//
// Why a kept kind is the kind a look would give now (Linux). A kind is kept with the stamp of the
// entry's directory, read BEFORE the entry was looked at, by a walk from "/" that follows no link
// (or given by the watched looks, which answer as that walk would: beneath.ts
// inspectManyWatched). The stamp is read anew for every run: a walk that reaches the directory
// now, with no link anywhere on the way (it stops at one and gives no directory stamp), as the
// same directory (device and inode), whose entries were not changed since (size, mtime and ctime:
// a directory's change with every entry made, removed or renamed in it, and no system call sets a
// ctime back), leads to the same entry under the same name, not replaced: what it is (a directory
// or not, never a link) is what it was, and the path is still its own real path. Directories
// higher up may change meanwhile (a file made in /tmp) without a look at every entry below them.
// A stamp is trusted only when the directory was last changed more than RACY_NANOS before it was
// read (root-tops.ts), so a later change lands on a later clock tick. A file system mounted on the
// way changes the device of the stamp. Only entries the look found as a file, a directory or
// another non-link kind are kept; a missing entry, a link or an error is looked at every time
// (and refused or resolved by the plan).
import { inspectMany, inspectManyWatched, type EntryInfo } from './beneath.js';
import { dropsOldest } from './kept-bounds.js';
import { settledStamp } from './root-tops.js';

/** What the plan learns of an entry from a look: a directory or not, never a link. */
export type DenyEntryKind = 'dir' | 'nondir';

interface Kept {
  /** The directories of the entries, each once. */
  dirs: string[];
  /** Their stamps, read before the kinds were looked at; undefined for one that could not vouch. */
  stamps: Array<string | undefined>;
  /** Per entry: its kind, or undefined when it is looked at every time. */
  kinds: Array<DenyEntryKind | undefined>;
  /** Per entry: the index in `dirs` of its directory (-1 for an entry directly in "/"). */
  parents: number[];
}

const kept = new Map<string, Kept>();

/** The wall clock the settled rule reads (ns); tests move it to reach stamps they just made. */
export const denyEntryMemoClock = { now: (): bigint => BigInt(Date.now()) * 1_000_000n };

/** How many entries the memo answered and how many were looked at (tests count them). */
export const denyEntryMemoCounts = { answered: 0, looked: 0 };

/** The kind a look gives of an entry the plan may take as its own real path, else undefined. */
function kindOf(info: EntryInfo | undefined): DenyEntryKind | undefined {
  if (info === undefined) return undefined;
  if (info.kind === 'dir') return 'dir';
  return info.kind === 'file' || info.kind === 'other' ? 'nondir' : undefined;
}

/** The directories of `paths` (clean, absolute) below "/", each once, and each path's index among them. */
function directoriesOf(paths: readonly string[]): { dirs: string[]; parents: number[] } {
  const index = new Map<string, number>();
  const dirs: string[] = [];
  const parents = paths.map((path) => {
    const end = path.lastIndexOf('/');
    if (end <= 0) return -1; // "/" itself is not stamped by the walk below it
    const dir = path.slice(0, end);
    let at = index.get(dir);
    if (at === undefined) {
      at = dirs.length;
      index.set(dir, at);
      dirs.push(dir);
    }
    return at;
  });
  return { dirs, parents };
}

/**
 * For each of `paths` (clean, absolute, ASCII: walked as their own bytes), what `inspectMany`
 * would say of it now, as far as the plan uses it: 'dir', 'nondir' (a file or another entry that
 * is not a link) or undefined (missing, a link on the way, an error). An entry whose directory has
 * the stamp it had when the entry was last looked at, settled, is answered without a look (see the header); the others are looked at in one batch. Linux only: elsewhere every entry
 * is looked at.
 */
export function denyEntryKinds(paths: readonly string[]): Array<DenyEntryKind | undefined> {
  // process.platform: a directory's mtime and ctime move with its entries on Linux (see the header).
  if (process.platform !== 'linux') return inspectMany(paths).map(kindOf);
  const key = paths.join('\0');
  const before = kept.get(key);
  const { dirs, parents } = before ?? directoriesOf(paths);
  // Read before any look below: a change made after this read gives another stamp next time.
  const now = denyEntryMemoClock.now();
  // A stamp kept was settled when it was read, and so is the same stamp read later.
  const stamps = inspectManyWatched(dirs).map((info, i) => (info.kind === 'dir' && info.stamp === before?.stamps[i]) || settledStamp(info, now) ? info.stamp : undefined);
  const vouched = before === undefined ? undefined : stamps.map((stamp, i) => stamp !== undefined && stamp === before.stamps[i]);
  const kinds = new Array<DenyEntryKind | undefined>(paths.length);
  const ask: number[] = [];
  for (let i = 0; i < paths.length; i++) {
    const known = before?.kinds[i];
    const parent = parents[i] as number;
    if (known !== undefined && vouched !== undefined && parent >= 0 && vouched[parent] === true) kinds[i] = known;
    else ask.push(i);
  }
  if (ask.length > 0) {
    const found = inspectMany(ask.map((i) => paths[i] as string));
    ask.forEach((i, k) => {
      kinds[i] = kindOf(found[k]);
    });
  }
  denyEntryMemoCounts.answered += paths.length - ask.length;
  denyEntryMemoCounts.looked += ask.length;
  // Least recently used goes first; each list weighs its entries (kept-bounds.ts).
  kept.delete(key);
  while (dropsOldest(kept.size, [...kept.values()].reduce((sum, k) => sum + k.kinds.length, 0), paths.length)) kept.delete(kept.keys().next().value as string);
  // Every kind given now is the state at or after the stamps just read: they vouch for all of them.
  kept.set(key, { dirs, stamps, kinds: [...kinds], parents });
  return kinds;
}
