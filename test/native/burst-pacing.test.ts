// SPDX-License-Identifier: MIT
// A burst of runSandboxed calls made in one tick: once a slice of the caller's event loop is used
// up, each later call's option check waits for its start's turn (start-pacing.ts) instead of running
// in the caller's own loop, and a bad option still rejects with invalid_argument (nothing ran).
// A burst of a thousand real runs, their exits' work taking turns too, each gets its own result.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { loadCurrentBackend } from '../../lib/backend/current.js';
import { sharedSpecCount } from '../../lib/backend/linux/start.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { endTurn, SLICE_MS, startTurn } from '../../lib/sandbox/start-pacing.js';
import { makeTree, rejection, sandboxTest, until } from '../helpers/sandbox.js';

/** Work on the caller's thread, as a sandbox start is. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

test('a burst\'s option checks run in the starts\' turns, not in the caller\'s loop', async () => {
  await loadCurrentBackend();
  await new Promise((resolve) => setImmediate(resolve));
  let reads = 0;
  // A bad option (nothing runs), read through a getter: each read is the check looking at it.
  const options = () => ({
    get timeoutMs(): number {
      reads++;
      return -1;
    },
  });
  // A start that uses up the slice: the calls below have to wait for later turns.
  const turn = startTurn();
  assert.is(turn, undefined, 'the first start runs at once');
  busy(SLICE_MS + 1);
  endTurn();
  const count = 20;
  const calls = Array.from({ length: count }, () => runSandboxed(['/bin/true'], options()));
  assert.is(reads, 0, 'no option was checked within the calls');
  const errors = await Promise.all(calls.map((call) => rejection(call)));
  assert.ok(reads >= count, `every call's options were checked in its turn (${reads} reads)`);
  for (const error of errors) assert.is(error.code, 'invalid_argument', error.message);
});

sandboxTest('a burst of 1,024 runs in one tick: every one succeeds with its own exit code and output', async () => {
  const tree = makeTree('zs-burst-');
  try {
    const count = 1024;
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) => runSandboxed(['/bin/sh', '-c', 'echo "run $1"; exit $(($1 % 7))', 'sh', String(i)], { workspace: tree.ws })),
    );
    const wrong = results.flatMap((result, i) => (result.exitCode === i % 7 && result.stdout === `run ${i}\n` && result.protectedPathViolations.length === 0 ? [] : [`${i}: ${result.exitCode} ${JSON.stringify(result.stdout)} ${result.stderr}`]));
    assert.equal(wrong, [], `${wrong.length} of ${count} runs got another exit or output`);
  } finally {
    tree.cleanup();
  }
});

sandboxTest('runs of one policy in flight share one spec, let go of once the last of them has ended', async () => {
  const tree = makeTree('zs-shared-spec-');
  try {
    const count = 3;
    const runs = Array.from({ length: count }, (_, i) => runSandboxed(['/bin/sh', '-c', 'touch "ready$1"; while [ ! -e go ]; do sleep 0.05; done', 'sh', String(i)], { workspace: tree.ws }));
    for (let i = 0; i < count; i++) await until(join(tree.ws, `ready${i}`));
    assert.is(sharedSpecCount(), 1, 'one spec for the three runs in flight');
    writeFileSync(join(tree.ws, 'go'), '');
    const results = await Promise.all(runs);
    assert.equal(results.map((result) => result.exitCode), [0, 0, 0]);
    // The last run's prewarm refill (which reads the spec) may take a turn of its own.
    for (let turn = 0; turn < 100 && sharedSpecCount() > 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.is(sharedSpecCount(), 0, 'no spec is kept once no run is in flight');
  } finally {
    tree.cleanup();
  }
});

test.run();
