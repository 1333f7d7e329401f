// SPDX-License-Identifier: MIT
// How much of a policy's prepared work one process keeps across runs. The memos under a run's plan,
// its Linux sandbox spec, the protected-path look and the deny entries' kinds (and, in the addon,
// the mount templates: native/linux/mount_templates.cc keeps the same count) each keep up to
// POLICIES_KEPT policies. A caller that serves several agents or workspaces alternates between
// their policies, and with room for fewer than it alternates between, each memo dropped a policy
// before its next run came: every run paid the cold cost in full. With room for 4, six plain
// workspaces in turn cost 3 ms more per run than one, and five policies of 1,000 entries in turn
// cost 31-58 ms per run instead of 9-12 ms.
//
// The paths bound keeps the memory in hand: a policy of thousands of entries takes megabytes of
// heap in the memos (its watched paths, its plan, its spec). A memo keeps at most PATHS_KEPT paths
// in all, and drops its least recently used policies to keep a new one within it (a policy larger
// than the bound alone is still kept, by itself).

/** Policies each memo keeps at most. */
export const POLICIES_KEPT = 16;

/** Paths (those watched, or the entries) each memo keeps at most, over all of its policies. */
export const PATHS_KEPT = 32_768;

/**
 * Whether a memo holding `count` policies of `paths` paths in all drops its least recently used
 * one before keeping another of `adding` paths (under the bounds given, the module's by default).
 */
export function dropsOldest(count: number, paths: number, adding: number, maxCount = POLICIES_KEPT, maxPaths = PATHS_KEPT): boolean {
  return count > 0 && (count >= maxCount || paths + adding > maxPaths);
}

// More policies in turn than fit would drop one another's values before any is used again, each
// paying its recording and its watch set for nothing. A memo rests a key whose value it dropped
// unused (computed without keeping for restRuns of its runs), and a key back from rest does not
// take the room of a value used lately (usedLately): those stay kept, and it rests longer.

/** Runs a key rests after its value was dropped unused `times` times in a row: 4 doubling to 64. */
export function restRuns(times: number): number {
  return Math.min(4 * 2 ** (times - 1), 64);
}

/**
 * Whether a value last used at call `usedAt` of a memo's `calls` was used within the last two
 * rounds of its `kept` values.
 */
export function usedLately(usedAt: number | undefined, calls: number, kept: number): boolean {
  return usedAt !== undefined && calls - usedAt <= 2 * kept;
}
