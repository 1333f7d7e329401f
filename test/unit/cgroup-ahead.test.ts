// SPDX-License-Identifier: MIT
// Pids cgroups made ahead off the caller's thread (pidsLimitMade): a start that would otherwise
// mkdir one on the event loop's thread waits for one made off it (the addon's spawn threads), then takes it. Run
// against a plain directory standing in for a cgroup parent (mkdir and the pids.max write behave
// the same there; the cgroup's own pids.current is written by the test).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { createPidsLimit, pidsCgroupParent, pidsCgroupUsable, pidsLimitKept, pidsLimitMade } from '../../lib/sandbox/cgroup.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';
import { firstMessage } from '../helpers/workers.js';

function parentDir(): string {
  return tempDir('zs-cgroup-ahead-');
}

/** The cgroups made under `parent`, each given the empty pids.current a real cgroup has. */
function madeUnder(parent: string): string[] {
  const dirs = readdirSync(parent).filter((name) => name.startsWith(`zero-sandbox-${process.pid}-`));
  for (const name of dirs) writeFileSync(join(parent, name, 'pids.current'), '0\n');
  return dirs;
}

test('a start with no kept cgroup waits for one made ahead, with its cap, and then takes it', async () => {
  const parent = parentDir();
  try {
    const made = pidsLimitMade(77, parent);
    assert.ok(made instanceof Promise, 'nothing kept: the cgroup is made ahead');
    await made;
    const dirs = madeUnder(parent);
    assert.is(dirs.length, 1);
    assert.is(readFileSync(join(parent, dirs[0] as string, 'pids.max'), 'utf8'), '77\n');
    assert.is(pidsLimitMade(77, parent), undefined, 'the made cgroup is kept for the start');
    const limit = createPidsLimit(77, parent);
    assert.ok(limit !== undefined);
    assert.is(limit.dir, join(parent, dirs[0] as string), 'the start took the cgroup made ahead');
    assert.is(madeUnder(parent).length, 1, 'and made none of its own');
    limit.closeFd();
    limit.remove();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('starts waiting together get one cgroup each, for their own cap only', async () => {
  const parent = parentDir();
  try {
    const waits = [pidsLimitMade(31, parent), pidsLimitMade(31, parent), pidsLimitMade(31, parent)];
    assert.ok(waits.every((w) => w instanceof Promise));
    await Promise.all(waits);
    const dirs = madeUnder(parent);
    assert.is(dirs.length, 3);
    const other = pidsLimitMade(32, parent);
    assert.ok(other instanceof Promise, 'another cap has none kept');
    await other;
    const taken = [createPidsLimit(31, parent), createPidsLimit(31, parent), createPidsLimit(31, parent)];
    assert.is(new Set(taken.map((l) => l?.dir)).size, 3, 'three distinct cgroups');
    for (const l of taken) assert.ok(dirs.includes((l?.dir ?? '').slice(parent.length + 1)));
    for (const l of taken) l?.closeFd();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a failed making lets the start go on, which then refuses as before', async () => {
  const parent = join(parentDir(), 'gone');
  const made = pidsLimitMade(16, parent);
  assert.ok(made instanceof Promise);
  await made;
  assert.not.ok(existsSync(parent));
  assert.throws(() => createPidsLimit(16, parent), (error: unknown) => (error as { code?: string }).code === 'sandbox_unavailable');
  assert.is(createPidsLimit(16, parent, false), undefined, 'the default cap reports no cgroup instead');
});

test('a kept cgroup still counting processes is not one to take: the start makes one ahead instead', async () => {
  const parent = parentDir();
  try {
    assert.not.ok(pidsLimitKept(45, parent), 'none kept yet');
    await Promise.all([pidsLimitMade(45, parent), pidsLimitMade(45, parent)]);
    const [first, second] = madeUnder(parent) as [string, string];
    // Two runs take them and end; their last processes are still counted when they are kept again.
    const runs = [createPidsLimit(45, parent), createPidsLimit(45, parent)];
    for (const name of [first, second]) writeFileSync(join(parent, name, 'pids.current'), '1\n');
    for (const run of runs) {
      run?.closeFd();
      run?.remove();
    }
    assert.not.ok(pidsLimitKept(45, parent), 'both kept ones still count a process');
    const made = pidsLimitMade(45, parent);
    assert.ok(made instanceof Promise, 'so one is made ahead rather than by the start itself');
    await made;
    const third = readdirSync(parent).find((name) => name.startsWith(`zero-sandbox-${process.pid}-`) && name !== first && name !== second) as string;
    const ahead = createPidsLimit(45, parent);
    assert.is(ahead?.dir, join(parent, third), 'the start takes the one made ahead for it');
    ahead?.closeFd();
    writeFileSync(join(parent, second, 'pids.current'), '0\n');
    assert.ok(pidsLimitKept(45, parent), 'the second kept one has emptied');
    const limit = createPidsLimit(45, parent);
    assert.is(limit?.dir, join(parent, second), 'the next start takes the emptied one, not a mkdir of its own');
    assert.is(readdirSync(parent).length, 3, 'no cgroup was made by a start');
    limit?.closeFd();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a kept cgroup once read empty, or made ahead, is taken without asking its pids.current again', async () => {
  const parent = parentDir();
  try {
    await pidsLimitMade(46, parent);
    const [made] = readdirSync(parent).filter((name) => name.startsWith(`zero-sandbox-${process.pid}-`)) as [string];
    // No pids.current at all: a cgroup made ahead has had no task in it, so none is read.
    assert.ok(pidsLimitKept(46, parent), 'the one made ahead is empty without a read');
    const run = createPidsLimit(46, parent);
    assert.is(run?.dir, join(parent, made));
    run?.closeFd();
    writeFileSync(join(parent, made, 'pids.current'), '0\n');
    run?.remove();
    assert.ok(pidsLimitKept(46, parent), 'kept after its run and read empty');
    // A kernel never shows an unused emptied cgroup with a task again: the answer read stands.
    writeFileSync(join(parent, made, 'pids.current'), '1\n');
    const next = createPidsLimit(46, parent);
    assert.is(next?.dir, join(parent, made), 'taken on the answer already read');
    next?.closeFd();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

/** Runs the cgroup worker and returns it with the names of the cgroups it took. */
async function cgroupWorker(parent: string, max: number, count: number, stay = false): Promise<{ worker: Worker; names: string[] }> {
  const worker = new Worker(new URL('../helpers/cgroup-worker.js', import.meta.url), { workerData: { parent, max, count, stay } });
  const names = await firstMessage<string[]>(worker);
  return { worker, names };
}

test('a worker thread names its cgroups after its thread: they never meet the main thread\'s', async () => {
  if (process.platform !== 'linux') return; // cgroups, and thread ids from /proc
  const parent = parentDir();
  try {
    const pending = cgroupWorker(parent, 51, 4);
    await Promise.all([pidsLimitMade(51, parent), pidsLimitMade(51, parent)]);
    const ours = [createPidsLimit(51, parent), createPidsLimit(51, parent)];
    const { worker, names } = await pending;
    await worker.terminate();
    assert.is(names.length, 4);
    for (const name of names) assert.match(name, new RegExp(`^zero-sandbox-${process.pid}-t\\d+\\.\\d+-\\d+$`));
    const mine = ours.map((limit) => basename(limit?.dir ?? ''));
    for (const name of mine) assert.match(name, new RegExp(`^zero-sandbox-${process.pid}-\\d+$`));
    assert.is(new Set([...names, ...mine]).size, 6, 'six distinct cgroups');
    for (const limit of ours) limit?.closeFd();
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a name another thread took already is passed over, and left alone', async () => {
  const parent = parentDir();
  try {
    const first = createPidsLimit(52, parent);
    first?.closeFd();
    const n = Number(/-(\d+)$/.exec(first?.dir ?? '')?.[1]);
    const prefix = (first?.dir ?? '').slice(0, -String(n).length);
    // The next three names of this thread, made by someone else (with a file: not empty).
    for (const next of [n + 1, n + 2, n + 3]) {
      mkdirSync(`${prefix}${next}`);
      writeFileSync(`${prefix}${next}/theirs`, '');
    }
    const second = createPidsLimit(52, parent);
    assert.is(second?.dir, `${prefix}${n + 4}`, 'the start passed over the three taken names');
    second?.closeFd();
    mkdirSync(`${prefix}${n + 5}`);
    await pidsLimitMade(53, parent);
    assert.ok(existsSync(`${prefix}${n + 6}/pids.max`), 'so did the making ahead');
    for (const next of [n + 1, n + 2, n + 3]) assert.ok(existsSync(`${prefix}${next}/theirs`), 'theirs untouched');
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test('the kept cgroups of a worker terminated with them are removed by the next thread to make one', async () => {
  // Real cgroups: a plain directory holding pids.max cannot be removed with rmdir as a cgroup can.
  // Linux only: a Windows node.exe under Wine reads the Linux host's /proc and cgroup files too.
  if (process.platform !== 'linux') return;
  const parent = pidsCgroupUsable() ? pidsCgroupParent() : undefined;
  if (parent === undefined) {
    // Only a root caller with a writable pids hierarchy makes cgroups at all.
    if (process.getuid?.() === 0 && process.env.ZERO_SANDBOX_MUST_WORK === '1') assert.unreachable('no writable pids hierarchy for root');
    return;
  }
  const dead = await cgroupWorker(parent, 54, 3, true);
  await dead.worker.terminate();
  for (const name of dead.names) assert.ok(existsSync(join(parent, name)), `${name} was left by the terminated worker`);
  const next = await cgroupWorker(parent, 54, 1);
  await next.worker.terminate();
  for (const name of dead.names) assert.not.ok(existsSync(join(parent, name)), `${name} removed`);
  // The second worker's own, unless its end removed them already.
  for (const name of next.names) {
    try {
      rmdirSync(join(parent, name));
    } catch {
      // gone already
    }
  }
});

test.after(removeTempDirs);

test.run();
