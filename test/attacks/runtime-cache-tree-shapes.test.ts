// Attack: the managed tool caches (a workspace's runtime state: cache/ and data/, write roots of
// every run there) are removed by the host later, when the state is pruned or ages out. The
// command leaves in them a tree nested deeper than PATH_MAX, with a link to a directory outside
// every write root and a link loop at the bottom: a path-based recursive remove threw there
// (ENAMETOOLONG), so `zero-sandbox state prune` failed and the trash stayed for ever, and one
// that followed a link would delete the caller's files.
// Fix: runtime trash is removed with the descriptor walk (O_NOFOLLOW, one descriptor at a time,
// any depth, never throws); no lease on it is live, so nothing sandboxed can race it.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { runCli } from '../helpers/cli.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

sandboxTest('attack: a managed cache shaped deeper than PATH_MAX with links out and a loop is pruned without harm', async () => {
  const t = makeTree('zs-trash-');
  try {
    writeFileSync(join(t.outside, 'keep'), 'keep');
    const env = { ...process.env, XDG_CACHE_HOME: join(t.base, 'cache'), XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
    const plant = `
import os
top = os.path.join(os.environ['XDG_CACHE_HOME'], 'deep')
os.mkdir(top); here = os.open(top, os.O_RDONLY)
for _ in range(700):
    os.mkdir('dddddddd', dir_fd=here); nxt = os.open('dddddddd', os.O_RDONLY, dir_fd=here); os.close(here); here = nxt
os.symlink(${JSON.stringify(t.outside)}, 'out', dir_fd=here)
os.symlink('loop', 'loop', dir_fd=here)
os.symlink(${JSON.stringify(t.outside)}, os.path.join(os.environ['XDG_CACHE_HOME'], 'out'))
print('planted')
`;
    const run = await runCli(['run', '--workspace', t.ws, '--', 'python3', '-c', plant], { env, cwd: t.ws });
    assert.is(run.stdout, 'planted\n', run.stderr);
    const prune = await runCli(['state', 'prune', '--all', '--json'], { env });
    assert.is(prune.code, 0, prune.stderr);
    assert.is(JSON.parse(prune.stdout).removed.length, 1, prune.stdout);
    const base = join(t.base, 'cache', 'zero', 'runtime', 'v1');
    const left = readdirSync(base).filter((name) => name.startsWith('.trash-') || /^[0-9a-f]{16}$/.test(name));
    assert.equal(left, [], 'the state and its trash are gone');
    assert.equal(readdirSync(t.outside), ['keep']);
    assert.is(readFileSync(join(t.outside, 'keep'), 'utf8'), 'keep');
  } finally {
    t.cleanup();
  }
});

test.run();
