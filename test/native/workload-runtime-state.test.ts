// SPDX-License-Identifier: MIT
// The managed runtime state on the host side: layout and key, 0700 dirs, environment, the
// cross-process lease (a second real process), cleanup by age and count, and the mutex.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import {
  acquireRuntimeState,
  buildRuntimeEnv,
  buildRuntimeLayout,
  buildUserCacheDir,
  cleanupRuntimeRoots,
  RUNTIME_CACHE_DIRS,
  RUNTIME_DATA_DIRS,
} from '../../lib/sandbox/runtime-state.js';
import { buildOwnerName, leaseDirOf, liveLeases, ownerAlive, parseOwnerName, processStart, threadStart, withMutex, writeLease } from '../../lib/sandbox/runtime-lease.js';
import { withScratch } from '../fixtures/workload/host.js';
import { TREE_BASE } from '../helpers/sandbox.js';
import { firstMessage } from '../helpers/workers.js';

const DAY = 24 * 60 * 60 * 1000;


function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

test('the user cache dir on Linux is $XDG_CACHE_HOME when absolute, else ~/.cache', () => {
  if (process.platform === 'linux') {
    assert.is(buildUserCacheDir({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' }), '/x/cache');
    assert.is(buildUserCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/u' }), '/home/u/.cache');
    assert.is(buildUserCacheDir({ HOME: '/home/u' }), '/home/u/.cache');
  }
});

test('the root is <cache>/zero/runtime/v1/<first 8 bytes of sha256(workspace)>', () => {
  const layout = buildRuntimeLayout('/work/project', '/home/u/.cache', '/tmp');
  const key = createHash('sha256').update('/work/project').digest('hex').slice(0, 16);
  assert.is(layout.key, key);
  assert.is(layout.base, '/home/u/.cache/zero/runtime/v1');
  assert.is(layout.root, `/home/u/.cache/zero/runtime/v1/${key}`);
  assert.is(layout.cacheDir, `${layout.root}/cache`);
  assert.is(layout.dataDir, `${layout.root}/data`);
  assert.is.not(buildRuntimeLayout('/work/other', '/home/u/.cache', '/tmp').key, key);
});

test('a workspace that holds the user cache dir gets its state in a per-user temp dir instead', () => {
  const layout = buildRuntimeLayout('/home/u', '/home/u/.cache', '/var/tmp');
  assert.match(layout.base, /^\/var\/tmp\/zero-runtime-\d+\/v1$/);
  assert.not.ok(layout.root.startsWith('/home/u/'), layout.root);
});

test('the environment points every tool at the managed dirs and leaves HOME and XDG config alone', () => {
  const layout = buildRuntimeLayout('/w', '/c', '/tmp');
  const env = buildRuntimeEnv(layout, { HOME: '/home/u', GOFLAGS: '-mod=mod' }, '/home/u/go/pkg/mod/cache/download');
  const r = layout.root;
  assert.equal(
    { ...env },
    {
      XDG_CACHE_HOME: `${r}/cache`,
      npm_config_cache: `${r}/cache/npm`,
      NPM_CONFIG_CACHE: `${r}/cache/npm`,
      YARN_CACHE_FOLDER: `${r}/cache/yarn`,
      YARN_GLOBAL_FOLDER: `${r}/data/yarn`,
      COREPACK_HOME: `${r}/cache/corepack`,
      PIP_CACHE_DIR: `${r}/cache/pip`,
      GOCACHE: `${r}/cache/go-build`,
      GOMODCACHE: `${r}/data/go-mod`,
      CARGO_HOME: `${r}/data/cargo`,
      GOPROXY: 'file:///home/u/go/pkg/mod/cache/download,https://proxy.golang.org,direct',
      GOFLAGS: '-mod=mod -modcacherw',
    },
  );
  for (const name of ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'TMPDIR']) assert.not.ok(name in env, name);
  const noGo = buildRuntimeEnv(layout, { GOFLAGS: '-modcacherw' });
  assert.not.ok('GOPROXY' in noGo, 'no host module cache: the user GOPROXY stays as it is');
  assert.is(noGo.GOFLAGS, '-modcacherw');
});

test('acquire creates the whole tree 0700, resolves the write roots, and the lease comes and goes', () =>
  withScratch(TREE_BASE, (dir) => {
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    const state = acquireRuntimeState(ws, { env: { HOME: join(dir, 'home') }, userCacheDir: join(dir, 'cache') });
    assert.ok(state);
    assert.ok(state.created);
    const { layout } = state;
    for (const dir of [layout.base, layout.root, layout.cacheDir, layout.dataDir]) assert.is(mode(dir), '700', dir);
    for (const name of RUNTIME_CACHE_DIRS) assert.is(mode(join(layout.cacheDir, name)), '700', name);
    for (const name of RUNTIME_DATA_DIRS) assert.is(mode(join(layout.dataDir, name)), '700', name);
    assert.equal(state.writeRoots, [layout.cacheDir, layout.dataDir]);
    assert.not.ok(state.writeRoots.includes(layout.root), 'the root itself (leases, staging) is not writable');
    const lease = buildOwnerName({ pid: process.pid, start: processStart(process.pid) ?? '' });
    assert.equal(readdirSync(leaseDirOf(layout.root)), [lease]);
    assert.is(readlinkSync(join(leaseDirOf(layout.root), lease)), ws, 'the lease names its workspace');
    // A second command in the same workspace shares the lease; it ends only with the last one.
    const second = acquireRuntimeState(ws, { env: { HOME: join(dir, 'home') }, userCacheDir: join(dir, 'cache') });
    assert.ok(second);
    assert.not.ok(second.created);
    state.release();
    state.release(); // idempotent
    assert.is(liveLeases(layout.root).length, 1);
    second.release();
    assert.is(liveLeases(layout.root).length, 0);
    assert.ok(existsSync(join(layout.base, '.last-cleanup')), 'release ran the (throttled) cleanup');
    assert.not.ok(existsSync(join(layout.base, '.mutex')));
  }));

test('the temp fallback is used when the workspace holds the user cache dir, and must be a private dir of ours', () =>
  withScratch(TREE_BASE, (dir) => {
    const ws = join(dir, 'home');
    const tmpBase = join(dir, 'tmp');
    mkdirSync(ws);
    mkdirSync(tmpBase);
    const state = acquireRuntimeState(ws, { userCacheDir: join(ws, '.cache'), tmpBase });
    assert.ok(state);
    assert.ok(state.layout.root.startsWith(`${tmpBase}/zero-runtime-`), state.layout.root);
    assert.not.ok(existsSync(join(ws, '.cache')), 'nothing inside the workspace');
    const shared = join(state.layout.base, '..');
    assert.is(mode(shared), '700');
    state.release();
    // Someone else's (here: group/world-writable) dir is refused, naming it.
    rmSync(shared, { recursive: true });
    mkdirSync(shared);
    execFileSync('chmod', ['777', shared]);
    let error: (Error & { code?: string }) | undefined;
    try {
      acquireRuntimeState(ws, { userCacheDir: join(ws, '.cache'), tmpBase });
    } catch (e) {
      error = e as Error & { code?: string };
    }
    assert.is(error?.code, 'spawn_failed');
    assert.match(error?.message ?? '', new RegExp(`refusing the managed runtime dir ${shared}`));
  }));

test('acquire returns undefined for a workspace that does not exist (the plan resolver reports it)', () =>
  withScratch(TREE_BASE, (dir) => {
    assert.is(acquireRuntimeState(join(dir, 'missing'), { userCacheDir: join(dir, 'cache') }), undefined);
    assert.not.ok(existsSync(join(dir, 'cache')));
  }));

test('an unusable user cache dir is a clear spawn_failed error naming the path', () =>
  withScratch(TREE_BASE, (dir) => {
    writeFileSync(join(dir, 'file'), '');
    mkdirSync(join(dir, 'ws'));
    let error: (Error & { code?: string; path?: string }) | undefined;
    try {
      acquireRuntimeState(join(dir, 'ws'), { userCacheDir: join(dir, 'file') });
    } catch (e) {
      error = e as Error & { code?: string };
    }
    assert.ok(error);
    assert.is(error.code, 'spawn_failed');
    assert.match(error.message, /managed runtime (state at|lock) .*\/file\/zero\/runtime\/v1\//);
  }));

test('owner names round-trip and a reused pid with another start time is dead', () => {
  assert.equal(parseOwnerName('123-456'), { pid: 123, start: '456' });
  assert.is(parseOwnerName('../x'), undefined);
  const me = { pid: process.pid, start: processStart(process.pid) ?? '' };
  assert.ok(ownerAlive(me));
  assert.not.ok(ownerAlive({ pid: process.pid, start: `${me.start}9` }));
  assert.not.ok(ownerAlive({ pid: 1, start: '1' }, () => undefined));
  // A worker thread's name: the process, then the thread and its start time.
  const thread = { pid: 123, start: '456', tid: 130, tidStart: '470' };
  assert.is(buildOwnerName(thread), '123-456-130-470');
  assert.equal(parseOwnerName('123-456-130-470'), thread);
  assert.is(parseOwnerName('123-456-130'), undefined);
  const proc = () => '456';
  assert.ok(ownerAlive(thread, proc, () => '470'));
  assert.not.ok(ownerAlive(thread, proc, () => undefined), 'the thread is gone');
  assert.not.ok(ownerAlive(thread, proc, () => '471'), 'another thread with its id');
  assert.not.ok(ownerAlive(thread, () => undefined, () => '470'), 'the process is gone');
  // The main thread is a thread of its own process, with a start time (Linux: /proc).
  if (process.platform === 'linux') assert.ok(threadStart(process.pid, process.pid) !== undefined);
});

function makeRoot(base: string, name: string, ageDays: number, now: number): string {
  const path = join(base, name);
  mkdirSync(join(path, 'cache', 'npm'), { recursive: true });
  writeFileSync(join(path, 'cache', 'npm', 'x'), 'x');
  const t = new Date(now - ageDays * DAY);
  utimesSync(path, t, t);
  return path;
}

test('cleanup removes unleased roots older than 30 days and beyond the newest 64, never leased ones', async () =>
  withScratch(TREE_BASE, (dir) => {
    const now = Date.now();
    const base = dir;
    const old = makeRoot(base, 'a'.repeat(16), 31, now);
    const oldLeased = makeRoot(base, 'b'.repeat(16), 40, now);
    const fresh = makeRoot(base, 'c'.repeat(16), 1, now);
    mkdirSync(leaseDirOf(oldLeased));
    writeFileSync(join(leaseDirOf(oldLeased), '4242-77'), '');
    mkdirSync(leaseDirOf(old));
    writeFileSync(join(leaseDirOf(old), '4343-88'), ''); // a dead holder
    mkdirSync(join(base, 'not-a-root'));
    const startOf = (pid: number) => (pid === 4242 ? '77' : undefined);
    const trash = cleanupRuntimeRoots(base, { now, startOf });
    assert.is(trash.length, 1);
    assert.not.ok(existsSync(old));
    assert.not.ok(existsSync(leaseDirOf(old)));
    assert.ok(existsSync(oldLeased), 'a live lease protects even an old root');
    assert.ok(existsSync(fresh));
    assert.ok(existsSync(join(base, 'not-a-root')), 'only names this module creates are touched');
    assert.ok(existsSync(join(trash[0] as string, 'cache', 'npm', 'x')), 'moved aside, deleted outside the mutex');
    // The count limit: keep the two most recently used.
    for (let i = 0; i < 4; i++) makeRoot(base, `${i}`.repeat(16), 2 + i, now);
    const more = cleanupRuntimeRoots(base, { now, startOf, maxRoots: 2 });
    const left = readdirSync(base).filter((n) => /^[0-9a-f]{16}$/.test(n)).sort();
    assert.equal(left, ['0'.repeat(16), 'b'.repeat(16), 'c'.repeat(16)].sort(), 'the newest two plus the leased one');
    assert.ok(more.includes(trash[0] as string), 'earlier trash is handed back for deletion too');
  }));

test('releasing a lease that created a root cleans up at once; other releases at most hourly', () =>
  withScratch(TREE_BASE, async (dir) => {
    const userCacheDir = join(dir, 'cache');
    for (const ws of ['a', 'b']) mkdirSync(join(dir, ws));
    const a = acquireRuntimeState(join(dir, 'a'), { userCacheDir });
    assert.ok(a);
    a.release();
    const now = Date.now();
    const stale1 = makeRoot(a.layout.base, 'e'.repeat(16), 40, now);
    const again = acquireRuntimeState(join(dir, 'a'), { userCacheDir });
    again?.release();
    assert.ok(existsSync(stale1), 'an existing root: the hourly throttle holds');
    const b = acquireRuntimeState(join(dir, 'b'), { userCacheDir });
    assert.ok(b?.created);
    b.release();
    assert.not.ok(existsSync(stale1), 'a new root: cleanup ran');
    assert.ok(existsSync(a.layout.root) && existsSync(b.layout.root));
    // Its trash is removed off the caller's thread, after the release returned.
    const trash = () => readdirSync(a.layout.base).filter((n) => n.startsWith('.trash-'));
    assert.equal(trash().length, 1, 'moved aside at once');
    const end = Date.now() + 10_000;
    while (trash().length > 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(trash(), [], 'and removed');
  }));

const here = fileURLToPath(new URL('.', import.meta.url));

test('a lease held by another live process protects its root; it lapses when that process dies', () =>
  withScratch(TREE_BASE, async (dir) => {
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    const cache = join(dir, 'cache');
    const module = join(here, '..', '..', 'lib', 'sandbox', 'runtime-state.js');
    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      const { acquireRuntimeState } = await import(${JSON.stringify(module)});
      const state = acquireRuntimeState(${JSON.stringify(ws)}, { userCacheDir: ${JSON.stringify(cache)} });
      process.stdout.write(state.layout.root + '\\n');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    const root = await new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => resolve(b.toString().trim())));
    const base = join(root, '..');
    const future = Date.now() + 365 * DAY;
    assert.equal(cleanupRuntimeRoots(base, { now: future }), [], 'held by the child');
    assert.ok(existsSync(root));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const trash = cleanupRuntimeRoots(base, { now: future });
    assert.is(trash.length, 1);
    assert.not.ok(existsSync(root));
  }));

test('the mutex serialises holders and a mutex left by a dead process is broken', () =>
  withScratch(TREE_BASE, (dir) => {
    // Held by us: a nested attempt times out with an error naming the file.
    let inner: Error | undefined;
    withMutex(dir, () => {
      try {
        withMutex(dir, () => 0, 50);
      } catch (e) {
        inner = e as Error;
      }
    });
    assert.ok(inner);
    assert.match(inner.message, new RegExp(`${dir}/\\.mutex is held by another live process`));
    // Left behind by a process that is gone.
    const dead = execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }).trim();
    symlinkSync(`${dead}-1`, join(dir, '.mutex'));
    assert.is(withMutex(dir, () => 'taken', 2000), 'taken');
    assert.not.ok(existsSync(join(dir, '.mutex')));
  }));

test('a worker terminated while holding the mutex and a lease leaves neither held by its still-running process', async () => {
  // Off Linux a worker holds in its process's name (no per-thread /proc): see the README.
  if (process.platform !== 'linux') return;
  const dir = mkdtempSync(join(TREE_BASE, 'zs-mutex-worker-'));
  const root = join(dir, 'root');
  mkdirSync(root);
  writeLease(root, 'main');
  const worker = new Worker(new URL('../helpers/mutex-worker.js', import.meta.url), { workerData: { dir, root } });
  try {
    const name = await firstMessage<string>(worker);
    const owner = parseOwnerName(name);
    // The worker's names carry its own thread: this process and another kernel thread of it.
    assert.ok(owner?.tid !== undefined, name);
    assert.is(owner.pid, process.pid);
    assert.is.not(owner.tid, process.pid);
    assert.ok(ownerAlive(owner), 'alive while the worker spins');
    assert.is(liveLeases(root).length, 2, "the main thread's lease and the worker's");
    // Termination skips the finally that would release the mutex.
    await worker.terminate();
    assert.is(readlinkSync(join(dir, '.mutex')), name, 'the mutex was left behind');
    assert.not.ok(ownerAlive(owner), 'the thread is gone');
    assert.is(withMutex(dir, () => 'taken', 2000), 'taken');
    assert.equal(liveLeases(root), [{ pid: process.pid, start: processStart(process.pid) ?? '' }], "only the main thread's lease is live");
  } finally {
    await worker.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with lingerMs the lease outlives the last release briefly, and a burst reuses it without preparing again', async () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'zs-linger-cache-'));
  const ws = mkdtempSync(join(TREE_BASE, 'zs-linger-ws-'));
  try {
    const first = acquireRuntimeState(ws, { userCacheDir: cacheDir, lingerMs: 150 })!;
    first.release();
    assert.is(liveLeases(first.layout.root).length, 1, 'the lease lingers');
    const second = acquireRuntimeState(ws, { userCacheDir: cacheDir, lingerMs: 150 })!;
    assert.not.ok(second.created);
    assert.equal(second.writeRoots, first.writeRoots);
    second.release();
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.is(liveLeases(first.layout.root).length, 0, 'and lapses once the burst is over');
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test('a brand-new user cache dir under the temp dir gets its zero/runtime parents created (not the fallback check)', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'zs-fresh-cache-'));
  const ws = mkdtempSync(join(TREE_BASE, 'zs-fresh-ws-'));
  try {
    const state = acquireRuntimeState(ws, { userCacheDir: cacheDir });
    assert.ok(state !== undefined);
    assert.not.ok(state!.layout.fallback);
    assert.ok(statSync(state!.layout.cacheDir).isDirectory());
    assert.ok(state!.layout.root.startsWith(join(cacheDir, 'zero', 'runtime')));
    state!.release();
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test.run();
