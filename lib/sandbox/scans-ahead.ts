// SPDX-License-Identifier: MIT
// The repository scans of the git guard's look before a run and of its check after the run, made
// ahead on the addon's scan thread (beneath.ts ScansAhead): each walks the whole write root (~2.5 ms for a
// workspace of a few thousand directories, twice per run), which a burst of runs would otherwise
// do on the caller's thread. The asks are the ones discoverGit and the check's `elsewhere` make,
// in their order; an ask that differs is scanned by the pass itself, as before.
import { toBytes, ScansAhead } from './beneath.js';
import { MAX_NEW_REPOS } from './git-check.js';
import { MAX_GIT_DIRS, MAX_SCANNED_DIRS, type GitGuard } from './git-guard.js';
import { ScannedRoots } from './scanned-roots.js';
import { NESTED_CONFIG_SCAN } from '../protected-names.js';

/** The roots last asked for and the pass's order of them (a run of a policy asks what the run before asked). */
let lastOrder: { asked: string[]; roots: string[] } | undefined;

/** `userRoots` as byte strings, each once, shortest first: discoverGit's order. */
function passOrder(userRoots: readonly string[]): string[] {
  const last = lastOrder;
  if (last !== undefined && (last.asked === userRoots || (last.asked.length === userRoots.length && userRoots.every((root, i) => root === last.asked[i])))) return last.roots;
  const roots = [...new Set(userRoots.map(toBytes))].sort((x, y) => x.length - y.length);
  // A frozen list (a kept plan's) is its content for good: the same list next time is the same roots.
  lastOrder = { asked: Object.isFrozen(userRoots) ? (userRoots as string[]) : [...userRoots], roots };
  return roots;
}

/** discoverGit's scans of `userRoots`: make them once the notes' window is open. */
export function guardScansAhead(userRoots: readonly string[]): Promise<ScansAhead> {
  return ScansAhead.make(passOrder(userRoots), MAX_SCANNED_DIRS, MAX_GIT_DIRS, NESTED_CONFIG_SCAN, new ScannedRoots());
}

/** The after-run check's scans of `guard`'s roots: make them once every sandboxed process is gone. */
export function checkScansAhead(guard: GitGuard): Promise<ScansAhead> {
  const roots = Array.isArray(guard.scanRoots) ? guard.scanRoots : [];
  return ScansAhead.make(roots, MAX_SCANNED_DIRS, MAX_NEW_REPOS, NESTED_CONFIG_SCAN, new ScannedRoots());
}
