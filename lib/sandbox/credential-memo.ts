// SPDX-License-Identifier: MIT
// The credential deny set of a plan (credential-deny.ts) is the same run after run: the same environment,
// the same write roots, the same few directories listed and paths looked up (the home directory,
// ~/.config, /etc/ssh, ...). This keeps it across the runs of this process, under the stamps of
// every path it looked at, and gives it again while those stamps are the same.
//
// Why that is sound (Linux): the stamps are read by a walk from "/" that follows no link, for
// every path the computation asked about and every directory above them. A directory's stamp
// (dev, inode, size, mtime, ctime) changes with every entry made, removed or renamed in it, and no
// system call sets a ctime back; it is trusted only when the directory was last changed more than
// RACY_NANOS before it was read (root-tops.ts), so a change after the read lands on a later tick.
// A file or other entry is compared by kind, device and inode (what the deny set uses of it is
// that it exists, not its content). Any link, error or unsettled directory on the way: no memo.
// The stamps that vouch for a kept set were read BEFORE it was computed (the previous run's paths,
// read again for this run), so a change made while it was computed gives other stamps next time.
// A command that writes in a write root the set looked into changes a stamp there: the next run
// computes afresh. Another host process changing the home directory does the same.
import { lstatSync } from 'node:fs';

import { isAscii, isCleanAbsolute } from '../path-within.js';
import { sameList } from '../same-lists.js';
import { inspectMany, type EntryInfo } from './beneath.js';
import { settledStamp } from './root-tops.js';
import { lookLogOpen } from './look-log.js';
import { oneRun } from './one-run.js';

/** Environments and write roots remembered at most (the oldest is dropped first). */
const MAX_KEPT = 8;

interface Kept<T> {
  /** The paths the last computation looked at, with every directory above them, sorted. */
  paths: string[];
  /** Their stamps, read before `value` was computed; undefined until a computation is vouched for. */
  stamps?: string[];
  value?: T;
}

const kept = new Map<string, Kept<unknown>>();

/** The wall clock the settled rule reads (ns); tests move it to reach stamps they just made. */
export const credentialMemoClock = { now: (): bigint => BigInt(Date.now()) * 1_000_000n };

/** How often the memo answered and how often it computed (tests count them). */
export const credentialMemoCounts = { answered: 0, computed: 0 };

/** What `stampsOf` compares for one entry, or undefined when it vouches for nothing. */
function stampOf(info: EntryInfo, now: bigint): string | undefined {
  if (info.kind === 'missing') return 'm';
  if (info.kind === 'dir') return settledStamp(info, now) ? `d${info.stamp}` : undefined;
  if (info.kind === 'file' || info.kind === 'other') return `${info.kind}${info.stamp.split(':', 2).join(':')}`;
  return undefined; // a link or an error on the way
}

/** The stamps of `paths` now, or undefined when one of them cannot vouch for the memo. */
function stampsOf(paths: readonly string[]): string[] | undefined {
  // process.platform: a directory's mtime and ctime move with its entries on Linux (see the header).
  if (process.platform !== 'linux' || paths.length === 0) return undefined;
  const now = credentialMemoClock.now();
  const out: string[] = [];
  // The batch walks below "/" only: "/" itself (never a link) is one lstat.
  const below = paths[0] === '/' ? paths.slice(1) : paths;
  const infos = inspectMany(below);
  if (below !== paths) infos.unshift(rootInfo());
  for (const info of infos) {
    const stamp = stampOf(info, now);
    if (stamp === undefined) return undefined;
    out.push(stamp);
  }
  return out;
}

/** "/" as inspect would give a directory. */
function rootInfo(): EntryInfo {
  try {
    const st = lstatSync('/', { bigint: true });
    return { kind: st.isDirectory() ? 'dir' : 'other', stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` };
  } catch {
    return { kind: 'error', stamp: '' };
  }
}

/** `seen` with every directory above each path, sorted; undefined when one is not plain. */
function withAncestors(seen: ReadonlySet<string>): string[] | undefined {
  const all = new Set<string>();
  for (const path of seen) {
    if (!isAscii(path) || !isCleanAbsolute(path)) return undefined;
    for (let at = path; !all.has(at); ) {
      all.add(at);
      const end = at.lastIndexOf('/');
      if (end < 0 || at === '/') break;
      at = end === 0 ? '/' : at.slice(0, end);
    }
  }
  return [...all].sort();
}

/**
 * `compute(note)`, or its value kept for `key` while the stamps of every path it noted (and every
 * directory above them) are what they were before it was computed. `compute` must call `note` with
 * every path it asks the file system about, and must not depend on anything but `key` and those
 * paths. The value is shared between calls: the caller copies what it hands on.
 */
export function rememberedFor<T>(key: string, compute: (note: (path: string) => void) => T): T {
  // A computation kept whole across runs (plan-memo.ts) writes down every look it makes: a value
  // kept here would answer without them.
  // A process that runs once (one-run.ts) has no later run to keep it for: the paths are not noted.
  if (lookLogOpen() || oneRun()) return compute(() => {});
  const entry = kept.get(key) as Kept<T> | undefined;
  const before = entry === undefined ? undefined : stampsOf(entry.paths);
  if (entry?.stamps !== undefined && before !== undefined && sameList(before, entry.stamps)) {
    credentialMemoCounts.answered++;
    return entry.value as T;
  }
  credentialMemoCounts.computed++;
  const seen = new Set<string>();
  const value = compute((path) => seen.add(path));
  const paths = withAncestors(seen);
  kept.delete(key);
  if (paths === undefined) return value;
  if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value as string);
  // The stamps read before this computation vouch for it when it looked at no path beyond theirs.
  const covered = entry !== undefined && before !== undefined && sameList(paths, entry.paths);
  kept.set(key, covered ? { paths, stamps: before, value } : { paths });
  return value;
}
