// SPDX-License-Identifier: MIT
// The repository scan of a process that runs one sandbox (the CLI's `run`, one-run.ts): its new
// listings take no inotify watch (taking one costs more than its one later scan saves), so no
// listing is trusted without a look and no tree is summarised; a remembered directory's stamp is
// read again at every scan instead, and a repository made deep down, or a tree swapped in under the
// same names, is still found. Its own process: the setting holds for the process.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { scanRepositories, toBytes } from '../../lib/sandbox/beneath.js';
import { loadNative } from '../../lib/native/load.js';
import type { NativeGitScan } from '../../lib/native/types.js';
import { declareOneRun } from '../../lib/sandbox/one-run.js';
import { makeTree } from '../helpers/sandbox.js';

// Watches (and so summaries) exist on Linux only.
const test = process.platform === 'linux' ? uvuTest : uvuTest.skip;

function bare(dir: string): void {
  mkdirSync(join(dir, 'objects'), { recursive: true });
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
}

function scan(root: string): NativeGitScan {
  const r = loadNative().fsScanGit?.(toBytes(root), '', 100_000, 100, [], [], [], 0);
  assert.ok(r !== null && r !== undefined && 'worktrees' in r);
  return r as NativeGitScan;
}

test('a process that runs once takes no watch: nothing is summarised, and changes below remembered directories are found by their stamps', async () => {
  declareOneRun();
  const t = makeTree();
  try {
    for (let p = 0; p < 4; p++) for (let d = 0; d < 10; d++) mkdirSync(join(t.ws, 'node_modules', `pkg${p}`, `d${d}`, 'lib'), { recursive: true });
    mkdirSync(join(t.outside, 'swap', 'd1', 'lib'), { recursive: true });
    bare(join(t.outside, 'swap', 'd1', 'lib', 'repo', '.git'));
    await new Promise((resolve) => setTimeout(resolve, 2200));
    // The first scan through the package tells the addon this process runs once.
    assert.equal(scanRepositories(toBytes(t.ws), 100_000, 100).worktrees, []);
    for (let i = 0; i < 3; i++) assert.is(scan(t.ws).summarised, 0, `scan ${i}: nothing summarised`);
    const lib = (p: number, d: number) => join(t.ws, 'node_modules', `pkg${p}`, `d${d}`, 'lib');
    bare(join(lib(2, 5), '.git'));
    assert.equal(scan(t.ws).worktrees, [toBytes(lib(2, 5))]);
    // A package swapped for another tree under the same names, holding a repository one level deeper.
    renameSync(join(t.ws, 'node_modules', 'pkg3'), join(t.outside, 'old'));
    renameSync(join(t.outside, 'swap'), join(t.ws, 'node_modules', 'pkg3'));
    assert.equal([...scan(t.ws).worktrees].sort(), [lib(2, 5), join(lib(3, 1), 'repo')].map(toBytes).sort());
  } finally {
    t.cleanup();
  }
});

uvuTest.run();
