// SPDX-License-Identifier: MIT
// The extra write roots of earlier sandboxed runs, remembered on the host so that a later run can
// tell a symlink a command may have planted (inside a directory it could write) from the caller's
// own. Each root is an empty marker file named by the hash of its path, in the user cache dir
// (outside every write root unless the caller made that writable too). Losing a marker only
// loosens the check back to "the caller's own link"; nothing is read from a marker's content.
import { closeSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

import { sha256Hex, sha256Hexes } from '../sha256.js';
import { buildUserCacheDir } from './runtime-state.js';
import { frozenRoots } from './watched-memo.js';

type Env = Readonly<Record<string, string | undefined>>;

function markerDir(env: Env): string {
  return join(buildUserCacheDir(env), 'zero', 'write-roots');
}

function markerOf(root: string, env: Env, dir: string = markerDir(env)): string {
  return join(dir, sha256Hex(root).slice(0, 32));
}

// Roots this process has noted already, by marker directory (a burst of runs with the same roots
// notes them once). Bounded: past the bound the roots are forgotten and noted again.
const noted = new Map<string, Set<string>>();
const MAX_NOTED = 65536;
let notedCount = 0;

/** Remembers `roots` (absolute, resolved) as write roots of a sandboxed run. Never throws. */
export function noteWriteRoots(roots: readonly string[], env: Env = process.env): void {
  // The directory is worked out once per call, not once per root (1,000 roots are a run's policy).
  const dir = markerDir(env);
  const known = noted.get(dir);
  const fresh = known === undefined ? roots : roots.filter((root) => !known.has(root));
  if (fresh.length === 0) return;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (notedCount + fresh.length > MAX_NOTED) {
      noted.clear();
      notedCount = 0;
      generation++;
    }
    const done = noted.get(dir) ?? new Set<string>();
    noted.set(dir, done);
    // Hashed together: a policy's thousand roots through node:crypto (see sha256Hexes).
    const hashes = sha256Hexes(fresh);
    fresh.forEach((root, i) => {
      closeSync(openSync(join(dir, (hashes[i] as string).slice(0, 32)), 'a', 0o600));
      if (!done.has(root)) notedCount++;
      done.add(root);
    });
  } catch {
    // An unwritable cache dir: the check falls back to the workspaces' runtime state.
  }
}

/**
 * Lists of write roots (frozen, each root too: the plan memo's, given run after run) whose roots
 * but the ones left out were all noted, with the marker directory, the roots left out and the
 * generation of `noted` they were noted in (a list is noted again once `noted` was cleared).
 */
const notedLists = new WeakMap<readonly { root: string }[], { dir: string; without: string; generation: number }>();
let generation = 0;

/**
 * noteWriteRoots of the roots of `writeRoots` but those in `without` (the workspace, the managed
 * caches). A frozen list whose roots were all noted is passed over at once: a policy of a
 * thousand roots, run after run, would filter them all each time. Never throws.
 */
export function noteExtraWriteRoots(writeRoots: readonly { root: string }[], without: readonly string[], env: Env = process.env): void {
  const dir = markerDir(env);
  const left = without.join('\0');
  const known = notedLists.get(writeRoots);
  if (known !== undefined && known.dir === dir && known.without === left && known.generation === generation) return;
  const roots = writeRoots.map((w) => w.root).filter((root) => !without.includes(root));
  noteWriteRoots(roots, env);
  const done = noted.get(dir);
  if (frozenRoots(writeRoots) && done !== undefined && roots.every((root) => done.has(root))) {
    notedLists.set(writeRoots, { dir, without: left, generation });
  }
}

/** Whether `dir` (absolute, resolved) was a write root of an earlier sandboxed run. */
export function wasWriteRoot(dir: string, env: Env = process.env): boolean {
  try {
    return lstatSync(markerOf(dir, env), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
