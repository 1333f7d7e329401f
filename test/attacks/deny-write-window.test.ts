// SPDX-License-Identifier: MIT
// Many pins and denyWrite entries in one write root are made while that root's mounts refuse to
// follow symbolic links, and the denyWrite files are bound from a read-only snapshot of the root
// (one mount call each, no check call). Attacks: swap a planned file for a link between planning
// and setup; change a denied file's content or metadata, or carry it away by renaming; look for
// the snapshot. The links of the workspace itself must work again once the sandbox runs, and a
// host mount that refuses links must keep doing so inside.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { assertEnforceable, prepareLinux } from '../../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf } from '../../lib/backend/linux/spec.js';
import { SNAPSHOT_PINS } from '../../lib/backend/linux/mounts.js';
import { HostFacts } from '../../lib/host-facts.js';
import { callNativeAsync, nativeBindingPath } from '../../lib/native/load.js';
import { SandboxError } from '../../lib/errors.js';
import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';

/**
 * Enough entries in one root for the link window: a pin and a denied file each, more than its
 * threshold (kWindowSteps in native/linux/link_window_plan.cc), and more pins than SNAPSHOT_PINS.
 */
const COUNT = Math.max(40, SNAPSHOT_PINS + 4);

/** `COUNT` denied files, each in a directory of its own under packages/ (pinned). */
function deniedFiles(t: Tree): string[] {
  const files: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    mkdirSync(join(t.ws, 'packages', `p${i}`), { recursive: true });
    writeFileSync(join(t.ws, 'packages', `p${i}`, 'secret.env'), 'original');
    files.push(join(t.ws, 'packages', `p${i}`, 'secret.env'));
  }
  return files;
}

sandboxTest('a denyWrite file among many, swapped for a link after planning: the setup refuses', async () => {
  const t = makeTree();
  try {
    const files = deniedFiles(t);
    const outside = join(t.outside, 'host.txt');
    writeFileSync(outside, 'host');
    const prepared = prepareLinux(['/bin/sh', '-c', `echo evil > ${files[5]}; echo ran > ${t.ws}/ran`], { workspace: t.ws, denyWrite: files });
    let error: unknown;
    try {
      const context = assertEnforceable(prepared.plan);
      const spec = buildLinuxSpec(prepared.plan, ['ignore', 'ignore', 'ignore'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' }, hostViewOf(new HostFacts()));
      renameSync(files[5] as string, join(t.ws, 'packages', 'p5', 'secret.old'));
      symlinkSync(outside, files[5] as string);
      try {
        const spawned = await callNativeAsync((native) => native.spawnAsync!(spec, () => undefined));
        for (let i = 0; i < 200 && existsSync(`/proc/${(spawned as { pid: number }).pid}`); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      } catch (caught) {
        error = caught;
      }
    } finally {
      prepared.release();
    }
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'mount_failed');
    assert.not.ok(existsSync(join(t.ws, 'ran')), 'nothing ran');
    assert.is(readFileSync(outside, 'utf8'), 'host');
  } finally {
    t.cleanup();
  }
});

sandboxTest('many denyWrite entries: content, metadata and names stay, the workspace links work, no snapshot is left', async () => {
  const t = makeTree();
  try {
    const files = deniedFiles(t);
    // A denied directory among them: read-only throughout, a file beneath it included.
    mkdirSync(join(t.ws, 'locked', 'deep'), { recursive: true });
    writeFileSync(join(t.ws, 'locked', 'deep', 'keep.txt'), 'kept');
    // Links the workspace had before the run, to a denied file and to a directory.
    symlinkSync(files[2] as string, join(t.ws, 'to-secret'));
    symlinkSync('packages/p3', join(t.ws, 'to-dir'));
    const r = await sh(t, [
      'chmod 777 packages/p0/secret.env; echo "chmod=$?"', 'touch -d 2001-01-01 packages/p1/secret.env; echo "touch=$?"',
      'echo evil > to-secret; echo "via-link=$?"', 'echo "read=$(cat to-secret)"', 'echo "listed=$(ls to-dir/)"',
      'mv packages/p4/secret.env packages/p4/moved; echo "rename=$?"', 'rm -f packages/p6/secret.env; echo "rm=$?"',
      'echo evil > locked/deep/keep.txt; echo "deep=$?"', 'touch locked/deep/new; echo "create=$?"',
      'echo free > free.txt; ln -s free.txt new-link; echo "new-link=$(cat new-link)"',
      'echo "shm=$(ls -A /dev/shm | wc -l)"',
    ].join('; '), { denyWrite: [...files, join(t.ws, 'locked')] });
    for (const file of files) assert.is(readFileSync(file, 'utf8'), 'original', file);
    assert.is(statSync(files[0] as string).mode & 0o777, 0o644);
    assert.ok(statSync(files[1] as string).mtimeMs > Date.parse('2002-01-01'), 'mtime unchanged');
    assert.is(readFileSync(join(t.ws, 'locked', 'deep', 'keep.txt'), 'utf8'), 'kept');
    assert.equal(readdirSync(join(t.ws, 'locked', 'deep')), ['keep.txt']);
    for (const failed of ['chmod', 'touch', 'via-link', 'rename', 'rm', 'deep', 'create']) assert.match(r.stdout, new RegExp(`${failed}=[1-9]`), `${failed}: ${r.stdout}`);
    assert.match(r.stdout, /read=original/);
    assert.match(r.stdout, /listed=secret\.env/);
    assert.match(r.stdout, /new-link=free/);
    assert.match(r.stdout, /shm=0/);
  } finally {
    t.cleanup();
  }
});

// A mount that refuses links on the host (root callers only): the window would clear the flag
// from every mount of the root, this one included, so the entries are checked one by one instead
// and the mount refuses links inside the sandbox as it does outside.
sandboxTest('a host mount that refuses links keeps refusing them inside, with many denyWrite entries', async () => {
  const t = makeTree();
  const mnt = join(t.ws, 'packages', 'p1', 'mnt');
  let mounted = false;
  try {
    const files = deniedFiles(t);
    mkdirSync(mnt);
    mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,nosymfollow', 'zs-test', mnt]).status === 0;
    if (mounted) {
      writeFileSync(join(mnt, 'target.txt'), 'target');
      symlinkSync('target.txt', join(mnt, 'link'));
    }
    const r = await sh(t, `echo evil > packages/p0/secret.env; cat packages/p1/mnt/link; echo "follow=$?"; echo ok > free.txt`, { denyWrite: files });
    for (const file of files) assert.is(readFileSync(file, 'utf8'), 'original', file);
    assert.is(readFileSync(join(t.ws, 'free.txt'), 'utf8'), 'ok\n', r.stderr);
    if (mounted) assert.match(r.stdout, /follow=1/);
  } finally {
    if (mounted) spawnSync('umount', [mnt]);
    t.cleanup();
  }
});

test.run();
