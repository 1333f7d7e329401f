// SPDX-License-Identifier: MIT
// The extra write roots of earlier sandboxed runs, remembered on the host so that a later run can
// tell a symlink a command may have planted (inside a directory it could write) from the caller's
// own. Each root is an empty marker file named by the hash of its path, in the user cache dir
// (outside every write root unless the caller made that writable too). Losing a marker only
// loosens the check back to "the caller's own link"; nothing is read from a marker's content.
import { closeSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

import { sha256Hex } from '../sha256.js';
import { buildUserCacheDir } from './runtime-state.js';

type Env = Readonly<Record<string, string | undefined>>;

function markerDir(env: Env): string {
  return join(buildUserCacheDir(env), 'zero', 'write-roots');
}

function markerOf(root: string, env: Env): string {
  return join(markerDir(env), sha256Hex(root).slice(0, 32));
}

// Roots this process has noted already (a burst of runs with the same roots notes them once).
const noted = new Set<string>();

/** Remembers `roots` (absolute, resolved) as write roots of a sandboxed run. Never throws. */
export function noteWriteRoots(roots: readonly string[], env: Env = process.env): void {
  const fresh = roots.filter((root) => !noted.has(`${markerDir(env)}\0${root}`));
  if (fresh.length === 0) return;
  try {
    mkdirSync(markerDir(env), { recursive: true, mode: 0o700 });
    for (const root of fresh) {
      closeSync(openSync(markerOf(root, env), 'a', 0o600));
      noted.add(`${markerDir(env)}\0${root}`);
    }
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
