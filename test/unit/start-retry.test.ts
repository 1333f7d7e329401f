// SPDX-License-Identifier: MIT
// A start whose mount target vanished between the plan and the mount (a host program rewriting a
// hidden file by rename, as less and vim do with their history files) is prepared again from
// scratch, a few times at most: nothing ran, and each attempt is planned on what is there then.
// Any other failure stands at once. Driven by a backend whose starts fail as the test says.
import { constants } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import type { SandboxBackend, Starter } from '../../lib/sandbox/contract.js';
import { MAX_START_ATTEMPTS, startSandboxed } from '../../lib/sandbox/process.js';
import { runWith } from '../../lib/sandbox/run.js';
import { preparedFromPlan } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { exitingProcess } from '../helpers/fake-process.js';

const plan = posixPlan('/w/ws', { argv: ['/bin/fake'] });

const vanished = (): SandboxError =>
  new SandboxError('mount_failed', 'mask_file(/home/u/.lesshst): No such file or directory', { errno: constants.errno.ENOENT, path: '/home/u/.lesshst', layer: 'mount', syscall: 'mask_file(/home/u/.lesshst)' });

/** A backend whose first `failures` starts throw `error()`, then start a process that exits 0; it counts prepares and releases. */
function failingBackend(failures: number, error: () => unknown, async: boolean): { backend: SandboxBackend; prepares: () => number; releases: () => number; starts: () => number } {
  let prepares = 0;
  let releases = 0;
  let starts = 0;
  const start: Starter = (_prepared, io, onExit) => {
    starts++;
    if (starts <= failures) throw error();
    return exitingProcess(io, onExit);
  };
  const backend: SandboxBackend = {
    prepare: () => {
      prepares++;
      return { ...preparedFromPlan(plan, '/tmp/none', 'macos-seatbelt'), release: () => void releases++ };
    },
    start,
    ...(async ? { startAsync: async (prepared, io, onExit) => start(prepared, io, onExit) } : {}),
  };
  return { backend, prepares: () => prepares, releases: () => releases, starts: () => starts };
}

for (const async of [false, true]) {
  const how = async ? 'runSandboxed (async start)' : 'spawnSandboxed';

  test(`${how}: a mount target that vanished once is planned again and the run succeeds`, async () => {
    const fake = failingBackend(1, vanished, async);
    const result = await runWith(['/bin/fake'], {}, fake.backend);
    assert.is(result.exitCode, 0);
    assert.is(fake.prepares(), 2);
    assert.is(fake.starts(), 2);
    // Every preparation is released: the failed one at once, the other when its run ended.
    assert.is(fake.releases(), 2);
  });

  test(`${how}: a target that keeps vanishing gives up after ${MAX_START_ATTEMPTS} attempts, naming the path`, async () => {
    const fake = failingBackend(10, vanished, async);
    let failure: unknown;
    try {
      if (async) await runWith(['/bin/fake'], {}, fake.backend);
      else startSandboxed(['/bin/fake'], {}, fake.backend);
    } catch (error) {
      failure = error;
    }
    assert.instance(failure, SandboxError);
    assert.is((failure as SandboxError).code, 'mount_failed');
    assert.is((failure as SandboxError).path, '/home/u/.lesshst');
    assert.is(fake.prepares(), MAX_START_ATTEMPTS);
    assert.is(fake.releases(), MAX_START_ATTEMPTS);
  });
}

const OTHER_FAILURES: [string, () => unknown][] = [
  ['a mount that failed otherwise (EACCES)', () => new SandboxError('mount_failed', 'readonly_bind(/x): Permission denied', { errno: constants.errno.EACCES, path: '/x', layer: 'mount' })],
  ['ENOENT with no path', () => new SandboxError('mount_failed', 'mount: No such file or directory', { errno: constants.errno.ENOENT, layer: 'mount' })],
  ['another layer missing', () => new SandboxError('landlock_unsupported', 'landlock_restrict_self: Operation not supported', { errno: constants.errno.EOPNOTSUPP, layer: 'landlock' })],
  ['not a SandboxError', () => new Error('boom')],
];

for (const [name, error] of OTHER_FAILURES) {
  test(`any other start failure stands at once: ${name}`, async () => {
    for (const async of [false, true]) {
      const fake = failingBackend(1, error, async);
      let failure: unknown;
      try {
        await runWith(['/bin/fake'], {}, fake.backend);
      } catch (caught) {
        failure = caught;
      }
      assert.ok(failure !== undefined, `${name}: the run failed`);
      assert.is(fake.prepares(), 1, name);
      assert.is(fake.starts(), 1, name);
    }
  });
}

test.run();
