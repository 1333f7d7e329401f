// SPDX-License-Identifier: MIT
// The one subtree test every path decision uses: is `child` the `parent` itself or beneath it.
import { join, normalize, sep } from 'node:path';

/**
 * True when `child` equals `parent` or lies beneath it (both absolute and clean). `separator` is
 * this OS's by default; a builder for another OS's paths passes its own (the seatbelt profile
 * builder always passes '/', so it gives the same answer when it runs on Windows).
 */
export function isWithin(parent: string, child: string, separator: string = sep): boolean {
  if (child === parent) return true;
  if (parent.endsWith(separator)) return hasPrefix(child, parent);
  // `parent + separator` is not built: the separator is looked for where it must be.
  const at = parent.length;
  return child.length > at && child.lastIndexOf(separator, at) === at && hasPrefix(child, parent);
}

/**
 * `text.startsWith(prefix)`, the same answer: V8's startsWith is several times slower on the
 * long paths a plan builds by concatenation, and a plan of 1,000 write roots asks it tens of
 * thousands of times per run. lastIndexOf from position 0 can only find the prefix at 0.
 */
export function hasPrefix(text: string, prefix: string): boolean {
  return text.lastIndexOf(prefix, 0) === 0;
}

// The pieces of an unclean path, built once (isCleanAbsolute runs for every path a run looks up).
const EMPTY_PART = sep + sep;
const DOT = `${sep}.`;
const DOT_PART = DOT + sep;
const DOTS = `${sep}..`;
const DOTS_PART = DOTS + sep;

const ASCII = /^[\x00-\x7f]*$/;

/** Whether every character of `text` is ASCII (a path walked as its own bytes, a name folded by ASCII rules). */
export function isAscii(text: string): boolean {
  return ASCII.test(text);
}

/** An absolute path with no empty, `.` or `..` component and no trailing separator (`/` itself is clean). */
export function isCleanAbsolute(path: string): boolean {
  if (path === sep) return true;
  if (!hasPrefix(path, sep) || path.endsWith(sep) || path.includes(EMPTY_PART)) return false;
  // Every `.` or `..` component follows a separator: a path with no separator before a dot has none
  // (most paths: one search instead of four).
  if (!path.includes(DOT)) return true;
  return !(path.includes(DOT_PART) || path.endsWith(DOT) || path.includes(DOTS_PART) || path.endsWith(DOTS));
}

const POSIX = sep === '/';

/**
 * Whether `path` is a clean absolute POSIX path: its parent and its children by a plain name
 * (childOf) are clean too, so a walk over them asks once (`clean` below).
 */
export function cleanPosix(path: string): boolean {
  return POSIX && isCleanAbsolute(path);
}

/**
 * join(dir, name): by concatenation when `dir` is a clean POSIX path and `name` a plain component
 * (a thousand roots a run ask this for their `.git` and protected names; the engine's symlink
 * check, for each component of a path). `clean`: cleanPosix(dir), when the caller knows it.
 */
export function childOf(dir: string, name: string, clean = cleanPosix(dir)): string {
  if (!clean || name === '' || name === '.' || name === '..' || name.includes('/')) return join(dir, name);
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/**
 * `normalize(path)`, the same answer: a POSIX path already clean and absolute comes back as it is
 * (normalize walks every character of it; the engine normalizes each path of a request several
 * times).
 */
export function normalized(path: string): string {
  return POSIX && isCleanAbsolute(path) ? path : normalize(path);
}

/**
 * `base` + separator + `path` when that is a clean absolute POSIX path, else undefined. For a
 * relative `path` it is then what both `join(base, path)` and `resolve(base, path)` answer, without
 * their walk over every character.
 */
export function cleanJoin(base: string, path: string): string | undefined {
  if (!POSIX || base === '') return undefined;
  const joined = base === sep ? sep + path : base + sep + path;
  return isCleanAbsolute(joined) ? joined : undefined;
}

/**
 * Every string `parent` for which `isWithin(parent, path, separator)` holds, innermost first:
 * `path` itself, then at each separator from the end the part before it with and without the
 * separator (so that roots such as `/` and `C:\\` are among them).
 */
export function* enclosingPaths(path: string, separator: string = sep): Generator<string> {
  yield path;
  for (let i = path.lastIndexOf(separator); i >= 0; i = i === 0 ? -1 : path.lastIndexOf(separator, i - 1)) {
    yield path.slice(0, i + 1);
    yield path.slice(0, i);
  }
}

/**
 * Directories asked "is this path one of them or beneath one" by walking the
 * path's ancestors: the cost grows with the path's depth, not with the number of directories (a
 * plan with 1,000 write roots asks it for every deny entry and credential candidate).
 */
export class DirectorySet {
  readonly #dirs: ReadonlySet<string>;
  readonly #separator: string;
  /** The lengths of the directories: an ancestor of any other length is not cut out and looked up. */
  readonly #lengths = new Set<number>();

  constructor(dirs: Iterable<string>, separator: string = sep) {
    this.#dirs = new Set(dirs);
    this.#separator = separator;
    for (const dir of this.#dirs) this.#lengths.add(dir.length);
  }

  /**
   * The innermost directory of the set that `path` equals or lies beneath (see enclosingPaths).
   */
  holderOf(path: string): string | undefined {
    return this.#dirs.has(path) ? path : this.holderAbove(path);
  }

  /** The innermost directory of the set that `path` lies beneath, `path` itself not counted. */
  holderAbove(path: string): string | undefined {
    // enclosingPaths written out: this runs for every credential candidate of every run, and a
    // generator's cost per step is most of it.
    // Only ancestors as long as a directory of the set are cut out of the path: most levels of a
    // deep path have no directory of their length (slicing and hashing each was most of the cost).
    const dirs = this.#dirs;
    const lengths = this.#lengths;
    const separator = this.#separator;
    for (let i = path.lastIndexOf(separator); i >= 0; i = i === 0 ? -1 : path.lastIndexOf(separator, i - 1)) {
      if (i + 1 < path.length && lengths.has(i + 1)) {
        const withSeparator = path.slice(0, i + 1);
        if (dirs.has(withSeparator)) return withSeparator;
      }
      if (lengths.has(i)) {
        const without = path.slice(0, i);
        if (dirs.has(without)) return without;
      }
    }
    return undefined;
  }

  /** Whether `path` equals or lies beneath a directory of the set (isWithin for any of them). */
  holds(path: string): boolean {
    return this.holderOf(path) !== undefined;
  }
}

/** The sets of frozen lists of directories (this OS's separator), made once each. */
const setsOfFrozen = new WeakMap<readonly string[], DirectorySet>();

/**
 * A DirectorySet of `dirs`: the one made earlier for the same frozen list (whose content cannot
 * have changed), else a new one. A list asked about many times (the write roots of a run against
 * every other run's) is best frozen.
 */
export function directorySetOf(dirs: readonly string[], separator: string = sep): DirectorySet {
  if (separator !== sep || !Object.isFrozen(dirs)) return new DirectorySet(dirs, separator);
  let set = setsOfFrozen.get(dirs);
  if (set === undefined) {
    set = new DirectorySet(dirs);
    setsOfFrozen.set(dirs, set);
  }
  return set;
}

/**
 * Whether two lists of directories overlap: one of `a` is one of `b`, or lies beneath one, or the
 * other way round (isWithin for some pair), asked through the sets, not pair by pair.
 */
export function rootsOverlap(a: readonly string[], b: readonly string[], separator: string = sep): boolean {
  const inB = directorySetOf(b, separator);
  if (a.some((x) => inB.holds(x))) return true;
  const inA = directorySetOf(a, separator);
  return b.some((y) => inA.holds(y));
}
