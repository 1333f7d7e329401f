// SPDX-License-Identifier: MIT
// A memo of filesystem facts for ONE sandboxed call: the plan, the mount plan and the protected-path
// note ask about the same paths, and each is looked up once. Never kept beyond that call.
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, sep } from 'node:path';

import { isAscii, isCleanAbsolute as isClean } from './path-within.js';
import { logListed, logLooked, logUncovered, nextLookEpoch } from './sandbox/look-log.js';

// process.platform: where the absence of a listed name is known to mean ENOENT (see noteListing).
const LISTINGS_TELL_ABSENCE = process.platform === 'linux';

/**
 * `dirname` of a clean absolute path: on POSIX the part before its last separator ("/" for a path
 * directly in it, and for "/" itself), without dirname's scan (a policy of 1,000 deny entries
 * notes thousands of parents per run).
 */
const parentOf: (path: string) => string =
  sep === '/'
    ? (path) => {
        const end = path.lastIndexOf('/');
        return end <= 0 ? '/' : path.slice(0, end);
      }
    : dirname;

/** A look-up that failed (other than "no such entry"): the error, thrown again on every ask. */
class Failure {
  constructor(readonly error: unknown) {}
}

/** A remembered answer: Stats, `null` for a missing path, or the failure. */
type Remembered<T> = T | null | Failure;

/** One look-up (lstatSync or statSync without an exception for a missing entry), as remembered. */
function look(call: typeof lstatSync | typeof statSync, path: string): Remembered<Stats> {
  try {
    return call(path, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return new Failure(error);
  }
}

function recall<T>(found: Remembered<T>): T | undefined {
  if (found instanceof Failure) throw found.error;
  return found ?? undefined;
}

/**
 * Filesystem facts gathered during one call, each asked of the kernel at most once. Answers are
 * exactly those of the `node:fs` call named on each method (values, `undefined` for a missing
 * path, the same error otherwise). Create one per call and drop it when the call has launched:
 * facts must never carry over to another call, since a command can change the filesystem
 * between two calls. Paths this process creates or removes during the call must not have been
 * asked about before.
 */
export class HostFacts {
  /** When these facts began (look-log.ts): every answer they hold was looked at after it. */
  readonly epoch = nextLookEpoch();
  readonly #lstat = new Map<string, Remembered<Stats>>();
  readonly #stat = new Map<string, Remembered<Stats>>();
  readonly #realpath = new Map<string, Remembered<string>>();
  /** Kinds a no-follow walk found during this call (see noteLooked). */
  readonly #kind = new Map<string, 'file' | 'dir'>();
  /** Directories listed during this call: their names folded to ASCII lower case (see noteListing). */
  readonly #listed = new Map<string, Set<string>>();

  /**
   * Records the names a listing of directory `dir` (a clean absolute path) gave during this call:
   * a clean path directly in it whose name is not among them is then missing (no entry of that
   * name exists; lstat would say ENOENT, or EACCES in a directory that cannot be searched) without
   * a system call of its own. Linux only, and the names are compared case-insensitively: a
   * case-folding directory (ext4 casefold, vfat) finds `.VSCode` under `.vscode`. A listing holding
   * any name that is not ASCII tells nothing (Unicode folding could match a name such as `.curſor`),
   * nor does a name asked for that is not ASCII. Used for the write roots, where every name a run
   * checks for (.git, .claude, .vscode, ...) is usually absent.
   */
  noteListing(dir: string, names: Iterable<string>): void {
    if (!LISTINGS_TELL_ABSENCE || !isClean(dir)) return;
    const folded = new Set<string>();
    for (const name of names) {
      if (!isAscii(name)) return;
      folded.add(name.toLowerCase());
    }
    this.#listed.set(dir, folded);
  }

  /**
   * For a directory listed during this call (see noteListing): how many names the listing had,
   * and whether a name directly in it may exist (false only when the listing lacks it, as
   * `#unlisted` would conclude). Undefined when no listing of `dir` was taken.
   */
  listedIn(dir: string): { size: number; mayHold(name: string): boolean } | undefined {
    const names = this.#listed.get(dir);
    if (names === undefined) return undefined;
    logListed(dir);
    return { size: names.size, mayHold: (name) => !isAscii(name) || names.has(name.toLowerCase()) };
  }

  /**
   * Records that `path` (clean, absolute) was opened during this call without following a link on
   * the way: it and every directory above it are their own real paths, and `realpath` answers so
   * without a look of its own (a denyRead file beside a write root shares the walk to it).
   */
  noteReal(path: string): void {
    if (isClean(path)) this.#noteRealClean(path);
  }

  #noteRealClean(path: string): void {
    for (let at = path; !this.#realpath.has(at); ) {
      this.#realpath.set(at, at);
      const up = parentOf(at);
      if (up === at) return;
      at = up;
    }
  }

  /**
   * Records that a walk from "/" that follows no link (the addon's batched look) found `path`
   * (clean, absolute) during this call, a directory or not, and not a link: it and every directory
   * above it are their own real paths (see noteReal), the ones above are directories, and
   * `lookedKind` answers for all of them without a look of its own.
   */
  noteLooked(path: string, directory: boolean): void {
    if (!isClean(path)) return;
    this.#noteRealClean(path);
    this.#kind.set(path, directory ? 'dir' : 'file');
    for (let at = parentOf(path); !this.#kind.has(at); at = parentOf(at)) {
      this.#kind.set(at, 'dir');
      if (at === '/') return;
    }
  }

  /**
   * For a path noted by noteLooked (or above one): 'dir' or 'file' (anything else that is not a
   * link), as `statSync` would tell; undefined for any other path.
   */
  lookedKind(path: string): 'file' | 'dir' | undefined {
    const kind = this.#kind.get(path);
    if (kind !== undefined) logLooked(path);
    return kind;
  }

  /** `lstatSync(path, { throwIfNoEntry: false })`. */
  lstat(path: string): Stats | undefined {
    logLooked(path);
    let found = this.#lstat.get(path);
    if (found === undefined) {
      found = this.#missingParent(path) || this.#unlisted(path) ? null : look(lstatSync, path);
      this.#lstat.set(path, found);
    }
    return recall(found);
  }

  /** `statSync(path, { throwIfNoEntry: false })`: the lstat answer unless the path is a symlink. */
  stat(path: string): Stats | undefined {
    logLooked(path);
    let found = this.#stat.get(path);
    if (found === undefined) {
      try {
        this.lstat(path);
      } catch {
        // remembered as a failure: stat it for real below
      }
      const own = this.#lstat.get(path) as Remembered<Stats>;
      // A path that is not a symlink, or is missing, stats as it lstats; a link, or an lstat that
      // failed otherwise, needs the real call.
      found = own === null || (!(own instanceof Failure) && !own.isSymbolicLink()) ? own : look(statSync, path);
      this.#stat.set(path, found);
    }
    // A followed link: the answer is the target's, which no directory above the path vouches for.
    if (found !== this.#lstat.get(path)) logUncovered();
    return recall(found);
  }

  /**
   * `realpathSync(path)`. A clean path whose last component is not a symlink resolves to its
   * parent's real path plus that name, so the walk shares its look-ups with every other question
   * of the call; links, missing paths and unclean paths take `realpathSync` itself.
   */
  realpath(path: string): string {
    logLooked(path);
    let found = this.#realpath.get(path);
    if (found === undefined) {
      try {
        found = this.#resolve(path);
      } catch (error) {
        found = new Failure(error);
      }
      this.#realpath.set(path, found);
    }
    return recall(found) as string;
  }

  #resolve(path: string): string {
    if (path === '/') return path;
    if (isClean(path)) {
      let st: Stats | undefined;
      try {
        st = this.lstat(path);
      } catch {
        st = undefined; // let realpathSync report it
      }
      if (st !== undefined && !st.isSymbolicLink()) {
        const parent = this.realpath(dirname(path));
        return `${parent === '/' ? '' : parent}/${basename(path)}`;
      }
      if (st === undefined && this.#lstat.get(path) === null) return realpathSync(path); // missing: ENOENT
    }
    // A link (or a path that is not clean) resolved by the kernel: its answer is the target's.
    logUncovered();
    return realpathSync(path);
  }

  /**
   * True when the parent of a clean absolute path is already known to be missing: then the path
   * is missing too (ENOENT), and needs no system call.
   */
  #missingParent(path: string): boolean {
    const parent = dirname(path);
    if (parent === path) return false;
    return this.#lstat.get(parent) === null && isClean(path);
  }

  /** True when a listing of the parent taken during this call lacks the name (see noteListing). */
  #unlisted(path: string): boolean {
    if (this.#listed.size === 0) return false;
    const parent = dirname(path);
    const names = parent === path ? undefined : this.#listed.get(parent);
    if (names === undefined || !isClean(path)) return false;
    const name = basename(path);
    return isAscii(name) && !names.has(name.toLowerCase());
  }
}

/**
 * Hands the facts gathered while resolving a plan on to the start of that plan: the returned
 * function gives them once, within the same synchronous run; afterwards (or again) it gives fresh
 * (empty) facts, so a plan started later is checked afresh.
 */
export function handOverFacts(facts: HostFacts): () => HostFacts {
  let held: HostFacts | undefined = facts;
  queueMicrotask(() => {
    held = undefined;
  });
  return () => {
    const out = held ?? new HostFacts();
    held = undefined;
    return out;
  };
}
