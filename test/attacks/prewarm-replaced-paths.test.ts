// SPDX-License-Identifier: MIT
// Attack: a prewarmed sandbox set up its mounts and Landlock rules by path before the command
// came; the host then replaces one of those paths by rename (an editor's atomic save, a checkout,
// a build's `rm -rf dist && mkdir dist`). The sandbox's mount stays on the old file, so a denied
// file's new content is readable, a write-protected file's new version is writable, and a write
// root made again is not writable. Fix: each prewarmed sandbox is set up under a watch set of every
// path its spec names, made before its set-up, and is handed out only while the set is quiet; a
// stale one is killed and the run starts cold. Checked by content on the host and in the output,
// after a prewarmed sandbox served the policy at least once (so that the pool was full of
// sandboxes set up before the change). A policy whose paths cannot all be watched is not
// prewarmed at all.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { prewarmPool } from '../../lib/sandbox/prewarm.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { renameOnHost, replacedLockedStaysReadOnly, replacedSecretStaysHidden, type ReplacedPathCase } from '../helpers/replaced-paths.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

async function untilWarm(): Promise<void> {
  for (let i = 0; i < 300 && prewarmPool.size < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Runs `script` until a prewarmed sandbox has served it, then waits for the pool to refill. */
async function warmUp(script: string, options: RunOptions): Promise<void> {
  let served = false;
  for (let i = 0; i < 6 && !served; i++) {
    const r = await runSandboxed(['/bin/sh', '-c', script], options);
    served = r.prewarmed === true;
    await untilWarm();
  }
  assert.ok(served, 'a prewarmed sandbox served the policy before the change');
  assert.ok(prewarmPool.size >= 1, 'sandboxes set up before the change are waiting');
}

const prewarmed: ReplacedPathCase = {
  options: { prewarm: true },
  runs: 5,
  warmUp,
  label: (r) => `prewarmed: ${r.prewarmed}`,
  after: () => prewarmPool.clear(),
};

sandboxTest('a denied file replaced by rename on the host stays hidden from the next commands', () =>
  replacedSecretStaysHidden(prewarmed, async (_ws, secret) => renameOnHost(secret, 'NEW-SECRET\n')));

sandboxTest('a write-protected file replaced by rename on the host stays read-only', () => replacedLockedStaysReadOnly(prewarmed));

sandboxTest('a write root removed and made again on the host is writable by the next commands', async () => {
  const t = makeTree();
  try {
    const dist = join(t.outside, 'dist');
    mkdirSync(dist);
    const options: RunOptions = { workspace: t.ws, allowWrite: [dist], prewarm: true };
    await warmUp(`echo warm > ${dist}/warm`, options);
    rmSync(dist, { recursive: true });
    mkdirSync(dist);
    for (let i = 0; i < 5; i++) {
      const out = join(dist, `out${i}`);
      const r = await runSandboxed(['/bin/sh', '-c', `echo built > ${out}`], options);
      assert.is(r.exitCode, 0, `run ${i} (prewarmed: ${r.prewarmed}): ${r.stderr}`);
      assert.is(readFileSync(out, 'utf8'), 'built\n');
    }
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('a policy whose paths cannot all be watched is never prewarmed, and masks as a cold start', async () => {
  // sysfs reports no changes through inotify: a mask there could go stale unseen.
  const t = makeTree();
  try {
    const options: RunOptions = { workspace: t.ws, denyRead: ['/sys/kernel/address_bits'], prewarm: true };
    for (let i = 0; i < 6; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', 'cat /sys/kernel/address_bits; echo done'], options);
      assert.is(r.stdout, 'done\n', r.stderr);
      assert.not.ok(r.prewarmed, `run ${i} was prewarmed`);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    assert.is(prewarmPool.size + prewarmPool.settingUp, 0, 'nothing set up ahead');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

test.run();
