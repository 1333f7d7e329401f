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

/** Whether `dir` (absolute, resolved) was a write root of an earlier sandboxed run. */
export function wasWriteRoot(dir: string, env: Env = process.env): boolean {
  try {
    return lstatSync(markerOf(dir, env), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
