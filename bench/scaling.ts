// SPDX-License-Identifier: MIT
// How the cost of a run grows with the policy and the load, each figure against its baseline
// measured in the same run (samples alternated, so both see the same machine):
// - 100 and 1,000 write roots, denyRead and denyWrite entries: milliseconds added to a plain run;
// - 256 concurrent runs against 256 concurrent child_process.spawn, and what each burst does to
//   the caller's event loop (burst-watch.ts: delay, holds less the CPU wait, collections), 1,024
//   concurrent runs all succeeding, the same rows for them and the caller's memory growth;
// - a caller with a 2 GiB heap against a small one (two caller processes, rounds alternated);
// - a plain run in a workspace of 20,000 directories against one in an empty workspace;
// - the resource caps (the size-capped private /tmp and /dev/shm, the process cap) against the
//   same launch without them.
import { fork, spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { HostFacts } from '../lib/host-facts.js';
import { callNative, nativeBindingPath } from '../lib/native/load.js';
import { assertEnforceable, prepareLinux } from '../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf, type LinuxSpecContext, type StdioMode } from '../lib/backend/linux/spec.js';
import { createPidsLimit, pidNamespaceMax } from '../lib/sandbox/cgroup.js';
import { DEFAULT_PROCESSES } from '../lib/sandbox/default-limits.js';
import { guardProtectedPaths } from '../lib/sandbox/protected.js';
import { runSandboxed } from '../lib/sandbox/run.js';
import type { RunOptions } from '../lib/sandbox/options.js';
import type { BenchLine } from './sandbox.js';
import { watchBurst, type BurstWatch } from './burst-watch.js';
import { makeModules } from '../test/helpers/scan-trees.js';
import { median } from './median.js';

const x = (ratio: number) => `${ratio.toFixed(2)}x`;

/** Runs of each policy back to back in a block of the blocks rows. */
const BLOCK = 20;

export async function once(workspace: string, options: RunOptions): Promise<number> {
  const start = performance.now();
  const r = await runSandboxed(['/bin/true'], { workspace, prewarm: false, ...options });
  if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
  return performance.now() - start;
}

/**
 * Median time of a plain run and of one with `options`, in blocks of `block` runs of each back to
 * back, blocks alternated (run by run with the default block of one), until each has `runs`. A
 * caller repeating one policy is measured with blocks of 20 and `skip` 5: the first five of a
 * block, the switch from the other policy while its memos, mount template and prewarmed sandboxes
 * are made again, are not counted. `blocks`: each block pair's medians (with, base), in order.
 */
export async function added(workspace: string, options: RunOptions, runs: number, baseOptions: RunOptions = {}, block = 1, skip = 0): Promise<{ base: number; with: number; blocks: Array<{ base: number; with: number }> }> {
  const base: number[] = [];
  const with_: number[] = [];
  const blocks: Array<{ base: number; with: number }> = [];
  for (let done = 0; done < runs; done += block) {
    for (const [opts, into] of [[baseOptions, base], [options, with_]] as const) {
      for (let i = 0; i < block + skip; i++) {
        const ms = await once(workspace, opts);
        if (i >= skip) into.push(ms);
      }
    }
    blocks.push({ base: median(base.slice(-block)), with: median(with_.slice(-block)) });
  }
  return { base: median(base), with: median(with_), blocks };
}

export function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/true');
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

/** Per-run milliseconds of a caller with a small heap and one with a 2 GiB heap, rounds alternated. */
async function heapCost(workspace: string, rounds: number, perRound: number): Promise<{ small: number; big: number; heapBytes: number }> {
  const script = join(fileURLToPath(new URL('.', import.meta.url)), 'heap-child.js');
  type Reply = { ready?: true; times?: number[]; heapBytes?: number; error?: string };
  const start = (mode: string) => {
    const child = fork(script, [mode, workspace], { execArgv: ['--max-old-space-size=4096', '--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const replies: Reply[] = [];
    let wake: (() => void) | undefined;
    child.on('message', (m: Reply) => {
      replies.push(m);
      wake?.();
    });
    child.on('exit', () => wake?.());
    const next = async (): Promise<Reply> => {
      while (replies.length === 0) {
        if (child.exitCode !== null) throw new Error(`heap bench child (${mode}) exited`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
      const reply = replies.shift() as Reply;
      if (reply.error !== undefined) throw new Error(reply.error);
      return reply;
    };
    return { child, next };
  };
  const small = start('small');
  const big = start('big');
  try {
    await small.next();
    await big.next();
    const times = { small: [] as number[], big: [] as number[] };
    let heapBytes = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [name, caller] of [['small', small], ['big', big]] as const) {
        caller.child.send({ count: perRound });
        const reply = await caller.next();
        times[name].push(...(reply.times ?? []));
        if (name === 'big') heapBytes = reply.heapBytes ?? 0;
      }
    }
    return { small: median(times.small), big: median(times.big), heapBytes };
  } finally {
    small.child.kill();
    big.child.kill();
  }
}

/**
 * Milliseconds of one launch of a prepared plain run, through the addon, with the resource caps
 * (a pids cgroup or the PID namespace's pid_max for a root caller, RLIMIT_NPROC otherwise; the
 * size-capped private /tmp and /dev/shm) and without them, alternated.
 */
async function capsCost(workspace: string, runs: number): Promise<{ capped: number; uncapped: number }> {
  const prepared = prepareLinux(['/bin/true'], { workspace });
  try {
    const context = assertEnforceable(prepared.plan);
    const guarded = guardProtectedPaths(prepared.plan);
    guarded.release(); // only its plan is used: the sandboxes below run no command in the workspace
    const base: LinuxSpecContext = { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' };
    const stdio: [StdioMode, StdioMode, StdioMode] = ['ignore', 'ignore', 'ignore'];
    const launch = async (capped: boolean): Promise<number> => {
      const started = performance.now();
      const pids = capped && context.isRoot ? createPidsLimit(DEFAULT_PROCESSES, undefined, false) : undefined;
      const pidMax = capped && context.isRoot && pids === undefined ? pidNamespaceMax(DEFAULT_PROCESSES) : undefined;
      const spec = buildLinuxSpec(guarded.plan, stdio, { ...base, ...(pids === undefined ? {} : { cgroupProcsFd: pids.fd }), ...(pidMax === undefined ? {} : { pidMax }) }, hostViewOf(new HostFacts()));
      if (!capped) {
        spec.linux.mounts = spec.linux.mounts.map((op) => (op.kind === 'tmpfs' ? { kind: op.kind, path: op.path } : op));
        spec.linux.rlimits = spec.linux.rlimits.filter((r) => r.resource !== 6); // RLIMIT_NPROC
      }
      await new Promise<void>((resolve, reject) => {
        try {
          callNative((binding) => binding.spawn(spec, () => {
            pids?.remove();
            resolve();
          }));
        } catch (error) {
          pids?.remove();
          reject(error instanceof Error ? error : new Error(String(error)));
        } finally {
          pids?.closeFd();
        }
      });
      return performance.now() - started;
    };
    const capped: number[] = [];
    const uncapped: number[] = [];
    for (let i = 0; i < 3; i++) await launch(i % 2 === 0);
    for (let i = 0; i < runs; i++) {
      uncapped.push(await launch(false));
      capped.push(await launch(true));
    }
    return { capped: median(capped), uncapped: median(uncapped) };
  } finally {
    prepared.release();
  }
}

/**
 * 1,000 packages in `workspace`, each with a `dist` directory (an allowWrite entry) and a
 * `secret.env` file (a deny entry), once they are old enough for the repository scan's cache.
 */
export async function makePackages(workspace: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const pkg = join(workspace, 'packages', `p${i}`);
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'secret.env'), 'x');
    dirs.push(join(pkg, 'dist'));
    files.push(join(pkg, 'secret.env'));
  }
  // The repository scan's cache trusts a directory only once its mtime and ctime are more than
  // 2 s old (a change within the same clock tick could go unseen): a tree this young would be
  // walked afresh at every run (~100 ms here), not what a workspace in use costs. Wait that out
  // (no system call can set a ctime back).
  await new Promise((resolve) => setTimeout(resolve, 2500));
  return { dirs, files };
}

/** Runs the scaling bench; `onLine` sees each line as soon as it is measured (a long run under load). */
export async function benchScaling(runs = 9, rounds = 3, onLine: (line: BenchLine) => void = () => {}): Promise<BenchLine[]> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-scaling-')));
  const lines: BenchLine[] = [];
  const add = (line: BenchLine) => {
    lines.push(line);
    onLine(line);
  };
  add({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
  try {
    const { dirs, files } = await makePackages(workspace);
    for (let i = 0; i < 3; i++) await once(workspace, {});
    const row = (name: string, m: { base: number; with: number }, limit: number) => {
      const value = m.with - m.base;
      add({ name, value, unit: `ms added per run (${x(m.with / m.base)} a plain run of ${m.base.toFixed(1)} ms)`, target: `<= ${limit}`, ok: value <= limit });
    };
    for (const n of [100, 1000]) {
      const limit = n === 100 ? 1 : 5;
      row(`${n} allowWrite dirs vs none`, await added(workspace, { allowWrite: dirs.slice(0, n) }, runs), limit);
      row(`${n} denyRead files vs none`, await added(workspace, { denyRead: files.slice(0, n) }, runs), limit);
      row(`${n} denyWrite files vs none`, await added(workspace, { denyWrite: files.slice(0, n) }, runs), limit);
      // n write roots plus n deny entries of either kind (the size of policy the targets are set
      // for), then n of all three kinds (half as many entries again).
      row(`${n} allowWrite + ${n} denyRead vs none`, await added(workspace, { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n) }, runs), limit);
      row(`${n} allowWrite + ${n} denyWrite vs none`, await added(workspace, { allowWrite: dirs.slice(0, n), denyWrite: files.slice(0, n) }, runs), limit);
      row(`${n} allowWrite + ${n} denyRead + ${n} denyWrite vs none`, await added(workspace, { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n), denyWrite: files.slice(0, n) }, runs), limit);
    }
    // The rows above start every sandbox cold (prewarm off): the whole cost of a policy. A caller
    // with the default options gets prewarmed sandboxes for repeated policies (both alternated
    // policies stay in the pool): the same comparison as it sees it.
    for (const n of [100, 1000]) {
      const policy = { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n), denyWrite: files.slice(0, n), prewarm: true };
      row(`${n} allowWrite + ${n} denyRead + ${n} denyWrite vs none, default options (prewarm on for both)`, await added(workspace, policy, runs, { prewarm: true }), n === 100 ? 1 : 5);
    }
    // Alternated run by run, each policy's prewarm refills compete with the other's runs (the plain
    // run's own time grows with the big policy's refills). A caller repeating one policy back to
    // back: three blocks of each, alternated (one block's median moves with whatever else the
    // machine did during its 20 runs), each block's figure shown.
    for (const n of [100, 1000]) {
      const policy = { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n), denyWrite: files.slice(0, n), prewarm: true };
      const m = await added(workspace, policy, 3 * BLOCK, { prewarm: true }, BLOCK, 5);
      const each = m.blocks.map((b) => `${b.with - b.base >= 0 ? '+' : ''}${(b.with - b.base).toFixed(1)}`).join(' ');
      row(`${n} allowWrite + ${n} denyRead + ${n} denyWrite vs none, default options, each back to back in three blocks of ${BLOCK} (blocks: ${each})`, m, n === 100 ? 1 : 5);
    }

    await benchBursts(workspace, rounds, add);

    const heap = await heapCost(workspace, rounds, runs);
    add({ name: `run with a ${(heap.heapBytes / 2 ** 30).toFixed(1)} GiB caller heap / small heap (${heap.big.toFixed(1)} / ${heap.small.toFixed(1)} ms)`, value: heap.big / heap.small, unit: 'x', target: '<= 1.05', ok: heap.big / heap.small <= 1.05 });

    const size = await workspaceSizeCost(runs * 2);
    add({ name: `a run in a workspace of 20,000 directories / an empty one (${size.big.toFixed(1)} / ${size.empty.toFixed(1)} ms)`, value: size.big / size.empty, unit: 'x' });

    const caps = await capsCost(workspace, runs);
    add({ name: `launch with resource caps / without (${caps.capped.toFixed(1)} / ${caps.uncapped.toFixed(1)} ms)`, value: caps.capped / caps.uncapped, unit: 'x' });
    add({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
    return lines;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * A plain run in a workspace of 20,000 directories against one in an empty workspace (alternated,
 * prewarm off, after warm-up runs of each): the repository scans before and after each run walk
 * every directory of the workspace that may have changed.
 */
async function workspaceSizeCost(runs: number): Promise<{ big: number; empty: number }> {
  const big = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-modules-')));
  const empty = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-empty-')));
  try {
    // 20,000 directories: packages of 21 (the package, d0-d9 and a lib in each).
    makeModules(big, Math.ceil(20_000 / 21));
    // See makePackages: the scan trusts a directory once it is over 2 s old.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (let i = 0; i < 3; i++) {
      await once(empty, {});
      await once(big, {});
    }
    const times = { big: [] as number[], empty: [] as number[] };
    for (let i = 0; i < runs; i++) {
      times.empty.push(await once(empty, {}));
      times.big.push(await once(big, {}));
    }
    return { big: median(times.big), empty: median(times.empty) };
  } finally {
    rmSync(big, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
}

const ms = (values: number[]) => values.map((v) => v.toFixed(1)).join(' ');

/**
 * The burst rows: 256 concurrent runs against 256 concurrent child_process.spawn of the same
 * command, alternated round by round, then 1,024 concurrent runs. Each row of what a burst does to
 * the caller's event loop (burst-watch.ts) has the spawn burst's figure beside it: spawn makes the
 * child on the caller's thread, so its burst holds the loop for all of its forks.
 */
export async function benchBursts(workspace: string, rounds: number, add: (line: BenchLine) => void): Promise<void> {
  const runs: Array<BurstWatch<unknown>> = [];
  const spawns: Array<BurstWatch<unknown>> = [];
  for (let round = 0; round < rounds; round++) {
    spawns.push(await watchBurst(spawnTrue, 256));
    runs.push(await watchBurst(() => runSandboxed(['/bin/true'], { workspace }), 256));
  }
  const worst = (list: Array<BurstWatch<unknown>>, pick: (w: BurstWatch<unknown>) => number) => Math.max(...list.map(pick));
  const ratios = runs.map((run, i) => run.ms / (spawns[i] as BurstWatch<unknown>).ms);
  const ratio = median(ratios);
  add({ name: `256 concurrent runSandboxed / 256 spawn, wall (rounds: ${ratios.map(x).join(' ')})`, value: ratio, unit: 'x', target: '<= 1.5', ok: ratio <= 1.5 });
  const ok = runs.reduce((n, run) => n + (run.results as Array<{ exitCode: number | null }>).filter((r) => r.exitCode === 0).length, 0);
  add({ name: `256 concurrent runSandboxed: succeeded (${rounds} rounds)`, value: ok, unit: `of ${256 * rounds}`, target: 'all', ok: ok === 256 * rounds });
  const loopRows = (label: string, list: Array<BurstWatch<unknown>>, baseline: Array<BurstWatch<unknown>> | undefined) => {
    const beside = (pick: (w: BurstWatch<unknown>) => number) => (baseline === undefined ? '' : ` (spawn burst: ${worst(baseline, pick).toFixed(1)} ms)`);
    const delay = worst(list, (w) => w.maxDelay);
    add({ name: `${label}: caller event-loop delay, max (rounds: ${ms(list.map((w) => w.maxDelay))})${beside((w) => w.maxDelay)}`, value: delay, unit: 'ms', target: '<= 10', ok: delay <= 10 });
    const bystander = worst(list, (w) => w.bystanderDelay);
    add({ name: `${label}:   an idle bystander process's event-loop delay over the same burst, max (rounds: ${ms(list.map((w) => w.bystanderDelay))})${beside((w) => w.bystanderDelay)}`, value: bystander, unit: 'ms' });
    const hold = worst(list, (w) => w.maxHold);
    add({ name: `${label}: caller thread held less its CPU wait, max (rounds: ${ms(list.map((w) => w.maxHold))})${beside((w) => w.maxHold)}`, value: hold, unit: 'ms', target: '<= 10', ok: hold <= 10 });
    add({ name: `${label}:   of those holds, the longest no collection overlapped${beside((w) => w.maxHoldNoGc)}`, value: worst(list, (w) => w.maxHoldNoGc), unit: 'ms' });
    add({ name: `${label}:   the caller thread's longest time on a CPU between two turns${beside((w) => w.maxCpu)}`, value: worst(list, (w) => w.maxCpu), unit: 'ms' });
    add({ name: `${label}:   longest scavenge pause, wall (rounds: ${ms(list.map((w) => w.gc.scavenge))}; ${list.map((w) => w.gc.scavenges).join(' ')} scavenges)${beside((w) => w.gc.scavenge)}`, value: worst(list, (w) => w.gc.scavenge), unit: 'ms' });
    add({ name: `${label}:   longest mark-compact pause, wall (rounds: ${ms(list.map((w) => w.gc.markCompact))}; ${list.map((w) => w.gc.markCompacts).join(' ')} full collections)${beside((w) => w.gc.markCompact)}`, value: worst(list, (w) => w.gc.markCompact), unit: 'ms' });
    add({ name: `${label}:   turns held over 10 ms less the CPU wait (rounds: ${list.map((w) => w.longHolds).join(' ')})`, value: worst(list, (w) => w.longHolds), unit: 'turns, max' });
    add({ name: `${label}:   caller thread CPU, median (rounds: ${list.map((w) => w.cpu.toFixed(0)).join(' ')})${baseline === undefined ? '' : ` (spawn burst: ${median(baseline.map((w) => w.cpu)).toFixed(0)} ms)`}`, value: median(list.map((w) => w.cpu)), unit: 'ms' });
  };
  loopRows('256 burst', runs, spawns);

  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
  const many = await watchBurst(() => runSandboxed(['/bin/true'], { workspace }).then((r) => r.exitCode === 0, () => false), 1024);
  clearInterval(sampler);
  const okMany = many.results.filter(Boolean).length;
  add({ name: '1024 concurrent runSandboxed: succeeded', value: okMany, unit: 'of 1024', target: '1024', ok: okMany === 1024 });
  add({ name: '1024 concurrent runSandboxed: caller RSS growth, peak', value: (rssPeak - rssBefore) / 1024 / 1024, unit: 'MiB' });
  loopRows('1024 burst', [many], undefined);

  // Callers under a low limit: 1,024 runs that outlive their start, against 1,024 spawns of the
  // same in the same kind of caller. A hard descriptor limit of 1,024 (so Node cannot raise it);
  // a process limit of 300 for an unprivileged user (root's is not enforced: as root, the caller
  // runs as uid 65534), with commands long enough that the runs started outgrow it (about 140
  // runs of `sleep` fit it at once, two processes each).
  const failures = (r: LimitedBurst) => (Object.keys(r.failures).length === 0 ? 'none failed' : Object.entries(r.failures).map(([code, n]) => `${n} ${code}`).join(', '));
  const limits = [
    { flag: '-n', value: NOFILE_LIMIT, name: 'RLIMIT_NOFILE', seconds: 0.5 },
    { flag: '-u', value: NPROC_LIMIT, name: 'RLIMIT_NPROC', seconds: 3 },
  ];
  for (const limit of limits) {
    const sandboxed = await limitedBurst('sandbox', 1024, limit.seconds, limit.flag, limit.value);
    const spawned = await limitedBurst('spawn', 1024, limit.seconds, limit.flag, limit.value);
    const who = limit.flag === '-u' && process.getuid?.() === 0 ? ', uid 65534' : '';
    add({ name: `1024 concurrent runSandboxed of sleep ${limit.seconds} under ${limit.name} ${limit.value}${who}: succeeded (${(sandboxed.ms / 1000).toFixed(1)} s; ${failures(sandboxed)})`, value: sandboxed.ok, unit: 'of 1024', target: '1024', ok: sandboxed.ok === 1024 });
    add({ name: `  1024 concurrent spawn of sleep ${limit.seconds} in the same kind of caller: succeeded (${(spawned.ms / 1000).toFixed(1)} s; ${failures(spawned)})`, value: spawned.ok, unit: 'of 1024' });
  }
}

/** The descriptor limit of the limited caller: the kernel's default, and many containers' hard limit. */
const NOFILE_LIMIT = 1024;
/** The process limit of the other. */
const NPROC_LIMIT = 300;
const NOBODY = 65534;

interface LimitedBurst {
  ok: number;
  ms: number;
  failures: Record<string, number>;
}

/**
 * Runs bench/limited-child.js under `ulimit FLAG value` in a workspace and home of its own (owned
 * by uid 65534 when root starts it that way, for a process limit) and returns what it printed.
 */
function limitedBurst(mode: string, count: number, seconds: number, flag: string, value: number): Promise<LimitedBurst> {
  const script = join(fileURLToPath(new URL('.', import.meta.url)), 'limited-child.js');
  const base = mkdtempSync(join(tmpdir(), 'zs-bench-limited-'));
  const workspace = join(base, 'ws');
  const home = join(base, 'home');
  mkdirSync(workspace);
  mkdirSync(home);
  const asNobody = flag === '-u' && process.getuid?.() === 0;
  if (asNobody) for (const dir of [base, workspace, home]) chownSync(dir, NOBODY, NOBODY);
  const args = ['/bin/bash', '-c', `ulimit ${flag} ${value} && exec "$0" "$@"`, process.execPath, script, mode, realpathSync(workspace), String(count), String(seconds)];
  const env = { ...process.env, HOME: home };
  return new Promise<LimitedBurst>((resolve, reject) => {
    const child = asNobody ? spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...args], { env, cwd: workspace }) : spawn(args[0] as string, args.slice(1), { env, cwd: workspace });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out) as LimitedBurst);
      } catch {
        reject(new Error(`the limited caller (${mode}, ulimit ${flag} ${value}) exited ${String(code)}: ${err}`));
      }
    });
  }).finally(() => rmSync(base, { recursive: true, force: true }));
}

/** The burst rows alone (`node dist/bench/main.js bursts`), in a workspace of their own. */
export async function benchBurstsAlone(rounds = 3, onLine: (line: BenchLine) => void = () => {}): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-bursts-')));
  try {
    onLine({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
    // See benchScaling: the repository scan trusts a directory once it is over 2 s old.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (let i = 0; i < 3; i++) await once(workspace, {});
    await benchBursts(workspace, rounds, onLine);
    onLine({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
