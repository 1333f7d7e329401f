// SPDX-License-Identifier: MIT
// Attack: zero-sandbox's own state on the host (`<user cache dir>/zero`: the managed runtime roots
// with their leases and the npmrc the host writes into them, the markers of earlier write roots)
// is made a write root (`allowWrite: ['~/.cache/zero']`, or a directory inside it). The command
// plants a link where the host writes next (the npmrc's temp name), or forges leases and markers
// later runs trust. Fix: a workspace or write root that is, or lies inside, that state (or the
// temp fallback of the runtime roots) is refused like one inside the settings: invalid_argument,
// naming the path and why. Nothing runs; the state stays as it was.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, rejection, sandboxTest } from '../helpers/sandbox.js';

sandboxTest('a write root that is or lies inside zero-sandbox\'s own state on the host is refused; nothing is planted there', async () => {
  const t = makeTree('zs-own-state-');
  const saved = process.env.XDG_CACHE_HOME;
  try {
    process.env.XDG_CACHE_HOME = join(t.base, 'cache');
    // A first run makes the workspace's runtime root (the host writes its npmrc there).
    const first = await runSandboxed('true', { workspace: t.ws });
    assert.is(first.exitCode, 0, first.stderr);
    const state = join(t.base, 'cache', 'zero');
    const runtime = join(state, 'runtime', 'v1');
    const before = readdirSync(runtime).sort();
    for (const root of [state, runtime]) {
      const error = await rejection(runSandboxed(`ln -s ${join(t.outside, 'victim')} ${join(runtime, 'planted')}; touch ${join(t.ws, 'ran')}`, { workspace: t.ws, allowWrite: [root] }));
      assert.is(error.code, 'invalid_argument', error.message);
      assert.match(error.message, `zero-sandbox's own state on the host (${state})`);
    }
    assert.not.ok(existsSync(join(t.ws, 'ran')), 'nothing ran');
    assert.equal(readdirSync(runtime).sort(), before);
    // A sibling of it is a directory like any other.
    mkdirSync(join(t.base, 'cache', 'zero2'));
    const sibling = await runSandboxed(`touch ${join(t.base, 'cache', 'zero2', 'ok')}`, { workspace: t.ws, allowWrite: [join(t.base, 'cache', 'zero2')] });
    assert.is(sibling.exitCode, 0, sibling.stderr);
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    t.cleanup();
  }
});

test.run();
