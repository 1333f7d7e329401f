// SPDX-License-Identifier: MIT
// The repository scan of a process that runs one sandbox (the CLI's `run`, one-run.ts): its new
// listings take no inotify watch (taking one costs more than its one later scan saves), so no
// listing is trusted without a look and no tree is summarised; a remembered directory's stamp is
// read again at every scan instead, and a repository made deep down, or a tree swapped in under the
// same names, is still found. Its own process: the setting holds for the process.
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { scanRepositories, toBytes } from '../../lib/sandbox/beneath.js';
import { declareOneRun } from '../../lib/sandbox/one-run.js';
import { makeTree } from '../helpers/sandbox.js';
import { bare, makeModules, moduleLib, nativeScan as scan, settle } from '../helpers/scan-trees.js';

// Watches (and so summaries) exist on Linux only.
const test = process.platform === 'linux' ? uvuTest : uvuTest.skip;

test('a process that runs once takes no watch: nothing is summarised, and changes below remembered directories are found by their stamps', async () => {
  declareOneRun();
  const t = makeTree();
  try {
    makeModules(t.ws, 4);
    mkdirSync(join(t.outside, 'swap', 'd1', 'lib'), { recursive: true });
    bare(join(t.outside, 'swap', 'd1', 'lib', 'repo', '.git'));
    await settle();
    // The first scan through the package tells the addon this process runs once.
    assert.equal(scanRepositories(toBytes(t.ws), 100_000, 100).worktrees, []);
    for (let i = 0; i < 3; i++) assert.is(scan(t.ws).summarised, 0, `scan ${i}: nothing summarised`);
    const lib = (p: number, d: number) => moduleLib(t.ws, p, d);
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
