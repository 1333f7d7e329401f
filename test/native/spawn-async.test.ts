// SPDX-License-Identifier: MIT
// runSandboxed's cold starts clone off the JavaScript thread (the addon's spawnAsync): the JavaScript
// thread converts the spec and makes the pipes, a spawn thread clones and waits for the sandbox's
// setup, and the JavaScript thread registers the result. Each start of a burst must get its own
// streams and exit, a clone that fails must reject with the layer's error and leave no descriptor
// or watch behind, and an exit listener's error must stay an ordinary uncaught exception.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { assertEnforceable, prepareLinux } from '../../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf } from '../../lib/backend/linux/spec.js';
import { HostFacts } from '../../lib/host-facts.js';
import { callNative, callNativeAsync, loadNative, nativeBindingPath } from '../../lib/native/load.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { SandboxError } from '../../lib/errors.js';
import { openDescriptors } from '../helpers/fds.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';


/**
 * The descriptors open now that were not open in `before` (the same number naming something else
 * counts as new), once none is left or 3 s have passed: earlier runs' host-side work (an exit's
 * mount namespace closed by the addon's thread, an after-run check's directory) opens and closes
 * descriptors of its own while the test runs, and is gone in a moment; a descriptor leaked by the
 * failed start stays for good.
 */
async function descriptorsLeftSince(before: Map<string, string>): Promise<string[]> {
  const end = Date.now() + 3_000;
  for (;;) {
    const left = [...openDescriptors()].filter(([fd, target]) => before.get(fd) !== target).map(([fd, target]) => `${fd} -> ${target}`);
    if (left.length === 0 || Date.now() >= end) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

sandboxTest('a burst of cold starts: each run gets its own input, output and exit code', async () => {
  const t = makeTree();
  try {
    const runs = await Promise.all(Array.from({ length: 24 }, (_, i) => runSandboxed(['/bin/sh', '-c', `read line; echo "$line-${i}"; echo err-${i} >&2; exit ${i % 5}`], { workspace: t.ws, prewarm: false, input: `in${i}\n` })));
    runs.forEach((r, i) => {
      assert.is(r.stdout, `in${i}-${i}\n`);
      assert.is(r.stderr, `err-${i}\n`);
      assert.is(r.exitCode, i % 5);
      assert.not.ok(r.prewarmed);
    });
  } finally {
    t.cleanup();
  }
});

sandboxTest('a clone that fails off the JavaScript thread rejects with its error and leaves no descriptor or watch behind', async () => {
  const t = makeTree();
  const prepared = prepareLinux(['/bin/true'], { workspace: t.ws });
  try {
    const binding = loadNative();
    assert.type(binding.spawnAsync, 'function');
    const context = assertEnforceable(prepared.plan);
    const spec = buildLinuxSpec(prepared.plan, ['ignore', 'pipe', 'capture'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' }, hostViewOf(new HostFacts()));
    // The sandbox's first process cannot execute a missing init: the setup report says so.
    spec.linux.initPath = `${t.base}/no-such-init`;
    // The watches of earlier runs go once their exits have been delivered.
    for (let i = 0; i < 500 && binding.activeCount() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const fds = openDescriptors();
    const watches = binding.activeCount();
    let exits = 0;
    let error: unknown;
    try {
      await callNativeAsync((native) => native.spawnAsync!(spec, () => exits++));
    } catch (caught) {
      error = caught;
    }
    assert.instance(error, SandboxError);
    // The same failure as the clone on the JavaScript thread gives (a missing init is a broken install).
    let syncError: unknown;
    try {
      callNative((native) => native.spawn(spec, () => exits++));
    } catch (caught) {
      syncError = caught;
    }
    assert.instance(syncError, SandboxError);
    assert.is((error as SandboxError).code, 'native_unavailable');
    assert.is((error as SandboxError).code, (syncError as SandboxError).code);
    assert.is((error as SandboxError).message, (syncError as SandboxError).message);
    assert.is(binding.activeCount(), watches, 'no exit watch was registered');
    assert.equal(await descriptorsLeftSince(fds), [], 'every pipe made for it was closed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(exits, 0, 'no exit is reported for a start that failed');
  } finally {
    prepared.release();
    t.cleanup();
  }
});

test.run();
