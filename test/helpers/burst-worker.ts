// SPDX-License-Identifier: MIT
// A worker thread that runs bursts of sandboxed commands until it is terminated, saying after each
// burst how many printed their own output. workerData: { workspace, count }.
import { parentPort, workerData } from 'node:worker_threads';

import { runSandboxed } from '../../lib/sandbox/run.js';

const { workspace, count } = workerData as { workspace: string; count: number };
for (;;) {
  const runs = await Promise.all(Array.from({ length: count }, (_, i) => runSandboxed(['/bin/sh', '-c', `echo ${i}`], { workspace })));
  parentPort?.postMessage(runs.filter((run, i) => run.stdout === `${i}\n`).length);
}
