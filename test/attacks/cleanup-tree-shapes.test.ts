// Attack: the command leaves a protected path (.zero, .agents, a git hooks dir) shaped to break
// the host-side cleanup: nested deeper than PATH_MAX (the cleanup used to throw inside the native
// exit callback and V8 aborted the caller), full of links to directories outside every write root
// (a recursive remove that follows them deletes the caller's files), link loops, 100k entries,
// names with newlines. Fix: the cleanup runs only once the sandbox is gone and walks with
// directory descriptors (O_NOFOLLOW, one descriptor at a time, never across a mount); it never
// throws. The caller survives, the paths are gone, the outside is untouched.
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, py, sandboxTest } from '../helpers/sandbox.js';
import { hostRepo } from '../helpers/git-host.js';

sandboxTest('attack: protected paths planted deeper than PATH_MAX, with links out, loops and 100k entries, are removed without harm', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    rmSync(join(t.ws, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(t.outside, 'keep'), 'keep');
    const r = await py(t, `
import os
def deep(top, depth):
    os.mkdir(top); here = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir('dddddddd', dir_fd=here); nxt = os.open('dddddddd', os.O_RDONLY, dir_fd=here); os.close(here); here = nxt
    os.symlink(${JSON.stringify(t.outside)}, 'out', dir_fd=here)
    os.symlink('loop', 'loop', dir_fd=here)
    os.close(here)
deep('.zero', 1000)
deep('.git/hooks', 600)
os.mkdir('.agents')
os.symlink(${JSON.stringify(t.outside)}, '.agents/out')
os.mkdir('.agents/new\\nline')
for i in range(100):
    d = '.agents/d%d' % i; os.mkdir(d)
    for j in range(1000): open('%s/f%d' % (d, j), 'w').close()
print('planted')
`);
    assert.match(r.stdout, /planted/, r.stderr);
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, '.agents'), join(t.ws, '.git', 'hooks'), join(t.ws, '.zero')]);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(t.ws, '.zero')));
    assert.not.ok(existsSync(join(t.ws, '.agents')));
    assert.not.ok(existsSync(join(t.ws, '.git', 'hooks')));
    assert.equal(readdirSync(t.outside), ['keep']);
  } finally {
    t.cleanup();
  }
});

test.run();
