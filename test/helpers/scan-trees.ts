// SPDX-License-Identifier: MIT
// Trees for the repository-scan tests, and the addon's scan of them as a run asks it: bare git
// dirs, a node_modules of packages (enough directories per tree for the scan to summarise it),
// and the time a tree must age before the scan remembers its listings.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';

import { toBytes } from '../../lib/sandbox/beneath.js';
import { loadNative } from '../../lib/native/load.js';
import type { NativeGitScan } from '../../lib/native/types.js';
import { NESTED_CONFIG_SCAN } from '../../lib/protected-names.js';

/** Makes `dir` a git dir (HEAD, objects/, refs/), as a bare repository or a `.git` is. */
export function bare(dir: string): void {
  mkdirSync(join(dir, 'objects'), { recursive: true });
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
}

/** The `lib` directory of package `p`'s `d<d>` in the node_modules below `root`. */
export function moduleLib(root: string, p: number, d: number): string {
  return join(root, 'node_modules', `pkg${p}`, `d${d}`, 'lib');
}

/** A node_modules of `packages` packages below `ws`, each with 20 directories (d0-d9, each with lib). */
export function makeModules(ws: string, packages: number): void {
  for (let p = 0; p < packages; p++) for (let d = 0; d < 10; d++) mkdirSync(moduleLib(ws, p, d), { recursive: true });
}

/** Listings are remembered once their directories are older than the clock's coarse tick. */
export const settle = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, 2200));

/** The addon's scan of `root` (asked for the nested configs a run looks for with `named`). */
export function nativeScan(root: string, options: { maxDirs?: number; maxRepos?: number; named?: boolean } = {}): NativeGitScan {
  const n = options.named === true ? NESTED_CONFIG_SCAN : { names: [], suffixes: [], skip: [], max: 0 };
  const r = loadNative().fsScanGit?.(toBytes(root), '', options.maxDirs ?? 100_000, options.maxRepos ?? 100, n.names, n.suffixes, n.skip, n.max);
  assert.ok(r !== null && r !== undefined && 'worktrees' in r, `scanned ${root}`);
  return r as NativeGitScan;
}
