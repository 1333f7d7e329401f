// SPDX-License-Identifier: MIT
// `node dist/bench/main.js prune`: what the removal of a workspace's aged-out managed caches does
// to the caller's event loop. A workspace's state is made by a run, its cache filled with files and
// aged past the 30 days; a run in a new workspace then makes a state of its own, whose release
// prunes the old one. The longest event-loop delay from that run until the old state is gone, with
// 20,000 files in its cache against the same with an empty cache (the baseline), alternated. The
// states live in a user cache dir of the bench's own (XDG_CACHE_HOME, restored afterwards).
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { runSandboxed } from '../lib/sandbox/run.js';
import type { BenchLine } from './sandbox.js';

/** A run's lease on its workspace's state lingers this long (lib/backend/linux/start.ts), then its release prunes. */
const LINGER_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest event-loop delay (ms) while a state with `files` files in its cache is pruned. */
async function pruneDelay(scratch: string, files: number): Promise<number> {
  const cache = mkdtempSync(join(scratch, 'cache-'));
  process.env.XDG_CACHE_HOME = cache;
  const old = realpathSync(mkdtempSync(join(scratch, 'old-')));
  await runSandboxed(['/bin/true'], { workspace: old });
  await sleep(LINGER_MS + 500);
  const base = join(cache, 'zero', 'runtime', 'v1');
  const root = readdirSync(base).find((name) => /^[0-9a-f]{16}$/.test(name)) as string;
  for (let d = 0; d < files / 100; d++) {
    const dir = join(base, root, 'cache', 'fill', `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}`), 'x'.repeat(100));
  }
  const aged = new Date(Date.now() - 40 * 86_400_000);
  utimesSync(join(base, root), aged, aged);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await runSandboxed(['/bin/true'], { workspace: realpathSync(mkdtempSync(join(scratch, 'new-'))) });
  await sleep(LINGER_MS + 300);
  for (let waited = 0; readdirSync(base).some((name) => name === root || name.startsWith('.trash-')) && waited < 30_000; waited += 10) await sleep(10);
  delay.disable();
  if (readdirSync(base).includes(root)) throw new Error('prune bench: the aged state was not pruned');
  return delay.max / 1e6;
}

export async function benchPrune(onLine: (line: BenchLine) => void = () => {}): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'zs-bench-prune-'));
  const saved = process.env.XDG_CACHE_HOME;
  try {
    onLine({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
    const full: number[] = [];
    const empty: number[] = [];
    for (let round = 0; round < 2; round++) {
      empty.push(await pruneDelay(scratch, 0));
      full.push(await pruneDelay(scratch, 20_000));
    }
    const worst = (list: number[]) => Math.max(...list);
    onLine({ name: `pruning a state of 20,000 cached files: caller event-loop delay, max (rounds: ${full.map((v) => v.toFixed(1)).join(' ')})`, value: worst(full), unit: 'ms' });
    onLine({ name: `  the same with an empty cache (rounds: ${empty.map((v) => v.toFixed(1)).join(' ')})`, value: worst(empty), unit: 'ms' });
    onLine({ name: 'pruning 20,000 cached files / an empty cache, longest delay', value: worst(full) / worst(empty), unit: 'x' });
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(scratch, { recursive: true, force: true });
  }
}
