// SPDX-License-Identifier: MIT
// Attack: several sandboxes of one workspace run at once. The first changes the repository's
// config (a program-running key) and waits; the others start meanwhile, so what they note as the
// config "before" their run is already the first command's work. The first run's check puts the
// config back when it ends; a later run's check, comparing with its own note, would then put the
// planted key back ("restoring" it), and host git would run it. Fix: a run that starts while
// runs of the same write roots are in flight takes their notes (the state before any of them ran)
// for every path in its roots, and trusts nothing it finds there itself that they did not note.
// So the first check after the change undoes it, whichever run's it is. Checked with one planting
// run and three runs started during it (one ends before it, two after), then host git on the host.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, until, waitFor } from '../helpers/sandbox.js';
import { hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';

sandboxTest('attack: runs started while another changes the config do not put its planted key back', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const before = readFileSync(join(t.ws, '.git', 'config'));
    const options = { timeoutMs: 120_000 };
    const planter = sh(t, `git config core.fsmonitor "${plant(t.outside, 'fsmonitor')}" && ${waitFor('planted', 'go-planter')}`, options);
    await until(join(t.ws, 'planted'));
    // Three runs start while the planted key is there: one ends before the planter, two after.
    const early = sh(t, waitFor('early-started', 'go-early'), options);
    const late = [sh(t, waitFor('late1-started', 'go-late'), options), sh(t, waitFor('late2-started', 'go-late'), options)];
    for (const name of ['early-started', 'late1-started', 'late2-started']) await until(join(t.ws, name));
    writeFileSync(join(t.ws, 'go-early'), '');
    const earlyResult = await early;
    // The early run's check compares with the config as it was before the planter ran.
    assert.equal(earlyResult.protectedPathViolations, [join(t.ws, '.git', 'config')], earlyResult.stderr);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before, 'the first check put the config back');
    writeFileSync(join(t.ws, 'go-planter'), '');
    const planted = await planter;
    assert.is(planted.exitCode, 0, planted.stderr);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    writeFileSync(join(t.ws, 'go-late'), '');
    const lateResults = await Promise.all(late);
    for (const r of lateResults) assert.equal(r.protectedPathViolations, [], r.stderr);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before, 'no later run put the planted key back');
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test.run();
