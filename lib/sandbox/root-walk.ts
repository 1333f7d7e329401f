// SPDX-License-Identifier: MIT
// The write roots of a plan, looked at in one addon call (fsListRoots): each root is opened whole
// without following a link anywhere on the way (one openat2 refusing symlinks, or an O_NOFOLLOW
// open per component), then listed, and the `.git` of each of its first subdirectories looked at.
// A root opened so is a directory that is its own real path; every other root (a link on the
// way, missing, not a directory, unreadable, not clean, or no addon verb: Windows, no addon)
// gets no listing here and takes node:fs as before, which gives the same plan and the same
// errors. This saves thousands of lstat and readdir calls through node:fs for a plan of many
// roots; the kernel gives the answers either way, so the checks are the same.
import { loadNative } from '../native/load.js';
import { isCleanAbsolute } from '../path-within.js';
import { fromBytes, toBytes } from './beneath.js';
import { oneRun } from './one-run.js';

/** What `.git` is directly in a subdirectory: d directory, f file, m missing, o other or link, x unknown (ask node:fs). */
export type GitKind = 'd' | 'f' | 'm' | 'o' | 'x';

/**
 * A root's listing as fsListRoots gives it: every entry sorted by byte as `<kind><git><name>/`
 * (kind d f l o; git a GitKind for a subdirectory among the first looked at, else `-`).
 */
export type RootListing = string;

// process.platform: the verb walks POSIX paths (Windows has no fsListRoots); Linux keeps listings.
const POSIX = process.platform !== 'win32';
const WATCHED = process.platform === 'linux';

/** How many roots listRoots listed and how many listings were kept ones (tests count them). */
export const rootListingCounts = { listed: 0, answered: 0 };

/**
 * The listing of each of `paths` (absolute), in order, or undefined for one that node:fs must
 * resolve (see the header). `maxLooks`: how many first entries have the `.git` of a
 * subdirectory looked at.
 */
export function listRoots(paths: readonly string[], maxLooks: number): Array<RootListing | undefined> {
  const none = () => paths.map(() => undefined);
  if (!POSIX || paths.length === 0) return none();
  let verb;
  try {
    verb = loadNative().fsListRoots;
  } catch {
    return none();
  }
  if (typeof verb !== 'function') return none();
  const clean = paths.map((path) => isCleanAbsolute(path));
  const asked = paths.filter((_, i) => clean[i]);
  // Linux: listings of roots whose watches reported no change since are kept ones (see
  // native/linux/watched_looks.cc); their count follows the listings.
  const watched = WATCHED && !oneRun();
  const found = asked.length === 0 ? null : verb(asked.map(toBytes), maxLooks, watched);
  if (found === null || found.length !== asked.length + (watched ? 1 : 0)) return none();
  if (watched) {
    const answered = found.pop() as number;
    rootListingCounts.answered += answered;
    rootListingCounts.listed += asked.length - answered;
  }
  let at = 0;
  return paths.map((_, i) => {
    if (!clean[i]) return undefined;
    const listing = found[at++];
    return typeof listing === 'string' ? fromBytes(listing) : undefined;
  });
}

/**
 * Calls `each(name, kind, git)` for every entry of a listing, in its order, and returns the names
 * (for HostFacts.noteListing).
 */
export function forEachEntry(listing: RootListing, each: (name: string, kind: string, git: string) => void): string[] {
  const names: string[] = [];
  for (let start = 0; start < listing.length; ) {
    const end = listing.indexOf('/', start + 2);
    const name = listing.slice(start + 2, end);
    names.push(name);
    each(name, listing[start] as string, listing[start + 1] as string);
    start = end + 1;
  }
  return names;
}
