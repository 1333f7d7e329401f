// SPDX-License-Identifier: MIT
// What the caller's environment costs a run: runSandboxed(['/bin/true']) and
// child_process.spawn('/bin/true') from this process with 1,000 and 3,000 more environment
// variables than it started with, against the same with none added. Blocks of each size
// alternated, runs and spawns alternated within a block, the first runs of a block (the switch:
// memos and prewarmed sandboxes made again for the new environment) not counted. Default options,
// as a Node caller has them.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { runSandboxed } from '../lib/sandbox/run.js';
import type { BenchLine } from './sandbox.js';
import { median } from './median.js';
import { spawnTrue } from './scaling.js';

const SIZES = [1000, 3000];
const BLOCKS = 3;
const PER_BLOCK = 12;
const SKIPPED = 4;

/** How long `fn` took, in milliseconds. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Names of `count` made-up variables, each with a value the length of a typical one. */
function variables(count: number): Array<[string, string]> {
  return Array.from({ length: count }, (_, i) => [`ZS_BENCH_VAR_${i}`, `value-${i}-${'v'.repeat(40)}`]);
}

/** Runs and spawns (medians, ms), in blocks with `added` in this process's environment and not. */
async function measure(workspace: string, added: Array<[string, string]>): Promise<{ run: number; spawn: number; plainRun: number; plainSpawn: number }> {
  const times = { run: [] as number[], spawn: [] as number[], plainRun: [] as number[], plainSpawn: [] as number[] };
  const block = async (into: { run: number[]; spawn: number[] }) => {
    for (let i = 0; i < PER_BLOCK + SKIPPED; i++) {
      const run = await timed(async () => {
        const r = await runSandboxed(['/bin/true'], { workspace });
        if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
      });
      const spawned = await timed(spawnTrue);
      if (i < SKIPPED) continue;
      into.run.push(run);
      into.spawn.push(spawned);
    }
  };
  for (let b = 0; b < BLOCKS; b++) {
    for (const [name, value] of added) process.env[name] = value;
    try {
      await block(times);
    } finally {
      for (const [name] of added) delete process.env[name];
    }
    await block({ run: times.plainRun, spawn: times.plainSpawn });
  }
  return { run: median(times.run), spawn: median(times.spawn), plainRun: median(times.plainRun), plainSpawn: median(times.plainSpawn) };
}

export async function benchCallerEnv(onLine: (line: BenchLine) => void): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-env-')));
  const base = Object.keys(process.env).length;
  onLine({ name: `load average (1 min) at the start; the caller's own variables: ${base}`, value: loadavg()[0] ?? Number.NaN, unit: '' });
  try {
    for (let i = 0; i < 3; i++) await runSandboxed(['/bin/true'], { workspace });
    for (const count of SIZES) {
      const m = await measure(workspace, variables(count));
      const f = (v: number) => v.toFixed(1);
      onLine({ name: `${count} more variables: runSandboxed / spawn (${f(m.run)} / ${f(m.spawn)} ms; with none added ${f(m.plainRun)} / ${f(m.plainSpawn)} ms)`, value: m.run / m.spawn, unit: 'x', target: '<= 1.0', ok: m.run / m.spawn <= 1.0 });
      onLine({ name: `  ${count} more variables / none added: runSandboxed (spawn: ${(m.spawn / m.plainSpawn).toFixed(2)}x)`, value: m.run / m.plainRun, unit: 'x' });
    }
    onLine({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
