// SPDX-License-Identifier: MIT
// A runSandboxed start that ran out of descriptors or processes (nothing ran) waits for another run
// of the caller to end and starts again; alone it fails with `resource_exhausted`. A command that
// ran is never started again, whatever its failure; execve's EAGAIN (the process limit reached as
// the command was to be executed) is such a start failure, not an exit of the command's own.
// Driven by a backend whose starts and exits the test plays.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { constants } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import type { OsExit, SandboxBackend, Starter } from '../../lib/sandbox/contract.js';
import { ALONE_PAUSES_MS, runAdmission } from '../../lib/sandbox/run-admission.js';
import { runWith } from '../../lib/sandbox/run.js';
import { preparedFromPlan } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { exitingProcess } from '../helpers/fake-process.js';
import { rejection } from '../helpers/sandbox.js';

const plan = posixPlan('/w/ws', { argv: ['/bin/fake'] });

const exhausted = (): SandboxError =>
  new SandboxError('resource_exhausted', 'clone(...) failed: Resource temporarily unavailable', { errno: constants.errno.EAGAIN, layer: 'userns', syscall: 'clone(...)' });

/** What the Nth start (from 1) does: throw, or exit with this exit (after `hold` resolves). */
type Play = { throws: () => unknown } | { exit: Partial<OsExit>; hold?: Promise<void> };

function playedBackend(play: (n: number) => Play): { backend: SandboxBackend; starts: () => number } {
  let starts = 0;
  const start: Starter = (_prepared, io, onExit) => {
    const step = play(++starts);
    if ('throws' in step) throw step.throws();
    return exitingProcess(io, (exit) => {
      const end = (): void => onExit({ ...exit, ...step.exit });
      if (step.hold === undefined) end();
      else void step.hold.then(end);
    });
  };
  const backend: SandboxBackend = {
    prepare: () => preparedFromPlan(plan, '/tmp/none', 'macos-seatbelt'),
    start,
    startAsync: async (prepared, io, onExit) => start(prepared, io, onExit),
  };
  return { backend, starts: () => starts };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

test('a start that ran out of a resource while another run is in flight starts again once that run ends', async () => {
  const other = gate();
  const { backend, starts } = playedBackend((n) => (n === 1 ? { exit: { exitCode: 0 }, hold: other.promise } : n === 2 ? { throws: exhausted } : { exit: { exitCode: 0 } }));
  const first = runWith(['/bin/fake'], {}, backend);
  await new Promise((resolve) => setImmediate(resolve));
  let done = false;
  const second = runWith(['/bin/fake'], {}, backend).then(
    (result) => {
      done = true;
      return result;
    },
    (error: unknown) => {
      done = true;
      return { exitCode: error instanceof SandboxError ? error.code : String(error) };
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.is(starts(), 2, 'the second start failed');
  assert.is(done, false, 'and waits for the first run to end');
  assert.is(runAdmission.waiting, 1);
  other.open();
  assert.is((await first).exitCode, 0);
  assert.is((await second).exitCode, 0, 'then it starts again and succeeds');
  assert.is(starts(), 3);
  assert.is(runAdmission.inFlight, 0, 'every run released what it held');
});

test('alone, a start that ran out of a resource tries again after short pauses, then fails with resource_exhausted', async () => {
  const { backend, starts } = playedBackend(() => ({ throws: exhausted }));
  const began = performance.now();
  const error = await rejection(runWith(['/bin/fake'], {}, backend));
  assert.is(error.code, 'resource_exhausted');
  assert.is(starts(), ALONE_PAUSES_MS.length + 1, 'the first start and one more after each pause');
  const paused = ALONE_PAUSES_MS.reduce((sum, ms) => sum + ms, 0);
  assert.ok(performance.now() - began >= paused, `after pauses of ${ALONE_PAUSES_MS.join(', ')} ms`);
  assert.is(runAdmission.inFlight, 0);
  const once = playedBackend((n) => (n === 1 ? { throws: exhausted } : { exit: { exitCode: 0 } }));
  assert.is((await runWith(['/bin/fake'], {}, once.backend)).exitCode, 0, 'what was freed meanwhile lets it start');
  assert.is(once.starts(), 2);
  assert.is(runAdmission.inFlight, 0);
});

test('a refused start waits no longer than the run\'s timeoutMs, with or without other runs in flight', async () => {
  const other = gate();
  const { backend, starts } = playedBackend((n) => (n === 1 ? { exit: { exitCode: 0 }, hold: other.promise } : { throws: exhausted }));
  const first = runWith(['/bin/fake'], {}, backend);
  await new Promise((resolve) => setImmediate(resolve));
  const error = await rejection(runWith(['/bin/fake'], { timeoutMs: 60 }, backend));
  assert.is(error.code, 'resource_exhausted');
  assert.match(error.message, /timeoutMs \(60 ms\) passed while the run waited to start again$/);
  assert.is((error as SandboxError).layer, 'userns', 'the refusal\'s details are kept');
  assert.is(runAdmission.inFlight, 1, 'the other run, still held, had not ended: it was not waited for');
  assert.is(starts(), 2);
  other.open();
  await first;
  const alone = playedBackend(() => ({ throws: exhausted }));
  const timed = await rejection(runWith(['/bin/fake'], { timeoutMs: 100 }, alone.backend));
  assert.match(timed.message, /timeoutMs \(100 ms\) passed/);
  assert.ok(alone.starts() < ALONE_PAUSES_MS.length, 'alone, it stops at the timeout rather than after every pause');
  assert.is(runAdmission.inFlight, 0);
  assert.is(runAdmission.waiting, 0);
});

test('an abort while waiting to start again rejects with aborted', async () => {
  const other = gate();
  const { backend } = playedBackend((n) => (n === 1 ? { exit: { exitCode: 0 }, hold: other.promise } : { throws: exhausted }));
  const first = runWith(['/bin/fake'], {}, backend);
  await new Promise((resolve) => setImmediate(resolve));
  const controller = new AbortController();
  const waiting = rejection(runWith(['/bin/fake'], { signal: controller.signal, timeoutMs: 60_000 }, backend));
  await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort(new Error('stop'));
  assert.is((await waiting).code, 'aborted');
  other.open();
  await first;
  assert.is(runAdmission.inFlight, 0);
});

test('execve refused with EAGAIN is a start that ran out of processes: resource_exhausted, its output file gone', async () => {
  const execError = { errno: constants.errno.EAGAIN, code: 'EAGAIN' };
  const { backend } = playedBackend(() => ({ exit: { exitCode: 125, execError } }));
  let outputDir: string | undefined;
  const error = await rejection(
    runWith(['/bin/fake'], { keepOutputFile: true }, {
      ...backend,
      startAsync: async (prepared, io, onExit) => {
        outputDir = process.platform === 'linux' && io.capture?.spill !== undefined ? dirname(await fdPath(io.capture.spill)) : undefined;
        return backend.startAsync!(prepared, io, onExit);
      },
    }),
  );
  assert.is(error.code, 'resource_exhausted');
  assert.is((error as SandboxError).syscall, 'execve');
  assert.match(error.message, /\/bin\/fake could not be executed .*RLIMIT_NPROC/);
  // Found through /proc on Linux (the test runs elsewhere too).
  if (process.platform === 'linux') assert.is(existsSync(outputDir!), false, `the unused output file's directory ${String(outputDir)} is removed`);
});

test('other exec failures stay the command\'s: exit 127 with "command not found", nothing started again', async () => {
  const execError = { errno: constants.errno.ENOENT, code: 'ENOENT' };
  const other = gate();
  const { backend, starts } = playedBackend((n) => (n === 1 ? { exit: { exitCode: 0 }, hold: other.promise } : { exit: { exitCode: 127, execError } }));
  const first = runWith(['/bin/fake'], {}, backend);
  await new Promise((resolve) => setImmediate(resolve));
  const result = await runWith(['/bin/fake'], {}, backend);
  assert.is(result.exitCode, 127);
  assert.match(result.stderr, '/bin/fake: command not found');
  other.open();
  await first;
  assert.is(starts(), 2);
});

test('a command that ran is never started again, even when the check after it ran out of descriptors', async () => {
  const other = gate();
  let checks = 0;
  const { backend, starts } = playedBackend((n) => (n === 1 ? { exit: { exitCode: 0 }, hold: other.promise } : { exit: { exitCode: 0 } }));
  const failingCheck: SandboxBackend = {
    ...backend,
    startAsync: async (prepared, io, onExit) => {
      const os = await backend.startAsync!(prepared, io, onExit);
      if (starts() === 1) return os;
      return {
        ...os,
        checkProtectedPaths: () => {
          checks++;
          throw new SandboxError('resource_exhausted', 'open failed: Too many open files', { errno: constants.errno.EMFILE });
        },
      };
    },
  };
  const first = runWith(['/bin/fake'], {}, failingCheck);
  await new Promise((resolve) => setImmediate(resolve));
  const error = await rejection(runWith(['/bin/fake'], {}, failingCheck));
  assert.is(error.code, 'resource_exhausted', 'the failure is reported as it was');
  assert.is(starts(), 2, 'and the command is not run a second time');
  assert.is(checks, 1);
  other.open();
  await first;
  assert.is(runAdmission.inFlight, 0);
});

/** The path an open descriptor of this process names. */
async function fdPath(fd: number): Promise<string> {
  const { readlink } = await import('node:fs/promises');
  return readlink(`/proc/self/fd/${fd}`);
}

test.run();
