// SPDX-License-Identifier: MIT
// The per-user temp and cache directories macOS keeps under /var/folders/<x>/<y>/{T,C}: where
// clang's module cache, xcrun and Swift write whatever TMPDIR says. Read once per process.
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

/** The two directories, absolute and symlink-resolved; one that cannot be read is left out. */
export interface DarwinUserDirs {
  temp?: string;
  cache?: string;
}

let cached: DarwinUserDirs | undefined;

/** One confstr value through /usr/bin/getconf (pinned: a planted getconf on PATH is not used). */
function read(name: string): string | undefined {
  const result = spawnSync('/usr/bin/getconf', [name], { encoding: 'utf8', timeout: 5000 });
  if (result.status !== 0) return undefined;
  const value = result.stdout.trim().replace(/\/+$/, '');
  if (!value.startsWith('/')) return undefined;
  try {
    const real = realpathSync(value);
    // Anything else is not the per-user directory this allowance is for.
    return real.startsWith('/private/var/folders/') ? real : undefined;
  } catch {
    return undefined;
  }
}

/** DARWIN_USER_TEMP_DIR and DARWIN_USER_CACHE_DIR of this user (macOS only). */
export function readDarwinUserDirs(): DarwinUserDirs {
  if (cached !== undefined) return cached;
  const temp = read('DARWIN_USER_TEMP_DIR');
  const cache = read('DARWIN_USER_CACHE_DIR');
  cached = { ...(temp === undefined ? {} : { temp }), ...(cache === undefined ? {} : { cache }) };
  return cached;
}
