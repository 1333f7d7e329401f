// SPDX-License-Identifier: MIT
// The middle of a set of samples, as every bench reports its figures.

/** The median of `values` (the upper middle one for an even count); the array is not changed. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
