// SPDX-License-Identifier: MIT
// A worker thread that takes pids cgroups under workerData.parent: `count` made ahead and then
// taken, all kept when their runs end. It says their names, then waits to be terminated when
// workerData.stay is set (the kept cgroups are never removed), else ends.
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

import { createPidsLimit, pidsLimitMade } from '../../lib/sandbox/cgroup.js';

const { parent, max, count, stay } = workerData as { parent: string; max: number; count: number; stay?: boolean };
await Promise.all(Array.from({ length: count }, () => pidsLimitMade(max, parent)));
const limits = Array.from({ length: count }, () => createPidsLimit(max, parent));
for (const limit of limits) {
  limit?.closeFd();
  limit?.remove();
}
parentPort?.postMessage(limits.map((limit) => basename(limit?.dir ?? '')));
if (stay === true) setInterval(() => {}, 1000);
