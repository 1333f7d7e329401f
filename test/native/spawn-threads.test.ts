// SPDX-License-Identifier: MIT
// spawnAsync and spawnWarm clone on the addon's own spawn threads, not the libuv pool: a start
// must complete while every pool thread is held by other work, and an environment torn down while
// its starts are on those threads (a worker terminated) must leave no sandbox running, and no
// zombie: a torn-down environment's sandboxes are killed and reaped.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, open, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { loadNative } from '../../lib/native/load.js';
import type { NativeExit } from '../../lib/native/types.js';
import { pidsCgroupParent } from '../../lib/sandbox/cgroup.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { zombieChildren } from '../helpers/fds.js';
import { nativeSpec } from '../helpers/native-spec.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';
import { firstMessage } from '../helpers/workers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or 'timed out' after `ms` (a start stuck behind the held pool never settles). */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

/** Our processes that are alive (not zombies): children of this process, or any with `marker` in their command line. */
function liveProcesses(marker: string): string[] {
  const live: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (Number(ppid) === process.pid || cmdline.includes(marker)) live.push(`${pid} ${state} ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return live;
}


/** Holds every thread of the libuv pool: each blocks opening a FIFO in `dir` until `release` opens its other end. */
async function holdPool(dir: string): Promise<{ release(): Promise<void> }> {
  const fifos = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, (_, i) => join(dir, `fifo-${i}`));
  assert.is(spawnSync('mkfifo', fifos).status, 0);
  const held = fifos.map((fifo) => new Promise<number>((resolve) => open(fifo, 'r', (_error, fd) => resolve(fd))));
  await sleep(50);
  return {
    release: async () => {
      for (const fifo of fifos) closeSync(openSync(fifo, 'w'));
      for (const fd of await Promise.all(held)) closeSync(fd);
    },
  };
}

sandboxTest('a cold start and a prewarmed one complete while every thread of the libuv pool is held', async () => {
  const t = makeTree();
  const { spec, release } = nativeSpec(['/bin/sh', '-c', 'exit 7'], t.ws);
  const binding = loadNative();
  const pool = await holdPool(t.base);
  try {
    let exited!: (exit: NativeExit) => void;
    const exit = new Promise<NativeExit>((resolve) => (exited = resolve));
    const cold = await within(binding.spawnAsync!(spec, exited).then(() => exit), 30_000);
    assert.is.not(cold, 'timed out', 'the cold start waited for the pool');
    assert.is((cold as NativeExit).exitCode, 7);

    let warmExited!: (exit: NativeExit) => void;
    const warmExit = new Promise<NativeExit>((resolve) => (warmExited = resolve));
    const warm = await within(binding.spawnWarm(binding.prepareWarm(spec), warmExited), 30_000);
    assert.is.not(warm, 'timed out', 'the prewarmed start waited for the pool');
    assert.ok(binding.kill((warm as { pid: number }).pid, 9));
    assert.is((await warmExit).signal, 9);
  } finally {
    await pool.release();
    release();
    t.cleanup();
  }
});

sandboxTest('pids cgroups are made and removed while every thread of the libuv pool is held, each failure with its errno', async () => {
  const t = makeTree();
  const binding = loadNative();
  const pool = await holdPool(t.base);
  try {
    // A plain directory stands in for a cgroup parent: mkdir, the pids.max write and rmdir behave the same.
    const dir = join(t.base, 'cgroup-a');
    assert.is(await within(binding.cgroupMake!(dir, 64), 30_000), 0);
    assert.is(readFileSync(join(dir, 'pids.max'), 'utf8'), '64\n');
    assert.is(await binding.cgroupMake!(dir, 64), constants.errno.EEXIST);
    assert.is(await binding.cgroupMake!(join(t.base, 'missing', 'cgroup'), 8), constants.errno.ENOENT);
    assert.is(await within(binding.cgroupRemove!(dir), 30_000), constants.errno.ENOTEMPTY, 'a plain directory with pids.max in it is not empty');
    assert.is(await binding.cgroupRemove!(join(t.base, 'no-such')), constants.errno.ENOENT);
    const parent = pidsCgroupParent();
    if (parent !== undefined) {
      // In a real cgroup: a cap the kernel refuses (over PID_MAX_LIMIT) fails the make, which removes the cgroup it made.
      const over = join(parent, `zero-sandbox-${process.pid}-test-over`);
      assert.is(await binding.cgroupMake!(over, 10_000_000), constants.errno.EINVAL);
      assert.not.ok(existsSync(over), 'the cgroup made for the refused cap was removed again');
      const made = join(parent, `zero-sandbox-${process.pid}-test-made`);
      assert.is(await binding.cgroupMake!(made, 12), 0);
      assert.is(readFileSync(join(made, 'pids.max'), 'utf8'), '12\n');
      assert.is(await binding.cgroupRemove!(made), 0);
      assert.not.ok(existsSync(made));
    }
  } finally {
    await pool.release();
    t.cleanup();
  }
});

sandboxTest('a worker torn down while its starts are on the spawn threads leaves no sandbox running', async () => {
  const t = makeTree();
  const marker = `3600.${process.pid}${Date.now() % 100000}`;
  try {
    for (const delay of [0, 1, 3, 8, 20, 60]) {
      const worker = new Worker(new URL('../helpers/spawn-worker.js', import.meta.url), {
        workerData: { workspace: t.ws, argv: ['/bin/sleep', marker], cold: 4, warm: 2 },
      });
      const posted = await firstMessage(worker);
      assert.is(posted, 'posted');
      if (delay > 0) await sleep(delay);
      await worker.terminate();
    }
    let live = liveProcesses(marker);
    for (let i = 0; i < 200 && live.length > 0; i++) {
      await sleep(50);
      live = liveProcesses(marker);
    }
    assert.equal(live, [], 'every sandbox of the torn-down workers was killed');
    assert.equal(zombieChildren(), [], 'and reaped');
    const after = await runSandboxed(['/bin/sh', '-c', 'echo fine'], { workspace: t.ws, prewarm: false });
    assert.is(after.stdout, 'fine\n');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a worker torn down with sandboxes running leaves no zombie and no mount template in use', async () => {
  const counts = loadNative().mountTemplateCounts;
  assert.ok(counts !== undefined, 'the addon reports its mount templates');
  const t = makeTree();
  try {
    const secret = join(t.ws, 'secret.env');
    writeFileSync(secret, 'S\n');
    for (let i = 0; i < 3; i++) {
      const worker = new Worker(new URL('../helpers/inflight-worker.js', import.meta.url), { workerData: { workspace: t.ws, secret } });
      assert.is(await firstMessage(worker), 'running');
      await worker.terminate();
      assert.equal(zombieChildren(), [], `worker ${i}: its sandboxes were reaped`);
      assert.is(counts().busy, 0, `worker ${i}: the templates its sandboxes used are free again`);
    }
    const after = await runSandboxed(['/bin/sh', '-c', 'cat secret.env; echo fine'], { workspace: t.ws, denyRead: [secret] });
    assert.is(after.stdout, 'fine\n');
  } finally {
    t.cleanup();
  }
});

sandboxTest('workers terminated in the middle of their bursts (exits, prewarm refills and starts in flight) never bring the process down', async () => {
  const t = makeTree();
  try {
    // An exit or start delivered while a worker's environment is being torn down makes every
    // call into it fail; each must be dropped, not end the process in a fatal error.
    for (const delay of [5, 20, 30, 50, 80, 120, 150, 200, 250, 320, 400, 500, 600, 900]) {
      const worker = new Worker(new URL('../helpers/burst-worker.js', import.meta.url), { workerData: { workspace: t.ws, count: 48 } });
      const bursts: number[] = [];
      worker.on('message', (ok: number) => bursts.push(ok));
      const failed = new Promise<Error>((resolve) => worker.once('error', resolve));
      const ended = await Promise.race([sleep(delay).then(() => undefined), failed]);
      assert.is(ended, undefined, 'the worker ran until it was terminated');
      await worker.terminate();
      for (const ok of bursts) assert.is(ok, 48, 'every run of a finished burst printed its own output');
    }
    const after = await runSandboxed(['/bin/sh', '-c', 'echo alive'], { workspace: t.ws, prewarm: false });
    assert.is(after.stdout, 'alive\n');
  } finally {
    t.cleanup();
  }
});

test.run();
