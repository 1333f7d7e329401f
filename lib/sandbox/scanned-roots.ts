// SPDX-License-Identifier: MIT
// Paths as the repository scan walks them: cut at their slashes when they are clean POSIX paths
// (a thousand roots a run each ask for their `.git` and protected names), and the roots already
// scanned, which tell whether a further root was walked with an earlier one.
import { basename, dirname } from 'node:path';

import { cleanPosix, isAscii } from '../path-within.js';

export { childOf, cleanPosix } from '../path-within.js';

/** dirname(path): cut at the last slash when `path` is a clean POSIX path (`clean`: cleanPosix(path), when known). */
export function parentOf(path: string, clean = cleanPosix(path)): string {
  if (!clean) return dirname(path);
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

/** Up to this many scanned roots and git dirs, coverage compares each with the path (no walk up its levels). */
const FEW_SCANNED = 16;
const SLASH = 0x2f;

type Coverage = 'no' | 'walked' | 'named';

/**
 * Coverage answers kept across passes, by what was scanned before them. Each pass of a run (the
 * guard's scans made ahead, its look, the check's scans and its own) starts a ScannedRoots, adds
 * the same scans as the pass of the run before (the same roots with the same git dirs, while the
 * tree is unchanged) and asks about the same thousand roots. An answer is a function of what was
 * added, in the key in full, and of the root and the names asked: given again, it is the answer
 * the walk would give. Bounded: past MAX_ANSWERS all are dropped and asked afresh.
 */
const answersKept = new Map<string, Map<string, Coverage>>();
let answersCount = 0;
const MAX_ANSWERS = 16384;
/** What was scanned is a key while it is this short (a pass that scans many roots asks afresh). */
const MAX_SCANNED_KEY = 4096;

/**
 * The roots already scanned for repositories. The scan walks every directory below a root
 * except `.git` directories and git dirs, so a root lying below a scanned one was walked with it
 * unless a `.git` or a git dir lies between them (then it is scanned itself).
 */
export class ScannedRoots {
  readonly #roots = new Set<string>();
  readonly #notEntered = new Set<string>();
  /**
   * Every add in order, each as its root, its number of git dirs and the dirs, NUL-separated (no
   * path holds a NUL); undefined once too long to key the answers by.
   */
  #scanned: string | undefined = '';
  /** The kept answers for the names asked last (joined), while nothing was added since. */
  #answers: { skip: string; found: Map<string, Coverage> } | undefined;

  /** Notes a scanned root and the git dirs its scan found (and did not enter). */
  add(root: string, gitDirs: readonly string[]): void {
    this.#roots.add(root);
    for (const gitDir of gitDirs) this.#notEntered.add(gitDir);
    if (this.#scanned !== undefined) {
      const next = `${this.#scanned}${root}\0${gitDirs.length}\0${gitDirs.join('\0')}\0`;
      this.#scanned = next.length <= MAX_SCANNED_KEY ? next : undefined;
    }
    this.#answers = undefined;
  }

  /**
   * Whether a scan of an earlier root walked `root` already; with `skip` (names compared case-folded,
   * as a folding volume would), also whether it reported the named entries of `root` and below: no
   * directory so named lies between them.
   */
  covers(root: string, skip?: readonly string[]): boolean {
    const found = this.coverage(root, skip ?? []);
    return skip === undefined ? found !== 'no' : found === 'named';
  }

  /**
   * covers(root) and covers(root, skip) in one walk up from `root`: 'no' when no scan walked it,
   * 'walked' when one did but a directory named in `skip` lies between them, 'named' when one
   * did and none does.
   */
  coverage(root: string, skip: readonly string[]): Coverage {
    const answers = this.#answersFor(skip);
    const known = answers?.get(root);
    if (known !== undefined) return known;
    const found = this.#coverage(root, skip);
    if (answers !== undefined) {
      if (answersCount >= MAX_ANSWERS) {
        answersKept.clear();
        answersCount = 0;
      }
      answers.set(root, found);
      answersCount++;
    }
    return found;
  }

  /** The answers kept for what was added so far and the names `skip`; undefined when not kept. */
  #answersFor(skip: readonly string[]): Map<string, Coverage> | undefined {
    if (this.#scanned === undefined) return undefined;
    const names = skip.join('\0');
    if (this.#answers?.skip === names) return this.#answers.found;
    // The names asked after what was added: its last add ends with a NUL, the names begin with one.
    const key = `${this.#scanned}\0${skip.length}\0${names}`;
    let found = answersKept.get(key);
    if (found === undefined) {
      found = new Map();
      answersKept.set(key, found);
    }
    this.#answers = { skip: names, found };
    return found;
  }

  #coverage(root: string, skip: readonly string[]): Coverage {
    // POSIX and a clean path: the walk cuts the path at its slashes (a thousand roots a run, each
    // some levels deep); elsewhere dirname and basename, which know every separator of the OS.
    // With ASCII names to match only: a name folds to an ASCII name only when it is as long (the
    // one character whose fold is longer folds to a character outside ASCII).
    if (cleanPosix(root) && skip.every(isAscii)) return this.#roots.size + this.#notEntered.size <= FEW_SCANNED ? this.#coverageFew(root, skip) : this.#coverageCut(root, skip);
    let skipped = false;
    for (let dir = root; dirname(dir) !== dir; ) {
      const name = basename(dir).toLowerCase();
      if (name === '.git' || this.#notEntered.has(dir)) return 'no';
      if (skip.some((s) => s.toLowerCase() === name)) skipped = true;
      dir = dirname(dir);
      if (this.#roots.has(dir)) return skipped ? 'walked' : 'named';
    }
    return 'no';
  }

  /**
   * #coverageCut's answer from the few scanned roots and git dirs themselves (a clean POSIX root,
   * ASCII names to skip): the walk up stops at the nearest scanned root strictly above `root`, and
   * answers 'no' when a directory it passes on the way (from `root` itself up to below that one) is
   * named `.git` (folded) or is a git dir not entered; each such directory is a prefix of `root`
   * ending at a slash of it. No string is cut but names of four characters.
   */
  #coverageFew(root: string, skip: readonly string[]): Coverage {
    if (root === '/') return 'no';
    // The nearest scanned root above: the longest one that `root` continues with a slash.
    let above = -1;
    for (const scanned of this.#roots) {
      const length = scanned === '/' ? 0 : scanned.length;
      if (length > above && length < root.length && (scanned === '/' || (scanned !== '' && root.startsWith(scanned) && root.charCodeAt(length) === SLASH))) above = length;
    }
    if (above === -1) return 'no';
    for (const gitDir of this.#notEntered) {
      if (gitDir.length > above && root.startsWith(gitDir) && (gitDir.length === root.length || root.charCodeAt(gitDir.length) === SLASH)) return 'no';
    }
    // The names passed: root[above + 1, end) split at its slashes.
    let skipped = false;
    for (let start = above + 1; start < root.length; ) {
      let end = root.indexOf('/', start);
      if (end === -1) end = root.length;
      const length = end - start;
      if (length === 4 && root.slice(start, end).toLowerCase() === '.git') return 'no';
      if (!skipped && skip.some((s) => s.length === length && s.toLowerCase() === root.slice(start, end).toLowerCase())) skipped = true;
      start = end + 1;
    }
    return skipped ? 'walked' : 'named';
  }

  #coverageCut(root: string, skip: readonly string[]): Coverage {
    let skipped = false;
    // dir is root[0, end); its name root[start + 1, end).
    for (let end = root.length; end > 1; ) {
      const start = root.lastIndexOf('/', end - 1);
      const dir = end === root.length ? root : root.slice(0, end);
      const length = end - start - 1;
      // Names are compared folded only when their length could match (no string made otherwise).
      if ((length === 4 && root.slice(start + 1, end).toLowerCase() === '.git') || this.#notEntered.has(dir)) return 'no';
      if (!skipped && skip.some((s) => s.length === length && s.toLowerCase() === root.slice(start + 1, end).toLowerCase())) skipped = true;
      end = start === 0 ? 1 : start;
      if (this.#roots.has(start === 0 ? '/' : root.slice(0, end))) return skipped ? 'walked' : 'named';
    }
    return 'no';
  }
}
