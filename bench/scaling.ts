// SPDX-License-Identifier: MIT
// How the cost of a run grows with the policy and the load, each against its baseline measured in
// the same run: 100 and 1,000 write roots, denyRead and denyWrite entries (milliseconds added to
// a run with none, samples alternated so both see the same machine); 256 concurrent runs against
// 256 concurrent spawns, with the caller's event-loop delay during the burst; 1,024 concurrent
// runs all succeeding. The caller-heap case is not measured here (it needs a multi-GB process).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runSandboxed } from '../lib/sandbox/run.js';
import type { RunOptions } from '../lib/sandbox/options.js';
import type { BenchLine } from './sandbox.js';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function once(workspace: string, options: RunOptions): Promise<number> {
  const start = performance.now();
  const r = await runSandboxed(['/bin/true'], { workspace, prewarm: false, ...options });
  if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
  return performance.now() - start;
}

/** Median time added by `options` to a plain run, baseline and case alternated run by run. */
async function added(workspace: string, options: RunOptions, runs: number): Promise<number> {
  const base: number[] = [];
  const with_: number[] = [];
  for (let i = 0; i < runs; i++) {
    base.push(await once(workspace, {}));
    with_.push(await once(workspace, options));
  }
  return median(with_) - median(base);
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/true');
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

export async function benchScaling(runs = 9): Promise<BenchLine[]> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-scaling-')));
  try {
    const dirs: string[] = [];
    const files: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const pkg = join(workspace, 'packages', `p${i}`);
      mkdirSync(join(pkg, 'dist'), { recursive: true });
      writeFileSync(join(pkg, 'secret.env'), 'x');
      dirs.push(join(pkg, 'dist'));
      files.push(join(pkg, 'secret.env'));
    }
    for (let i = 0; i < 3; i++) await once(workspace, {});
    const lines: BenchLine[] = [];
    const row = (name: string, value: number, limit: number) => lines.push({ name, value, unit: 'ms added per run', target: `<= ${limit}`, ok: value <= limit });
    for (const n of [100, 1000]) {
      const limit = n === 100 ? 1 : 5;
      row(`${n} allowWrite dirs vs none`, await added(workspace, { allowWrite: dirs.slice(0, n) }, runs), limit);
      row(`${n} denyRead files vs none`, await added(workspace, { denyRead: files.slice(0, n) }, runs), limit);
      row(`${n} denyWrite files vs none`, await added(workspace, { denyWrite: files.slice(0, n) }, runs), limit);
      row(`${n} allowWrite + ${n} denyRead + ${n} denyWrite vs none`, await added(workspace, { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n), denyWrite: files.slice(0, n) }, runs), limit);
    }

    const started = performance.now();
    await Promise.all(Array.from({ length: 256 }, spawnTrue));
    const spawned = performance.now() - started;
    // The caller's event loop during the burst: the longest gap between ticks of a 1 ms interval,
    // minus the interval itself.
    let last = performance.now();
    let maxGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last - 1);
      last = now;
    }, 1);
    const burst = performance.now();
    const results = await Promise.all(Array.from({ length: 256 }, () => runSandboxed(['/bin/true'], { workspace })));
    const sandboxed = performance.now() - burst;
    clearInterval(ticker);
    lines.push({ name: '256 concurrent spawn(/bin/true): wall time', value: spawned, unit: 'ms' });
    lines.push({ name: '256 concurrent runSandboxed: wall time', value: sandboxed, unit: 'ms' });
    lines.push({ name: 'ratio 256 concurrent sandboxed / spawned', value: sandboxed / spawned, unit: 'x', target: '<= 1.5', ok: sandboxed / spawned <= 1.5 });
    const ok = results.filter((r) => r.exitCode === 0).length;
    lines.push({ name: '256 concurrent runSandboxed: succeeded', value: ok, unit: 'of 256', target: '256', ok: ok === 256 });
    const maxDelay = maxGap;
    lines.push({ name: 'caller event-loop delay during the burst, max', value: maxDelay, unit: 'ms', target: '<= 10', ok: maxDelay <= 10 });
    const many = await Promise.all(Array.from({ length: 1024 }, () => runSandboxed(['/bin/true'], { workspace }).then((r) => r.exitCode === 0, () => false)));
    const okMany = many.filter(Boolean).length;
    lines.push({ name: '1024 concurrent runSandboxed: succeeded', value: okMany, unit: 'of 1024', target: '1024', ok: okMany === 1024 });
    return lines;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
