// SPDX-License-Identifier: MIT
// Attack: with many write roots and deny entries, a policy's mount set-up is built once in a mount
// template and each run's mount namespace is a copy of it. The template took its paths when it
// was built; when one of them is replaced afterwards by a rename (on the host, or by a sandbox of
// another policy that may write there), a copy would still mask the old file and show the new one.
// Fix: a template is built under a watch set of every path its steps name (made before the build)
// and copied only while that set is quiet; a copy made while an event was queued is refused by the
// sandbox's first process before the command runs, and the run sets its mounts up afresh. Runs
// without prewarming, several times with the same policy (the second run builds the template, the
// next ones copy it), then the path is replaced and the next runs must not read the new content.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const read = 'cat secret.env; echo done';

async function warmUp(options: RunOptions): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const r = await runSandboxed(['/bin/sh', '-c', read], options);
    assert.is(r.stdout, 'done\n', r.stderr);
  }
}

/** Warms a templated policy hiding secret.env, lets `replace` swap the file, then reads it again. */
async function replacedSecret(replace: (ws: string, secret: string) => Promise<void>): Promise<void> {
  const t = makeTree();
  try {
    const secret = join(t.ws, 'secret.env');
    writeFileSync(secret, 'OLD-SECRET\n');
    const options: RunOptions = { workspace: t.ws, denyRead: [secret], prewarm: false };
    await warmUp(options);
    await replace(t.ws, secret);
    assert.is(readFileSync(secret, 'utf8'), 'NEW-SECRET\n');
    for (let i = 0; i < 3; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', read], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.not.match(r.stdout, /SECRET/, `run ${i} read the file`);
    }
  } finally {
    t.cleanup();
  }
}

sandboxTest('a denied file replaced by rename on the host stays hidden from the next templated runs', () =>
  replacedSecret(async (ws, secret) => {
    writeFileSync(join(ws, 'secret.new'), 'NEW-SECRET\n');
    renameSync(join(ws, 'secret.new'), secret);
  }));

sandboxTest('a denied file replaced by a sandbox of another policy stays hidden from the next templated runs', () =>
  replacedSecret(async (ws) => {
    // Another policy of the same workspace, without the deny entry, swaps the file.
    const swap = await runSandboxed(['/bin/sh', '-c', 'echo NEW-SECRET > secret.new && mv secret.new secret.env && echo swapped'], { workspace: ws, prewarm: false });
    assert.is(swap.stdout, 'swapped\n', swap.stderr);
  }));

sandboxTest('a write-protected file replaced by rename on the host stays read-only in templated runs', async () => {
  const t = makeTree();
  try {
    const locked = join(t.ws, 'locked.txt');
    writeFileSync(locked, 'original\n');
    const options: RunOptions = { workspace: t.ws, denyWrite: [locked], prewarm: false };
    const write = 'echo evil > locked.txt; echo done';
    for (let i = 0; i < 4; i++) await runSandboxed(['/bin/sh', '-c', write], options);
    assert.is(readFileSync(locked, 'utf8'), 'original\n');
    writeFileSync(join(t.ws, 'locked.new'), 'host-new\n');
    renameSync(join(t.ws, 'locked.new'), locked);
    for (let i = 0; i < 3; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', write], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.is(readFileSync(locked, 'utf8'), 'host-new\n', `run ${i} wrote the file`);
    }
  } finally {
    t.cleanup();
  }
});

test.run();
