// SPDX-License-Identifier: MIT
// Worker threads in tests: waiting for what a helper worker says first.
import type { Worker } from 'node:worker_threads';

/** The first message `worker` posts; rejects with its error when it fails before posting one. */
export function firstMessage<T = unknown>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}
