// SPDX-License-Identifier: MIT
// An unprivileged caller whose process limit (RLIMIT_NPROC) holds a few runs at a time, starting
// many more at once: the starts the limit refuses (a clone, or the command's execve, with EAGAIN)
// wait for another run to end and start again, so every run succeeds. Before, each such start
// failed, reported as a user-namespace failure or, once the probe had run into the same limit, as
// a missing PID-namespace layer.
import { spawnSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { explainSpawnFailure } from '../../lib/backend/linux/start.js';
import { SandboxError } from '../../lib/errors.js';
import { assertEveryRunStartedOnce } from '../helpers/limited-report.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const HELPER = fileURLToPath(new URL('../helpers/limited-runs.js', import.meta.url));
// A uid of its own: RLIMIT_NPROC counts every process of the user on the machine, and other
// tests run as 65534 beside this one.
const UID = 64871;
const LIMIT = 48;
const STALLED = fileURLToPath(new URL('../helpers/stalled-start.js', import.meta.url));
const STALL_UID = 64872;

sandboxTest(`40 runs in one tick under RLIMIT_NPROC ${LIMIT} all succeed, those refused for processes started again as others end`, () => {
  const t = makeTree('zs-nproc-');
  try {
    for (const path of [t.base, t.ws, t.outside]) chownSync(path, UID, UID);
    const count = 40;
    // Each run holds two processes while it sleeps (the sandbox's init, and sh become sleep, so
    // that the command itself forks nothing the limit could refuse) and the caller a dozen
    // threads, so the limit holds about fifteen runs at once.
    const child = spawnSync('setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', '/bin/bash', '-c', `ulimit -u ${LIMIT} && exec "$0" "$@"`, process.execPath, HELPER, t.ws, String(count), '0.3', 'exec'], {
      encoding: 'utf8', cwd: t.ws, env: { PATH: process.env.PATH, HOME: t.outside }, timeout: 120_000,
    });
    const report = assertEveryRunStartedOnce(child, t.ws, count);
    assert.is(report.processes, LIMIT, 'the helper ran under the limit the test set');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a start refused for processes another program held starts once they are free, not when a long run of its caller ends', () => {
  const t = makeTree('zs-nproc-stall-');
  try {
    for (const path of [t.base, t.ws, t.outside]) chownSync(path, STALL_UID, STALL_UID);
    const child = spawnSync('setpriv', [`--reuid=${STALL_UID}`, `--regid=${STALL_UID}`, '--clear-groups', '/bin/bash', '-c', `ulimit -u ${LIMIT} && exec "$0" "$@"`, process.execPath, STALLED, t.ws], {
      encoding: 'utf8', cwd: t.ws, env: { PATH: process.env.PATH, HOME: t.outside }, timeout: 120_000,
    });
    assert.is(child.status, 0, child.stderr);
    const report = JSON.parse(child.stdout) as { sleepers: number; retries: number; ended: string[]; outcome: string };
    assert.ok(report.sleepers > 0, 'the sleepers took what the limit left');
    assert.ok(report.retries > 0, `the short run's start was refused (${child.stdout})`);
    assert.is(report.outcome, 'ok');
    assert.equal(report.ended, ['short', 'long'], 'the short run did not wait for the long one');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a start that ran out of processes is not explained by the probe, which would run out the same way', () => {
  const saved = process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS;
  // A layer the probe reports missing, as it did when its own fork met the process limit.
  process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS = 'pidns';
  try {
    const failed = new SandboxError('spawn_failed', 'clone(...) failed: Permission denied', { errno: 13, layer: 'userns', syscall: 'clone(...)' });
    const explained = explainSpawnFailure(failed, { network: 'deny' }) as SandboxError;
    assert.is(explained.code, 'sandbox_unavailable', 'another failure of a layer is explained by the probe');
    assert.match(explained.message, 'pidns');
    const exhausted = new SandboxError('resource_exhausted', 'clone(...) failed: Resource temporarily unavailable', { errno: 11, layer: 'userns', syscall: 'clone(...)' });
    assert.is(explainSpawnFailure(exhausted, { network: 'deny' }), exhausted, 'running out of processes stays what it is');
  } finally {
    if (saved === undefined) delete process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS;
    else process.env.ZERO_SANDBOX_TEST_DISABLE_LAYERS = saved;
  }
});

test.run();
