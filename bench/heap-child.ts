// SPDX-License-Identifier: MIT
// A caller process for the heap bench (bench/scaling.ts): with `big`, it first fills about 2 GiB of
// its V8 heap (touched, so every page is mapped); then, for each `round` message, it runs `count`
// sandboxed /bin/true one after the other (cold starts: the clone is what a large heap could make
// dear) and answers with each run's milliseconds. Before it says it is ready, both kinds of caller
// run a few sandboxes (the first runs of a process compile and load what later ones reuse) and
// collect their garbage once (started with --expose-gc): filling the big heap leaves as much
// garbage as it keeps (each array is made of small integers first, then copied as doubles), whose
// collection and sweeping on the collector's threads would otherwise fall into the first rounds
// measured, which is the bench's own cost, not a run's.
import { runSandboxed } from '../lib/sandbox/run.js';

const [mode, workspace] = process.argv.slice(2) as [string, string];
const held: number[][] = [];
if (mode === 'big') {
  // 16 arrays of 16 Mi doubles, 128 MiB each, kept alive for the life of the process.
  for (let i = 0; i < 16; i++) held.push(new Array<number>(16 * 1024 * 1024).fill(i + 0.5));
}

/** Runs before the first round is measured (see the header). */
const WARM_UP_RUNS = 5;

process.on('message', (message: { count: number }) => {
  void (async () => {
    const times: number[] = [];
    for (let i = 0; i < message.count; i++) {
      const start = performance.now();
      const r = await runSandboxed(['/bin/true'], { workspace, prewarm: false });
      if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
      times.push(performance.now() - start);
    }
    process.send?.({ times, heapBytes: process.memoryUsage().heapUsed, arrays: held.length });
  })().catch((error: unknown) => {
    process.send?.({ error: String(error) });
  });
});
void (async () => {
  for (let i = 0; i < WARM_UP_RUNS; i++) {
    const r = await runSandboxed(['/bin/true'], { workspace, prewarm: false });
    if (r.exitCode !== 0) throw new Error(`bench run failed: ${r.stderr}`);
  }
  (globalThis as { gc?: () => void }).gc?.();
  process.send?.({ ready: true });
})().catch((error: unknown) => {
  process.send?.({ error: String(error) });
});
