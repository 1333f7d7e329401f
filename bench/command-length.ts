// SPDX-License-Identifier: MIT
// What a long command costs a run: runSandboxed and child_process.spawn of `/bin/true` with
// arguments adding up to 0 bytes, 100 KB, 1 MB and 2 MB (100 KB strings, under the kernel's
// 128 KiB per argument; 2 MB is about all that the default 8 MiB stack lets exec take), alternated
// run by run, each size's first runs not counted. Prewarmed (the default options) and cold.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { runSandboxed } from '../lib/sandbox/run.js';
import { spawnOnce, type BenchLine } from './sandbox.js';
import { timed } from './caller-env.js';
import { median } from './median.js';

const SIZES_KB = [0, 100, 1000, 2000];
const RUNS = 20;
const SKIPPED = 4;

export async function benchCommandLength(onLine: (line: BenchLine) => void): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-command-')));
  onLine({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
  try {
    for (const prewarm of [true, false]) {
      for (const kb of SIZES_KB) {
        // Different strings per size and argument: nothing is the same object as the last run's.
        const argv = ['/bin/true', ...Array.from({ length: kb / 100 }, (_, i) => `${kb}-${i}-`.padEnd(100_000, 'a'))];
        const runs: number[] = [];
        const spawns: number[] = [];
        for (let i = 0; i < RUNS + SKIPPED; i++) {
          const run = await timed(async () => {
            const r = await runSandboxed(argv, { workspace, prewarm });
            if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
          });
          const spawned = await timed(() => spawnOnce(argv[0] as string, argv.slice(1), workspace));
          if (i < SKIPPED) continue;
          runs.push(run);
          spawns.push(spawned);
        }
        const run = median(runs);
        const spawned = median(spawns);
        const label = `${kb === 0 ? 'no' : `${kb.toLocaleString('en')} KB of`} arguments, ${prewarm ? 'default options' : 'prewarm off'}`;
        const line: BenchLine = { name: `${label}: runSandboxed / spawn (${run.toFixed(1)} / ${spawned.toFixed(1)} ms)`, value: run / spawned, unit: 'x' };
        // The target is the one of back-to-back runs with the default options (prewarmed); a cold
        // start is reported beside it.
        onLine(prewarm ? { ...line, target: '<= 1.0', ok: run / spawned <= 1.0 } : line);
      }
    }
    onLine({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
