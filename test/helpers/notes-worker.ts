// SPDX-License-Identifier: MIT
// A worker thread that dies in the middle of its runs' notes, terminated by its parent.
// workerData { dir, root, tag, claim }: without `claim` it publishes the notes of one run of
// `root` (tagged `tag`) in `dir` and opens the noting window of a second run; with it, it claims
// the missed checks of `root` instead (their tags are what it says). Then it says what it did
// and waits to be terminated: no run ends, no claimed check is done.
import { parentPort, workerData } from 'node:worker_threads';

import { claimMissedChecks, openNotingWindow } from '../../lib/sandbox/run-notes.js';

const { dir, root, tag, claim } = workerData as { dir: string; root: string; tag: string; claim?: boolean };
if (claim === true) {
  const claimed = claimMissedChecks([root], dir, 0);
  parentPort?.postMessage(claimed.map((check) => [...check.notes.configs.values()][0]?.bytes?.toString()));
} else {
  const first = openNotingWindow(dir);
  first.take([root]);
  first.publish({
    since: first.since,
    roots: [root],
    gitRoots: [root],
    configs: new Map([[`${root}/.git/config`, { bytes: Buffer.from(tag), state: `file:${tag}` }]]),
    watched: new Map(),
    ownEntries: [],
  });
  openNotingWindow(dir).take([root]);
  parentPort?.postMessage('published');
}
setInterval(() => {}, 1000);
