// SPDX-License-Identifier: MIT
// A denyWrite entry, and each directory pinned above one, is planned as a real path and mounted
// later by the sandbox's first process. Another command running in the same workspace can swap
// either for a symbolic link in between. Attack: swap the planned file (or a pinned directory)
// for a link to a host file outside the write roots, then let the sandbox be set up. The setup
// must refuse (nothing runs), never protect the link's target in place of the path, and the host
// files must be unchanged.
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { assertEnforceable, prepareLinux } from '../../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf } from '../../lib/backend/linux/spec.js';
import { SNAPSHOT_PINS } from '../../lib/backend/linux/mounts.js';
import { HostFacts } from '../../lib/host-facts.js';
import { callNativeAsync, nativeBindingPath } from '../../lib/native/load.js';
import { SandboxError } from '../../lib/errors.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

/** Plans `script` with `denyWrite`, lets `swap` change the host, then starts the planned sandbox. */
async function startAfterSwap(t: Tree, script: string, denyWrite: string[], swap: () => void, denyRead: string[] = []): Promise<unknown> {
  const prepared = prepareLinux(['/bin/sh', '-c', script], { workspace: t.ws, denyWrite, denyRead });
  try {
    const context = assertEnforceable(prepared.plan);
    const spec = buildLinuxSpec(prepared.plan, ['ignore', 'ignore', 'ignore'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' }, hostViewOf(new HostFacts()));
    swap();
    try {
      const spawned = await callNativeAsync((native) => native.spawnAsync!(spec, () => undefined));
      // Set up after all: let it run to its end, so that what it did can be checked.
      for (let i = 0; i < 200 && existsSync(`/proc/${(spawned as { pid: number }).pid}`); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      return undefined;
    } catch (error) {
      return error;
    }
  } finally {
    prepared.release();
  }
}

/** A denyWrite file (`masked`: denyRead too) swapped for a link to a host file after planning. */
async function fileSwapRefused(masked: boolean): Promise<void> {
  const t = makeTree();
  try {
    const outside = join(t.outside, 'host.txt');
    writeFileSync(outside, 'host');
    const file = join(t.ws, 'keep.txt');
    writeFileSync(file, 'original');
    const error = await startAfterSwap(t, `echo evil > ${file}; echo evil > ${outside}; echo ran > ${t.ws}/ran`, [file], () => {
      renameSync(file, join(t.ws, 'keep.old'));
      symlinkSync(outside, file);
    }, masked ? [file] : []);
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'mount_failed');
    assert.not.ok(existsSync(join(t.ws, 'ran')), 'nothing ran');
    assert.is(readFileSync(outside, 'utf8'), 'host');
    assert.is(readFileSync(join(t.ws, 'keep.old'), 'utf8'), 'original');
  } finally {
    t.cleanup();
  }
}

sandboxTest('a denyWrite file swapped for a link after planning: the setup refuses, the host file is unchanged', () => fileSwapRefused(false));

// Such a file gets its read mask alone (no read-only bind beneath it): the mask refuses the link.
sandboxTest('a file both denyRead and denyWrite swapped for a link after planning: the setup refuses, the host file is unchanged', () => fileSwapRefused(true));

sandboxTest('a directory pinned from a snapshot, swapped for a link after planning: the setup refuses', async () => {
  const t = makeTree();
  try {
    const count = SNAPSHOT_PINS + 2;
    const file = (i: number) => join(t.ws, `p${i}`, 'keep.txt');
    for (let i = 0; i < count; i++) {
      mkdirSync(join(t.ws, `p${i}`));
      writeFileSync(file(i), 'original');
    }
    mkdirSync(join(t.outside, 'dir'));
    writeFileSync(join(t.outside, 'dir', 'keep.txt'), 'host');
    const error = await startAfterSwap(t, `echo evil > ${file(3)}; echo ran > ${t.ws}/ran`, Array.from({ length: count }, (_, i) => file(i)), () => {
      renameSync(join(t.ws, 'p3'), join(t.ws, 'p3-old'));
      symlinkSync(join(t.outside, 'dir'), join(t.ws, 'p3'));
    });
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'mount_failed');
    assert.not.ok(existsSync(join(t.ws, 'ran')), 'nothing ran');
    assert.is(readFileSync(join(t.outside, 'dir', 'keep.txt'), 'utf8'), 'host');
    assert.is(readFileSync(join(t.ws, 'p3-old', 'keep.txt'), 'utf8'), 'original');
  } finally {
    t.cleanup();
  }
});

test.run();
