// The host holds each sandbox's mount namespace while it runs, so that the init's exit only drops
// a reference (the exit is reported without waiting for every mount of the sandbox to be
// unmounted) and the unmounts happen once the exit is known, on a thread of their own. These tests
// check both ends: the namespace is held while the sandbox runs, and let go of (no descriptor of it
// left in the host) once the exit has been delivered, for a cold and for a prewarmed sandbox, and
// for many sandboxes ending together (their namespaces all handed over in one poll of the loop).
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { loadNative } from '../../lib/native/load.js';
import { prewarmPool } from '../../lib/sandbox/prewarm.js';
import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest, until, waitFor } from '../helpers/sandbox.js';

/** Whether one of the host's descriptors points at `target` (`mnt:[...]` for a mount namespace). */
function hostHolds(target: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === target;
    } catch {
      return false; // the descriptor readdir itself used, closed by now
    }
  });
}

async function untilNoWatches(): Promise<void> {
  const native = loadNative();
  for (let i = 0; i < 500 && native.activeCount() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.is(native.activeCount(), 0, 'every exit delivered and every namespace closed');
}

async function heldThenReleased(prewarm: boolean): Promise<void> {
  const t = makeTree();
  let child: ReturnType<typeof spawnSandboxed> | undefined;
  try {
    if (prewarm) {
      await runSandboxed(['/bin/true'], { workspace: t.ws });
      await runSandboxed(['/bin/true'], { workspace: t.ws });
      for (let i = 0; i < 500 && prewarmPool.size === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child = spawnSandboxed(['/bin/sh', '-c', waitFor('ready', 'go')], { workspace: t.ws, stdio: ['ignore', 'ignore', 'ignore'], prewarm });
    await until(join(t.ws, 'ready'));
    assert.is(child.prewarmed, prewarm);
    const namespace = readlinkSync(`/proc/${child.pid}/ns/mnt`);
    assert.ok(namespace.startsWith('mnt:['), namespace);
    assert.ok(hostHolds(namespace), 'the host holds the sandbox\'s mount namespace while it runs');
    writeFileSync(join(t.ws, 'go'), '');
    const exit = await child.exited;
    assert.is(exit.exitCode, 0);
    prewarmPool.clear();
    await untilNoWatches();
    assert.not.ok(hostHolds(namespace), 'no descriptor of the namespace is left once the exit is delivered');
  } finally {
    // A failed assertion must not leave the sandbox waiting for `go`.
    child?.kill('SIGKILL');
    prewarmPool.clear();
    t.cleanup();
  }
}

sandboxTest('a cold sandbox\'s mount namespace is held while it runs and let go of after its exit', () => heldThenReleased(false));

sandboxTest('a prewarmed sandbox\'s mount namespace is held while it runs and let go of after its exit', () => heldThenReleased(true));

sandboxTest('the mount namespaces of sandboxes ending together are all let go of', async () => {
  const t = makeTree();
  const children: Array<ReturnType<typeof spawnSandboxed>> = [];
  try {
    for (let i = 0; i < 12; i++) {
      children.push(spawnSandboxed(['/bin/sh', '-c', waitFor(`ready-${i}`, 'go')], { workspace: t.ws, stdio: ['ignore', 'ignore', 'ignore'], prewarm: false }));
    }
    for (let i = 0; i < children.length; i++) await until(join(t.ws, `ready-${i}`));
    const namespaces = children.map((child) => readlinkSync(`/proc/${child.pid}/ns/mnt`));
    assert.is(new Set(namespaces).size, children.length, 'each sandbox has a mount namespace of its own');
    for (const namespace of namespaces) assert.ok(hostHolds(namespace), `the host holds ${namespace} while its sandbox runs`);
    writeFileSync(join(t.ws, 'go'), '');
    for (const child of children) assert.is((await child.exited).exitCode, 0);
    await untilNoWatches();
    for (const namespace of namespaces) assert.not.ok(hostHolds(namespace), `no descriptor of ${namespace} is left once the exits are delivered`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    t.cleanup();
  }
});

test.run();
