// SPDX-License-Identifier: MIT
// Element-by-element equality for the memos' keys: lists (of strings, paths, stamps) and lists of
// name-value pairs. The same list is equal to itself without a look at its elements.

/** Whether `a` and `b` hold the same elements (`===`) in the same order. */
export function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether `a` and `b` hold the same names with the same values (`===`), in the same order. */
export function samePairs(a: ReadonlyArray<readonly [string, unknown]>, b: ReadonlyArray<readonly [string, unknown]>): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]?.[0] !== b[i]?.[0] || a[i]?.[1] !== b[i]?.[1]) return false;
  return true;
}
