// SPDX-License-Identifier: MIT
// A caller process for the heap bench (bench/scaling.ts): with `big`, it first fills about 2 GiB of
// its V8 heap (touched, so every page is mapped); then, for each `round` message, it runs `count`
// sandboxed /bin/true one after the other (cold starts: the clone is what a large heap could make
// dear) and answers with each run's milliseconds.
import { runSandboxed } from '../lib/sandbox/run.js';

const [mode, workspace] = process.argv.slice(2) as [string, string];
const held: number[][] = [];
if (mode === 'big') {
  // 16 arrays of 16 Mi doubles, 128 MiB each, kept alive for the life of the process.
  for (let i = 0; i < 16; i++) held.push(new Array<number>(16 * 1024 * 1024).fill(i + 0.5));
}

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
process.send?.({ ready: true });
