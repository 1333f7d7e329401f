// Everyday git inside the sandbox keeps working under the git protections (read-only git files of
// existing repositories, the after-run check of new ones): init then commits, commit, checkout -b,
// stash, worktree add inside the workspace, submodule update against a local path, clone into
// the workspace, submodule add, and data-only config changes of an existing repository. Each run ends with exit 0 and no violation, and host git sees the
// result.
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { hostGit, hostRepo } from '../helpers/git-host.js';

const G = 'git -c user.email=t@example.com -c user.name=t -c protocol.file.allow=always';

function clean(r: { exitCode: number | null; stderr: string; protectedPathViolations: string[] }, what: string): void {
  assert.is(r.exitCode, 0, `${what}: ${r.stderr}`);
  assert.equal(r.protectedPathViolations, [], what);
}

sandboxTest('git init in an empty workspace, then commits', async () => {
  const t = makeTree();
  try {
    clean(await sh(t, `${G} init -q . && echo a > a && ${G} add a && ${G} commit -qm one && echo b > b && ${G} add b && ${G} commit -qm two`), 'init');
    assert.equal(hostGit(t.ws, ['log', '--format=%s']).stdout.split('\n').filter(Boolean), ['two', 'one']);
    clean(await sh(t, `echo c > c && ${G} add c && ${G} commit -qm three`), 'a later run');
  } finally {
    t.cleanup();
  }
});

sandboxTest('git commit, checkout -b, stash and worktree add in an existing repository', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    clean(await sh(t, [
      `echo a > a && ${G} add a && ${G} commit -qm one`,
      `${G} checkout -q -b feature && echo b > b && ${G} add b && ${G} commit -qm two`,
      `echo change >> a && ${G} stash -q && ${G} stash pop -q && ${G} commit -qam three`,
      `${G} worktree add -q wt && ${G} -C wt commit -q --allow-empty -m in-worktree`,
    ].join(' && ')), 'everyday');
    assert.match(hostGit(t.ws, ['log', '--format=%s', 'feature']).stdout, /three\ntwo\none/);
    assert.is(hostGit(join(t.ws, 'wt'), ['status', '--short']).status, 0);
    assert.match(hostGit(join(t.ws, 'wt'), ['log', '--format=%s', '-1']).stdout, /in-worktree/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('git submodule update against a local path, and git submodule add', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    const superRepo = hostRepo(join(t.base, 'super'));
    hostGit(superRepo, ['submodule', 'add', '-q', up, 'sub']);
    hostGit(superRepo, ['commit', '-qm', 'sub']);
    hostGit(t.base, ['clone', '-q', superRepo, t.ws]);
    hostGit(t.ws, ['submodule', 'init']);
    clean(await sh(t, `${G} submodule update`), 'submodule update');
    assert.match(hostGit(join(t.ws, 'sub'), ['log', '--format=%s']).stdout, /first/);
    assert.is(hostGit(t.ws, ['status', '--porcelain']).stdout, '');
    const fresh = makeTree();
    try {
      clean(await sh(fresh, `${G} init -q . && ${G} submodule add -q ${up} lib && ${G} commit -qm lib`), 'submodule add');
      assert.match(hostGit(join(fresh.ws, 'lib'), ['log', '--format=%s']).stdout, /first/);
    } finally {
      fresh.cleanup();
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('config changes of an existing repository that are data only are kept: remote add, fetch, branch -u, config user.name, sparse-checkout', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    hostRepo(t.ws);
    clean(await sh(t, [
      `${G} remote add origin ${up}`,
      `${G} fetch -q origin`,
      `${G} branch -q --set-upstream-to=origin/main`,
      `${G} config user.name 'Sandboxed Name'`,
      `${G} sparse-checkout set --no-cone /a`,
    ].join(' && ')), 'config changes');
    assert.is(hostGit(t.ws, ['config', 'remote.origin.url']).stdout.trim(), up);
    assert.is(hostGit(t.ws, ['config', 'branch.main.remote']).stdout.trim(), 'origin');
    assert.is(hostGit(t.ws, ['config', '--local', 'user.name']).stdout.trim(), 'Sandboxed Name');
    assert.is(hostGit(t.ws, ['config', 'core.sparseCheckout']).stdout.trim(), 'true');
  } finally {
    t.cleanup();
  }
});

sandboxTest('git clone into the workspace', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    clean(await sh(t, `${G} clone -q ${up} . && ${G} commit -q --allow-empty -m mine`), 'clone');
    assert.equal(hostGit(t.ws, ['log', '--format=%s']).stdout.split('\n').filter(Boolean), ['mine', 'first']);
    // A clone further down (a vendored checkout) is kept as git wrote it.
    clean(await sh(t, `${G} clone -q ${up} vendor/deep/up && ${G} -C vendor/deep/up commit -q --allow-empty -m deep`), 'nested clone');
    assert.match(hostGit(join(t.ws, 'vendor', 'deep', 'up'), ['log', '--format=%s', '-1']).stdout, /deep/);
  } finally {
    t.cleanup();
  }
});

test.run();
