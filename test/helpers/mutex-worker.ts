// SPDX-License-Identifier: MIT
// A worker thread that takes the managed runtime mutex of workerData.dir, writes a lease on
// workerData.root under it, says "holding" with the mutex's owner name, and spins inside the
// mutex until it is terminated: a termination that skips the mutex's release.
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

import { withMutex, writeLease } from '../../lib/sandbox/runtime-lease.js';

const { dir, root } = workerData as { dir: string; root: string };
withMutex(dir, () => {
  writeLease(root, 'worker');
  parentPort?.postMessage(readlinkSync(join(dir, '.mutex')));
  for (;;) {
    // held until terminated
  }
});
