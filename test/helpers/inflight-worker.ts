// SPDX-License-Identifier: MIT
// A worker thread with sandboxes running when its parent tears it down: a policy's first runs (so
// that it has a mount template), then a cold and a prewarmed sandbox of it that keep running.
// workerData: { workspace, secret } (a file the policy hides). Says 'running' once both exist.
import { parentPort, workerData } from 'node:worker_threads';

import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { runSandboxed } from '../../lib/sandbox/run.js';

const { workspace, secret } = workerData as { workspace: string; secret: string };
const options = { workspace, denyRead: [secret] };
for (let i = 0; i < 3; i++) await runSandboxed(['/bin/true'], { ...options, prewarm: i > 0 });
const started = [false, true].map(
  (prewarm) => new Promise<void>((resolve) => void spawnSandboxed(['/bin/sleep', '30'], { ...options, prewarm }).once('spawn', () => resolve())),
);
await Promise.all(started);
parentPort?.postMessage('running');
