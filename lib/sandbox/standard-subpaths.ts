// SPDX-License-Identifier: MIT
// The first component below its root, of each protected subpath buildWritableRoot made, kept with
// the array it made: the mount plan asks a root's listing whether that name may exist (most write
// roots lack .git, .claude, .vscode ...), and reading each of a plan's ~25,000 subpaths (1,000
// roots) to cut that name out of it was most of the spec's CPU (every one a concatenated string
// the engine must first copy into one piece).
//
// What is kept answers only for an entry that still equals the string made: an array changed in
// place (an entry replaced, or entries added) has each of its other entries read as before.

/** Per readOnlySubpaths array: its root and separator, the strings made, and each one's first name. */
interface Made {
  root: string;
  separator: string;
  subpaths: readonly string[];
  firsts: readonly string[];
}

const made = new WeakMap<readonly string[], Made>();

/**
 * Notes that each of the first `count` entries of `subpaths` is `root`, `separator` (none when
 * `root` is the separator) and a relative path whose first component is `firsts[i]`.
 */
export function noteStandardSubpaths(subpaths: readonly string[], root: string, separator: string, count: number, firsts: readonly string[]): void {
  made.set(subpaths, { root, separator, subpaths: subpaths.slice(0, count), firsts });
}

/**
 * What buildWritableRoot made of `subpaths` under `root` with `separator`: its first
 * entries as made and each one's first component below the prefix; undefined when it made none
 * there. The caller uses `firsts[i]` only while `subpaths[i] === made[i]` (usually the very string
 * made, an identity test; another string is compared by content), and reads any other entry itself.
 */
export function standardSubpaths(subpaths: readonly string[], root: string, separator: string): { made: readonly string[]; firsts: readonly string[] } | undefined {
  const entry = made.get(subpaths);
  // The root is usually the very string the plan holds (an identity test).
  return entry === undefined || entry.root !== root || entry.separator !== separator ? undefined : { made: entry.subpaths, firsts: entry.firsts };
}
