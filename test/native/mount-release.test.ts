// The host holds each sandbox's mount namespace while it runs, so that the init's exit only drops
// a reference (the exit is reported without waiting for every mount of the sandbox to be
// unmounted) and the unmounts happen once the exit is known, on a thread of their own. These tests
// check both ends: the namespace is held while the sandbox runs, and let go of (no descriptor of it
// left in the host) once the exit has been delivered, for a cold and for a prewarmed sandbox, and
// for many sandboxes ending together (their namespaces all handed over in one poll of the loop).
import { execFileSync } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { loadNative } from '../../lib/native/load.js';
import { prewarmPool } from '../../lib/sandbox/prewarm.js';
import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest, until, waitFor } from '../helpers/sandbox.js';

/**
 * Each mount namespace's id that never names another one: the kernel's 64-bit namespace id
 * (NS_GET_MNTNS_ID, Linux 6.8+), else the `mnt:[inode]` link, whose number a namespace made later
 * may reuse (the kernel hands out the lowest free one). Of the namespaces `paths` lead to, or, with
 * none given, of every one this process holds a descriptor of.
 */
function mountNamespaceIds(paths: string[] = []): string[] {
  const script = `
import fcntl, os, struct, sys
paths = sys.argv[2:] or ['/proc/%s/fd/%s' % (sys.argv[1], n) for n in os.listdir('/proc/%s/fd' % sys.argv[1])]
for p in paths:
    try:
        link = os.readlink(p)
        if not link.startswith('mnt:['): continue
        fd = os.open(p, os.O_RDONLY)
        try:
            print(struct.unpack('Q', fcntl.ioctl(fd, 0x8008b705, bytes(8)))[0])
        except OSError:
            print(link)
        finally:
            os.close(fd)
    except OSError:
        pass
`;
  return execFileSync('python3', ['-c', script, String(process.pid), ...paths], { encoding: 'utf8' }).split('\n').filter((line) => line !== '');
}

/** Whether one of the host's descriptors holds the mount namespace of id `id` (mountNamespaceIds). */
function hostHolds(id: string): boolean {
  return mountNamespaceIds().includes(id);
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
    assert.ok(readlinkSync(`/proc/${child.pid}/ns/mnt`).startsWith('mnt:['));
    const [namespace] = mountNamespaceIds([`/proc/${child.pid}/ns/mnt`]) as [string];
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
    const namespaces = mountNamespaceIds(children.map((child) => `/proc/${child.pid}/ns/mnt`));
    assert.is(namespaces.length, children.length);
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
