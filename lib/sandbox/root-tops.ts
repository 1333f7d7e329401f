// SPDX-License-Identifier: MIT
// The protected names at the top of a write root nested in another (`.git`, `.zero`, `.agents`),
// mostly absent, are looked at before every run and again after it. A thousand `dist/` roots so
// cost a no-follow walk per root per pass. This keeps, across the runs of this process, the names
// found missing at the top of such a root, under the root's stamp (dev, inode, size, mtime,
// ctime), and answers them again without a look while the root's stamp is the same.
//
// Why that is sound (Linux): creating, removing or renaming an entry in a directory sets the
// directory's mtime and ctime to the current time, and no system call sets a ctime back. A stamp
// is only trusted when the directory was last changed more than RACY_NANOS before it was read, so
// a change made after the read lands on a later clock tick and gives another stamp. A name missing
// under a stamp is therefore missing whenever the same stamp is read again. The stamp is read
// anew for every run, by a walk from "/" that follows no link (or given by the watched looks, which
// answer as that walk would: beneath.ts inspectManyWatched): a root replaced (another inode), an
// ancestor swapped for a link (the walk stops) or a file system mounted there (another device)
// gives another stamp too. Only names directly in the root are answered; what lies deeper (inside
// an existing `.git`) is looked at every time. See docs/architecture.md.
import { hasPrefix } from '../path-within.js';
import { inspectManyWatched, inspectPast, type EntryInfo } from './beneath.js';

/** How long after its last change a directory's stamp is not trusted to show a further change (a coarse clock tick). */
export const RACY_NANOS = 2_000_000_000n;

/** Roots remembered at most (the oldest is dropped first). */
const MAX_ROOTS = 8192;

/**
 * Whether a directory's stamp, read just now, shows any later change of its entries: it is a
 * directory, reached without a link, last changed more than RACY_NANOS ago. Linux only (where a
 * directory's mtime and ctime move with every entry made in it).
 */
export function settledStamp(info: EntryInfo | undefined, now = BigInt(Date.now()) * 1_000_000n): boolean {
  if (process.platform !== 'linux' || info?.kind !== 'dir') return false;
  const limit = settledBefore(now);
  if (limit === undefined) return false;
  // dev:ino:size:mtime:ctime, the last two compared as decimals (a thousand roots a run).
  const stamp = info.stamp;
  const size = stamp.indexOf(':', stamp.indexOf(':') + 1);
  const m = size < 0 ? -1 : stamp.indexOf(':', size + 1);
  const c = m < 0 ? -1 : stamp.indexOf(':', m + 1);
  if (c < 0 || stamp.indexOf(':', c + 1) >= 0) return false;
  return decimalBelow(stamp, m + 1, c, limit) && decimalBelow(stamp, c + 1, stamp.length, limit);
}

let lastLimit: { now: bigint; limit: string | undefined } | undefined;

/** now - RACY_NANOS in decimal (undefined when not positive): a time is settled when below it. */
function settledBefore(now: bigint): string | undefined {
  if (lastLimit?.now !== now) lastLimit = { now, limit: now > RACY_NANOS ? (now - RACY_NANOS).toString() : undefined };
  return lastLimit.limit;
}

/** Whether text[from, to) is a decimal without sign or leading zero below `limit` (one too). */
function decimalBelow(text: string, from: number, to: number, limit: string): boolean {
  const length = to - from;
  if (length === 0 || (length > 1 && text.charCodeAt(from) === 0x30)) return false;
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  if (length !== limit.length) return length < limit.length;
  return text.slice(from, to) < limit;
}

/** Per root (byte string): the stamp, and the names found missing at its top under it. */
const memo = new Map<string, { stamp: string; missing: Set<string> }>();

/** How many paths were looked at on the file system and how many answered from the memo (tests count them). */
export const topLookCounts = { looked: 0, answered: 0 };

const MISSING: EntryInfo = { kind: 'missing', stamp: '' };

/**
 * Looks at paths as inspectMany does, for one run: a path directly in a root whose stamp, read
 * for this run before any of these looks (`stamps`), is settled and the same as when the name was
 * last found missing there, is answered missing without a look; every other path is looked at,
 * and a missing answer directly in such a root is remembered under that stamp.
 */
export class TopLooks {
  /** The settled roots of this run and their stamps (byte strings). */
  readonly settled = new Map<string, string>();

  /**
   * `stamps`: the nested roots' stamps, read for this run; `known`: answers read in the same batch
   * (the `.git` beside each root), given instead of a look but never remembered (the memo keeps
   * only looks made after the stamps were read).
   */
  constructor(stamps: ReadonlyMap<string, EntryInfo>, readonly known: ReadonlyMap<string, EntryInfo> = new Map()) {
    const now = BigInt(Date.now()) * 1_000_000n;
    for (const [root, info] of stamps) if (settledStamp(info, now)) this.settled.set(root, info.stamp);
  }

  inspect(paths: readonly string[]): EntryInfo[] {
    // One pass: each path's directory, whether it is a settled root, and the memo's answer there.
    const out: Array<EntryInfo | undefined> = new Array<EntryInfo | undefined>(paths.length);
    const ask: string[] = [];
    const asked: Array<{ at: number; root?: string; stamp?: string; name?: string }> = [];
    // The directory of the path before, with its stamp and memo: a batch asks a root's names one
    // after the other, and comparing a prefix costs less than cutting the directory out to hash it.
    let last: { root: string; stamp: string | undefined; known: { stamp: string; missing: Set<string> } | undefined } | undefined;
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i] as string;
      // Settled roots are Linux byte strings, never "/" (no root holds it): the last '/' splits.
      const split = this.settled.size === 0 ? -1 : path.lastIndexOf('/');
      if (split > 0 && (last === undefined || split !== last.root.length || !hasPrefix(path, last.root))) {
        const root = path.slice(0, split);
        last = { root, stamp: this.settled.get(root), known: memo.get(root) };
      }
      const root = split > 0 ? last?.root : undefined;
      const stamp = split > 0 ? last?.stamp : undefined;
      if (stamp === undefined) {
        asked.push({ at: i });
      } else {
        const name = path.slice(split + 1);
        const known = last?.known;
        if (known !== undefined && known.stamp === stamp && known.missing.has(name)) {
          out[i] = MISSING;
          continue;
        }
        asked.push({ at: i, root: root as string, stamp, name });
      }
      ask.push(path);
    }
    topLookCounts.answered += paths.length - ask.length;
    topLookCounts.looked += ask.length;
    const found = inspectPast(this.known, ask, inspectManyWatched);
    asked.forEach(({ at, root, stamp, name }, k) => {
      const info = found[k] as EntryInfo;
      out[at] = info;
      if (info.kind === 'missing' && root !== undefined && !this.known.has(ask[k] as string)) remember(root, stamp as string, name as string);
    });
    return out as EntryInfo[];
  }
}

function remember(root: string, stamp: string, name: string): void {
  let known = memo.get(root);
  if (known === undefined || known.stamp !== stamp) {
    memo.delete(root);
    if (memo.size >= MAX_ROOTS) memo.delete(memo.keys().next().value as string);
    memo.set(root, (known = { stamp, missing: new Set() }));
  }
  known.missing.add(name);
}

/**
 * After the run, once every process of the sandbox is gone: what is at `paths` (byte strings)
 * now, in one batch: the stamps of the settled and elided roots for unchangedRoots and the agent
 * and editor config check, with the `.git` beside each root (the same walk) for the git check.
 */
export function looksNow(paths: Iterable<string>): Map<string, EntryInfo> {
  const unique = [...new Set(paths)];
  const found = inspectManyWatched(unique);
  return new Map(unique.map((path, i) => [path, found[i] as EntryInfo]));
}

/**
 * The roots of `settled` (root and its settled stamp before the run) whose stamp `now` (see
 * looksNow) is still the same: no entry was made, removed or renamed at their top since, so a
 * name missing there before the run is missing now.
 */
export function unchangedRoots(settled: ReadonlyArray<readonly [string, string]>, now: ReadonlyMap<string, EntryInfo>): Set<string> {
  const out = new Set<string>();
  for (const [root, stamp] of settled) {
    const info = now.get(root);
    if (info?.kind === 'dir' && info.stamp === stamp) out.add(root);
  }
  return out;
}
