// SPDX-License-Identifier: MIT
// A worker thread that runs one sandboxed shell command (workerData: { workspace, command }) and
// waits for it: its parent terminates the worker while the command runs.
import { workerData } from 'node:worker_threads';

import { runSandboxed } from '../../lib/sandbox/run.js';

const { workspace, command } = workerData as { workspace: string; command: string };
await runSandboxed(['/bin/sh', '-c', command], { workspace, timeoutMs: 600_000 });
