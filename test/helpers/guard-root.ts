// SPDX-License-Identifier: MIT
// A write root for the protected-path guard's look (guard-memo.ts), settled so that a memo may keep
// what it finds there: a repository with a config file, and `.zero` protected and missing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { WritableRoot } from '../../lib/backend/types.js';
import type { LookAsked } from '../../lib/sandbox/guard-memo.js';
import { makeTree, type Tree } from './sandbox.js';

/** Settled: changed more than two seconds ago (a file changed later is never kept; no call sets a ctime back). */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 2200));

/** A root with a settled config file and a missing `.zero`, and what the guard's look is asked for it. */
export async function guardRoot(): Promise<{ t: Tree; root: string; asked: LookAsked }> {
  const t = makeTree();
  const root = join(t.ws, 'pkg');
  mkdirSync(join(root, '.git'), { recursive: true });
  writeFileSync(join(root, '.git', 'config'), '[core]\n');
  await settle();
  const w: WritableRoot = { root, readOnlySubpaths: [], protectedNames: ['.zero'] };
  return { t, root, asked: { writeRoots: [w], user: [w] } };
}
