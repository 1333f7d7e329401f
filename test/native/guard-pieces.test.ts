// SPDX-License-Identifier: MIT
// The protected-path notes taken in pieces (beginGuard), as a start in a burst takes them across
// turns of the event loop: another run of this process can end between two pieces. Its command may
// have changed a git config before this run looked at it and its check put the config back before
// this run's notes were done; this run must then take that run's notes (the state before it), or
// its own check would later "restore" the planted key. Run here with the guard's functions and the
// commands' writes made on the host; the sandboxed form of the attack is concurrent-runs-restore.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { prepareLinux } from '../../lib/backend/linux/start.js';
import { beginGuard, checkProtectedPaths, guardProtectedPaths } from '../../lib/sandbox/protected.js';
import { runNotesDir } from '../../lib/sandbox/run-notes.js';
import { guardMemoCounts } from '../../lib/sandbox/guard-memo.js';
import { hostRepo } from '../helpers/git-host.js';
import { settle } from '../helpers/guard-root.js';
import { makeTree } from '../helpers/sandbox.js';

// The shared run notes and the missed checks are Linux's.
const test = process.platform === 'linux' ? uvuTest : uvuTest.skip;

const PLANTED = '[core]\n\tfsmonitor = "touch /tmp/zs-guard-pieces-pwned;:"\n';

/** The plan of a run of `/bin/true` in `ws` (only the plan is used: no sandbox starts). */
function planOf(ws: string) {
  const prepared = prepareLinux(['/bin/true'], { workspace: ws });
  return { plan: prepared.plan, release: () => prepared.release() };
}

test('notes taken in pieces: three pieces, the last returns the guard', () => {
  const t = makeTree();
  const prepared = planOf(t.ws);
  try {
    hostRepo(t.ws);
    const guarding = beginGuard(prepared.plan);
    let pieces = 1;
    let guarded = guarding.step();
    while (guarded === undefined) {
      pieces++;
      guarded = guarding.step();
    }
    assert.is(pieces, 3);
    assert.ok(guarded.guard.git.configs.has(join(t.ws, '.git', 'config')), 'the repository config is noted');
    assert.equal(checkProtectedPaths(guarded.guard), []);
    guarded.release();
    assert.throws(() => guarding.step(), /given up/);
  } finally {
    prepared.release();
    t.cleanup();
  }
});

/** Run B ends between two pieces of run A's notes (with A's repository walk off the thread: while it is away). */
async function endsBetweenPieces(offThread: boolean): Promise<void> {
  const t = makeTree();
  const prepared = planOf(t.ws);
  try {
    hostRepo(t.ws);
    const config = join(t.ws, '.git', 'config');
    const before = readFileSync(config);
    // Run B is in flight; its command plants a program-running key.
    const b = guardProtectedPaths(prepared.plan);
    writeFileSync(config, PLANTED);
    // Run A begins its notes and looks at the repository: it sees the planted key.
    const a = beginGuard(prepared.plan, offThread);
    assert.is(a.step(), undefined);
    assert.is(a.step(), undefined);
    // B's sandbox is gone: its check puts the config back, and B ends.
    assert.equal(checkProtectedPaths(b.guard).map((v) => v.path), [config]);
    b.release();
    assert.equal(readFileSync(config), before);
    // A's notes are done; its command changes nothing.
    await a.pending();
    let guarded = a.step();
    while (guarded === undefined) guarded = a.step();
    const violations = checkProtectedPaths(guarded.guard);
    guarded.release();
    assert.equal(violations, [], 'nothing is reported for a config A\'s command did not touch');
    assert.equal(readFileSync(config), before, 'A\'s check did not put the planted key back');
  } finally {
    prepared.release();
    t.cleanup();
  }
}

test('a run that ends between two pieces of another run\'s notes leaves its notes to it', () => endsBetweenPieces(false));

test('a run that ends while another run\'s walk is off the thread leaves its notes to it', () => endsBetweenPieces(true));

test('notes with the repositories\' walk off the thread: the step after it waits for it, and the notes are the ones taken on the thread', async () => {
  const t = makeTree();
  const prepared = planOf(t.ws);
  try {
    hostRepo(t.ws);
    const onThread = guardProtectedPaths(prepared.plan);
    onThread.release();
    const guarding = beginGuard(prepared.plan, true);
    assert.is(guarding.pending(), undefined);
    assert.is(guarding.step(), undefined);
    assert.is(guarding.step(), undefined);
    const waiting = guarding.pending();
    assert.ok(waiting instanceof Promise, 'the walk runs off the thread after the window opened');
    await waiting;
    assert.is(guarding.pending(), undefined);
    let guarded = guarding.step();
    while (guarded === undefined) guarded = guarding.step();
    assert.equal([...guarded.guard.git.configs.keys()].sort(), [...onThread.guard.git.configs.keys()].sort());
    assert.equal([...guarded.guard.git.roots].sort(), [...onThread.guard.git.roots].sort());
    assert.equal(guarded.guard.git.readOnly.sort(), onThread.guard.git.readOnly.sort());
    assert.equal(checkProtectedPaths(guarded.guard), []);
    guarded.release();
  } finally {
    prepared.release();
    t.cleanup();
  }
});

test('a guard given up between pieces leaves no marker and cannot go on', () => {
  const t = makeTree();
  const prepared = planOf(t.ws);
  // This process's noting markers in the shared directory (other processes may be noting too).
  const markers = () => readdirSync(runNotesDir()).filter((name) => name.startsWith('n.') && name.includes(`.${process.pid}-`));
  try {
    hostRepo(t.ws);
    const a = beginGuard(prepared.plan);
    a.step();
    a.step();
    assert.is(markers().length, 1, 'the noting window is open between the pieces');
    a.abandon();
    assert.equal(markers(), []);
    assert.throws(() => a.step(), /given up/);
  } finally {
    prepared.release();
    t.cleanup();
  }
});

test('runs in flight that noted nothing else leave a run its own look, by identity; one that noted the state before a change gives its note to a copy, and the look it was taken over is unchanged', async () => {
  const t = makeTree();
  const prepared = planOf(t.ws);
  try {
    hostRepo(t.ws);
    const config = join(t.ws, '.git', 'config');
    // The look made, kept, then given again (guard-memo.ts; a tree is trusted once it has settled).
    await settle();
    const reused = guardMemoCounts.reused;
    for (let i = 0; i < 3; i++) guardProtectedPaths(prepared.plan).release();
    assert.ok(guardMemoCounts.reused > reused, 'the look is kept');
    const b = guardProtectedPaths(prepared.plan);
    const a = guardProtectedPaths(prepared.plan);
    assert.ok(a.guard.git === b.guard.git, 'the same look: its notes are not copied');
    assert.ok(a.guard.tools === b.guard.tools, 'the same tool notes: not copied');
    assert.equal(checkProtectedPaths(a.guard), []);
    a.release();
    // B's command plants a key; C looks afresh and takes B's note of the config (the state before).
    const kept = [...b.guard.git.configs].map(([path, note]) => [path, note.state, note.bytes?.toString('base64')]);
    const noteOfB = b.guard.git.configs.get(config);
    writeFileSync(config, PLANTED);
    const c = guardProtectedPaths(prepared.plan);
    assert.ok(c.guard.git.configs.get(config) === noteOfB, 'C takes B\'s note of the config');
    assert.ok(c.guard.git.configs !== b.guard.git.configs);
    assert.equal([...b.guard.git.configs].map(([path, note]) => [path, note.state, note.bytes?.toString('base64')]), kept, 'B\'s notes are as they were');
    assert.equal(checkProtectedPaths(b.guard).map((v) => v.path), [config]);
    b.release();
    assert.equal(checkProtectedPaths(c.guard), [], 'C\'s command changed nothing');
    c.release();
    assert.ok(!readFileSync(config, 'utf8').includes('fsmonitor'), 'the planted key is gone');
  } finally {
    prepared.release();
    t.cleanup();
  }
});

uvuTest.run();
