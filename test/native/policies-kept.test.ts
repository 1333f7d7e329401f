// SPDX-License-Identifier: MIT
// A caller that serves several agents alternates between their policies, one workspace each. The
// memos under a run (its plan, its Linux spec, the protected-path look, the deny entries' kinds)
// keep up to 16 policies, least recently used going first: eight workspaces used in turn are each
// answered from them, run after run. With room for four, each memo dropped every policy before its
// next run came, and every run was prepared from nothing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { loadNative } from '../../lib/native/load.js';
import { denyEntryMemoCounts } from '../../lib/sandbox/deny-entry-memo.js';
import { guardMemoCounts } from '../../lib/sandbox/guard-memo.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { watchedMemoCounts } from '../../lib/sandbox/watched-memo.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

const WORKSPACES = 8;

async function runAll(policies: RunOptions[]): Promise<void> {
  for (const options of policies) {
    const r = await runSandboxed(['/bin/true'], options);
    assert.is(r.exitCode, 0, r.stderr);
  }
}

sandboxTest(`${WORKSPACES} workspaces used in turn are each prepared from what was kept`, async () => {
  const trees: Tree[] = [];
  try {
    const policies: RunOptions[] = [];
    for (let i = 0; i < WORKSPACES; i++) {
      const t = makeTree(`zs-kept-${i}-`);
      trees.push(t);
      writeFileSync(join(t.ws, 'secret.env'), 'S\n');
      writeFileSync(join(t.ws, 'package.json'), '{}\n');
      policies.push({ workspace: t.ws, denyRead: [join(t.ws, 'secret.env')], denyWrite: [join(t.ws, 'package.json')], prewarm: false });
    }
    // The looks keep only what was last changed more than 2 s before (a change within one tick of
    // the file system's clock could leave a stamp as it was).
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (let round = 0; round < 3; round++) await runAll(policies);
    const computed = watchedMemoCounts.computed;
    const looked = guardMemoCounts.looked;
    const entries = denyEntryMemoCounts.looked;
    for (let round = 0; round < 2; round++) await runAll(policies);
    assert.is(watchedMemoCounts.computed - computed, 0, 'plans and specs computed again');
    assert.is(guardMemoCounts.looked - looked, 0, 'protected-path looks made again');
    assert.is(denyEntryMemoCounts.looked - entries, 0, 'deny entries looked at again');
  } finally {
    for (const t of trees) t.cleanup();
  }
});

sandboxTest('20 workspaces in turn: templates dropped unused rest their policies, the others stay kept, every run enforced', async () => {
  const counts = loadNative().mountTemplateCounts;
  assert.ok(counts !== undefined, 'the addon reports its mount templates');
  const trees: Tree[] = [];
  try {
    const policies: RunOptions[] = [];
    for (let i = 0; i < 20; i++) {
      const t = makeTree(`zs-rest-${i}-`);
      trees.push(t);
      writeFileSync(join(t.ws, 'secret.env'), 'S\n');
      policies.push({ workspace: t.ws, denyRead: [join(t.ws, 'secret.env')], prewarm: false });
    }
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const round = async (): Promise<void> => {
      for (const [i, options] of policies.entries()) {
        const r = await runSandboxed(['/bin/sh', '-c', `cat secret.env; echo ${i} > out`], options);
        assert.is(r.stdout, '', 'the denied file stays hidden');
        assert.is(readFileSync(join(trees[i]!.ws, 'out'), 'utf8'), `${i}\n`, 'the write landed');
      }
    };
    for (let r = 0; r < 10; r++) await round();
    const before = counts();
    await round();
    const after = counts();
    // With the oldest dropped first and no rest, each of the 20 was dropped before its next run
    // came and built again: 20 builds a round.
    assert.ok(after.built - before.built <= 6, `templates built in the last round: ${after.built - before.built}`);
    assert.ok(after.rested - before.rested >= 1, 'some policies rested');
    assert.ok(after.held <= 16, `templates held: ${after.held}`);
  } finally {
    for (const t of trees) t.cleanup();
  }
});

test.run();
