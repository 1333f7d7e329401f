// Fail closed: with a layer missing (simulated: the test override can only ever remove a layer),
// runSandboxed rejects with sandbox_unavailable naming the layer, the CLI exits 125 with the
// reason, and the command never ran.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { makeTree, rejection, sandboxTest, sh } from '../helpers/sandbox.js';

for (const layer of ['landlock', 'seccomp', 'userns', 'mountns', 'pidns', 'netns']) {
  sandboxTest(`a missing ${layer} layer refuses to run instead of running weaker`, async () => {
    const t = makeTree();
    process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS = layer;
    try {
      const error = await rejection(sh(t, 'touch ran'));
      assert.is(error.code, 'sandbox_unavailable');
      assert.is(error.layer, layer);
      assert.match(error.message, new RegExp(`${layer}: disabled for testing`));
      assert.match(error.message, /nothing ran/);
      assert.not.ok(existsSync(join(t.ws, 'ran')), 'the command must not have run');
    } finally {
      delete process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS;
      t.cleanup();
    }
  });
}

sandboxTest('network allow does not need the network namespace layer, everything else still applies', async () => {
  const t = makeTree();
  process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS = 'netns';
  try {
    const r = await sh(t, 'touch ran', { network: 'allow' });
    assert.is(r.exitCode, 0);
    assert.ok(existsSync(join(t.ws, 'ran')));
  } finally {
    delete process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS;
    t.cleanup();
  }
});

sandboxTest('the CLI exits 125 with the missing layer on stderr, and the command never ran', async () => {
  const t = makeTree();
  try {
    const r = await runCli(['run', '--workspace', t.ws, '--', 'touch', 'ran'], {
      env: { ...process.env, ZERO_SANDBOX_TEST_DISABLE_LAYERS: 'seccomp' },
    });
    assert.is(r.code, 125);
    assert.match(r.stderr, /seccomp: disabled for testing/);
    assert.match(r.stderr, /\[sandbox_unavailable\]/);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
  } finally {
    t.cleanup();
  }
});

test.run();
