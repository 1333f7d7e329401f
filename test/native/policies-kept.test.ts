// SPDX-License-Identifier: MIT
// A caller that serves several agents alternates between their policies, one workspace each. The
// memos under a run (its plan, its Linux spec, the protected-path look, the deny entries' kinds)
// keep up to 16 policies, least recently used going first: eight workspaces used in turn are each
// answered from them, run after run. With room for four, each memo dropped every policy before its
// next run came, and every run was prepared from nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

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

test.run();
