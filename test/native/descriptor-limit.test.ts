// SPDX-License-Identifier: MIT
// A caller whose descriptor limit cannot hold every run it starts at once: the runs over what it
// holds wait for others to end, so each one succeeds (before, a burst of runs that outlived their
// start failed part-way with EMFILE, reported as a Landlock, mount or user-namespace failure).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const HELPER = fileURLToPath(new URL('../helpers/limited-runs.js', import.meta.url));

/** The most runs the log shows running at once ("s" at each start, "e" at each end). */
function peak(log: string): number {
  let running = 0;
  let most = 0;
  for (const line of log.split('\n')) {
    if (line === 's') most = Math.max(most, ++running);
    if (line === 'e') running--;
  }
  return most;
}

sandboxTest('96 runs in one tick under RLIMIT_NOFILE 256 all succeed, as many at a time as the limit holds', () => {
  const t = makeTree('zs-nofile-');
  try {
    const count = 96;
    // Both limits at 256, so Node cannot raise its soft limit at start; 96 runs at six or more
    // descriptors each would need about 600.
    const child = spawnSync('/bin/sh', ['-c', 'ulimit -n 256 && exec "$0" "$@"', process.execPath, HELPER, t.ws, String(count), '0.3'], { encoding: 'utf8', timeout: 120_000 });
    assert.is(child.status, 0, `helper exited ${String(child.status)}: ${child.stderr}`);
    const report = JSON.parse(child.stdout) as { allowed: number; limit: number; outcomes: string[] };
    assert.is(report.limit, 256, 'the helper ran under the limit the test set');
    const failed = report.outcomes.filter((outcome) => outcome !== 'ok');
    assert.equal(failed, [], `${failed.length} of ${count} runs failed`);
    const log = readFileSync(join(t.ws, 'log'), 'utf8');
    assert.is(log.split('\n').filter((line) => line === 'e').length, count, 'every command ran to its end');
    const most = peak(log);
    assert.ok(report.allowed < count, `the limit holds fewer runs than were started (${report.allowed})`);
    assert.ok(most <= report.allowed, `at most ${report.allowed} ran at once (${most} did)`);
    assert.ok(most >= 2, `runs still ran side by side (${most} at once)`);
  } finally {
    t.cleanup();
  }
});

test.run();
