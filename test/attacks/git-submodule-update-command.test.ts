// Attack: `git submodule update` runs the command named by `update = !cmd`. A sandboxed command
// sets it for a registered submodule in the repository's config, or commits it to .gitmodules,
// so that the user's next `git submodule update` on the host runs it. Fix: a change of
// submodule.<name>.update in an existing config is a program-running change, undone after the run
// (reported, run fails); a new repository's config may not hold it at all. .gitmodules is a
// tracked file the command may write: git itself refuses a command there (git submodule init
// does not copy it, update stops with "invalid value"), which the second test checks with the
// host's git. Each test ends with the real `git submodule update` on the host.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';
import { hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';

/** A clone of a repository with one submodule, registered (`submodule init`) but not checked out. */
function cloneWithSubmodule(t: Tree): void {
  const up = hostRepo(join(t.base, 'up'));
  const top = hostRepo(join(t.base, 'top'));
  hostGit(top, ['submodule', '-q', 'add', up, 'lib']);
  hostGit(top, ['commit', '-q', '-m', 'lib']);
  hostGit(t.base, ['clone', '-q', top, t.ws]);
  hostGit(t.ws, ['submodule', '-q', 'init']);
}

sandboxTest('attack: submodule.<name>.update = !cmd set in an existing config is undone; host git submodule update runs nothing', async () => {
  const t = makeTree();
  try {
    cloneWithSubmodule(t);
    const before = readFileSync(join(t.ws, '.git', 'config'));
    const r = await sh(t, `git config submodule.lib.update '!${plant(t.outside, 'config')}' && echo set`);
    assert.match(r.stdout, /set/, r.stderr);
    assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.is(r.exitCode, 1);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    const update = hostGit(t.ws, ['submodule', 'update']);
    assert.is(update.status, 0, update.stderr);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: update = !cmd committed to .gitmodules: host git submodule init and update run nothing', async () => {
  const t = makeTree();
  try {
    cloneWithSubmodule(t);
    hostGit(t.ws, ['config', '--remove-section', 'submodule.lib']);
    const r = await sh(t, `git config -f .gitmodules submodule.lib.update '!${plant(t.outside, 'gitmodules')}' && git -c user.email=t@example.com -c user.name=t commit -qam update && echo set`);
    assert.match(r.stdout, /set/, r.stderr);
    hostGit(t.ws, ['submodule', 'init']);
    assert.not.match(hostGit(t.ws, ['config', '--list', '--local']).stdout, /submodule\.lib\.update/);
    hostGit(t.ws, ['submodule', 'update']);
    hostGit(t.ws, ['submodule', 'update', '--init', '--recursive']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test('control: submodule.<name>.update = !cmd in the config does run on git submodule update', () => {
  const t = makeTree();
  try {
    cloneWithSubmodule(t);
    spawnSync('git', ['config', 'submodule.lib.update', `!${plant(t.outside, 'control')}`], { cwd: t.ws });
    hostGit(t.ws, ['submodule', 'update']);
    assert.equal(markers(t.outside), ['pwned-control']);
  } finally {
    t.cleanup();
  }
});

test.run();
