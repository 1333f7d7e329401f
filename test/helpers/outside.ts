// SPDX-License-Identifier: MIT
// A base directory outside every temp write root (/tmp and $TMPDIR), for tests that need an
// "outside the workspace and the temp roots" path wherever the repository was cloned.
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from './cli.js';
import { isWithin } from '../../lib/path-within.js';

let cached: string | undefined;

export function outsideTempBase(): string {
  if (cached !== undefined) return cached;
  const temps = ['/tmp', process.env.TMPDIR]
    .filter((p): p is string => p !== undefined && p !== '' && existsSync(p))
    .map((p) => realpathSync(p));
  // Not the repository itself first: it is zero-sandbox's own package directory, never a workspace.
  for (const candidate of ['/var/tmp', join(REPO_ROOT, 'dist'), homedir()]) {
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (!temps.some((temp) => isWithin(temp, real))) return (cached = real);
  }
  throw new Error('no directory outside the temp roots is available for the test');
}
