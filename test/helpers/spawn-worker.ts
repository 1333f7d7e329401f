// SPDX-License-Identifier: MIT
// A worker thread that starts sandboxes through the addon and says so, so that its parent can tear
// the worker's environment down while the starts are still on the spawn threads. workerData:
// { workspace, argv, cold, warm }: that many cold starts of argv and prewarmed sandboxes.
import { parentPort, workerData } from 'node:worker_threads';

import { loadNative } from '../../lib/native/load.js';
import { nativeSpec } from './native-spec.js';

const { workspace, argv, cold, warm } = workerData as { workspace: string; argv: string[]; cold: number; warm: number };
const binding = loadNative();
const { spec } = nativeSpec(argv, workspace);
const handle = binding.prepareWarm(spec);
for (let i = 0; i < cold; i++) void binding.spawnAsync!(spec, () => {}).catch(() => {});
for (let i = 0; i < warm; i++) void binding.spawnWarm(handle, () => {}).catch(() => {});
parentPort?.postMessage('posted');
