// SPDX-License-Identifier: MIT
// The admission of runs by the caller's descriptor limit: how many it allows, that the runs over
// it wait in call order and start as others end, that an abort while waiting rejects with
// `aborted` (nothing started), and that a run that does not wait is counted all the same.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { LIMIT_NAMES, parseLimits } from '../../lib/process-limits.js';
import { DESCRIPTOR_RESERVE, DESCRIPTORS_PER_RUN, RunAdmission, runsAllowed } from '../../lib/sandbox/run-admission.js';
import { rejection } from '../helpers/sandbox.js';

/** /proc/self/limits as Linux 6.18 prints it (trailing blanks and all), with lowered limits. */
const LIMITS = [
  'Limit                     Soft Limit           Hard Limit           Units     ',
  'Max cpu time              unlimited            unlimited            seconds   ',
  'Max file size             unlimited            unlimited            bytes     ',
  'Max data size             unlimited            unlimited            bytes     ',
  'Max stack size            8388608              unlimited            bytes     ',
  'Max core file size        0                    unlimited            bytes     ',
  'Max processes             1200                 1200                 processes ',
  'Max open files            1024                 4096                 files     ',
  'Max locked memory         8388608              8388608              bytes     ',
  'Max nice priority         0                    0                    ',
  'Max realtime timeout      unlimited            unlimited            us        ',
  '',
].join('\n');

test('the limits of /proc/self/limits by name, unlimited as Infinity; anything else left out', () => {
  const limits = parseLimits(LIMITS);
  assert.equal(limits.get('Max open files'), { soft: 1024, hard: 4096 });
  assert.equal(limits.get('Max processes'), { soft: 1200, hard: 1200 });
  assert.equal(limits.get('Max cpu time'), { soft: Number.POSITIVE_INFINITY, hard: Number.POSITIVE_INFINITY });
  assert.equal(limits.get('Max nice priority'), { soft: 0, hard: 0 }, 'a line without units');
  assert.is(limits.has('Limit'), false, 'the header is no limit');
  for (const name of Object.values(LIMIT_NAMES)) assert.ok(limits.has(name), `${name} is read`);
  assert.is(parseLimits('Max open files            many                 4096                 files\n').size, 0);
  assert.is(parseLimits('').size, 0);
});

test('runs allowed: what the limit leaves after the open descriptors and the reserve, at least one', () => {
  assert.is(runsAllowed(1024, 40), Math.floor((1024 - 40 - DESCRIPTOR_RESERVE) / DESCRIPTORS_PER_RUN));
  assert.is(runsAllowed(1024, 40), 107);
  assert.is(runsAllowed(20000, 40), 2479);
  assert.is(runsAllowed(64, 30), 1, 'a limit below the reserve still lets one run at a time');
  assert.is(runsAllowed(Number.POSITIVE_INFINITY, 40), Number.POSITIVE_INFINITY);
});

test('runs over the allowance wait in call order and start one by one as others end', async () => {
  let measured = 0;
  const admission = new RunAdmission(() => {
    measured++;
    return 2;
  });
  assert.is(admission.take(), undefined);
  assert.is(admission.take(), undefined);
  const order: number[] = [];
  const third = admission.take()?.then(() => order.push(3));
  const fourth = admission.take()?.then(() => order.push(4));
  assert.ok(third !== undefined && fourth !== undefined, 'the third and fourth wait');
  assert.is(admission.inFlight, 2);
  assert.is(admission.waiting, 2);
  await Promise.resolve();
  assert.equal(order, []);
  admission.release();
  await third;
  assert.equal(order, [3], 'the first to wait starts first, and alone');
  assert.is(admission.inFlight, 2);
  admission.release();
  await fourth;
  assert.equal(order, [3, 4]);
  admission.release();
  admission.release();
  assert.is(admission.inFlight, 0);
  assert.is(admission.take(), undefined, 'a free slot is taken at once again');
  assert.is(measured, 1, 'the allowance is measured once');
});

test('a run that does not wait is counted, and a later one waits for its end', async () => {
  const admission = new RunAdmission(() => 1);
  admission.count();
  const next = admission.take();
  assert.ok(next !== undefined, 'the counted run holds the only slot');
  let started = false;
  void next.then(() => (started = true));
  admission.release();
  await next;
  assert.ok(started);
});

test('an abort while waiting rejects with aborted and gives up the place; one already aborted never waits', async () => {
  const admission = new RunAdmission(() => 1);
  assert.is(admission.take(), undefined);
  const controller = new AbortController();
  const waiting = admission.take(controller.signal);
  const after = admission.take();
  assert.ok(waiting !== undefined && after !== undefined);
  controller.abort(new Error('stop'));
  const error = await rejection(waiting);
  assert.is(error.code, 'aborted');
  assert.is(admission.waiting, 1, 'its place is given up');
  admission.release();
  await after;
  assert.is(admission.inFlight, 1);
  const early = admission.take(AbortSignal.abort());
  assert.ok(early !== undefined);
  assert.is((await rejection(early)).code, 'aborted');
  assert.is(admission.waiting, 0);
});

test('a start that ran out of a resource waits for an end, ahead of the runs waiting to start, one per end', async () => {
  const admission = new RunAdmission(() => 10);
  for (let i = 0; i < 3; i++) assert.is(admission.take(), undefined);
  const order: string[] = [];
  const first = admission.retryAfterAnEnd()?.then(() => order.push('retry 1'));
  const second = admission.retryAfterAnEnd()?.then(() => order.push('retry 2'));
  assert.ok(first !== undefined && second !== undefined, 'another run is in flight: they wait');
  assert.is(admission.inFlight, 1, 'each gave its slot back');
  const fresh = admission.take()?.then(() => order.push('fresh'));
  assert.ok(fresh !== undefined, 'a new run waits behind them though the allowance has room');
  assert.is(admission.waiting, 3);
  admission.release();
  await first;
  await Promise.resolve();
  assert.equal(order, ['retry 1'], 'one end lets one start again, and nothing else');
  assert.is(admission.inFlight, 1);
  admission.release();
  await second;
  await Promise.resolve();
  assert.equal(order, ['retry 1', 'retry 2']);
  admission.release();
  await fresh;
  assert.equal(order, ['retry 1', 'retry 2', 'fresh'], 'the runs waiting to start go once none waits to start again');
  assert.is(admission.inFlight, 1);
});

test('with no other run in flight a start that ran out of a resource does not wait, and stays counted', () => {
  const admission = new RunAdmission(() => 10);
  assert.is(admission.take(), undefined);
  assert.is(admission.retryAfterAnEnd(), undefined, 'no end could free anything');
  assert.is(admission.inFlight, 1, 'it reports its failure and releases');
  admission.release();
  assert.is(admission.inFlight, 0);
});

test('alone, a start that ran out of a resource may wait a pause instead, and is counted again after it', async () => {
  const admission = new RunAdmission(() => 10);
  assert.is(admission.take(), undefined);
  const paused = admission.retryAfterAnEnd(undefined, 5);
  assert.ok(paused !== undefined);
  assert.is(admission.inFlight, 0);
  assert.is(admission.waiting, 1);
  const fresh = admission.take();
  assert.ok(fresh !== undefined, 'a new run waits behind it');
  await paused;
  await fresh;
  assert.is(admission.inFlight, 2, 'both counted once the pause passed: nothing held the new run back');
  assert.is(admission.waiting, 0);
});

test('the last run waiting to start again is let go by the failing run\'s release, and fails alone', async () => {
  const admission = new RunAdmission(() => 10);
  assert.is(admission.take(), undefined);
  assert.is(admission.take(), undefined);
  const waiting = admission.retryAfterAnEnd();
  assert.ok(waiting !== undefined);
  // The other run fails the same way: nothing is in flight but itself, so it reports and releases.
  assert.is(admission.retryAfterAnEnd(), undefined);
  admission.release();
  await waiting;
  assert.is(admission.inFlight, 1, 'the waiting one is counted again and tries once more');
  assert.is(admission.retryAfterAnEnd(), undefined, 'alone, it reports its failure');
});

test('an abort while waiting to start again rejects with aborted and holds no slot', async () => {
  const admission = new RunAdmission(() => 10);
  assert.is(admission.take(), undefined);
  assert.is(admission.take(), undefined);
  const controller = new AbortController();
  const waiting = admission.retryAfterAnEnd(controller.signal);
  assert.ok(waiting !== undefined);
  controller.abort(new Error('stop'));
  assert.is((await rejection(waiting)).code, 'aborted');
  assert.is(admission.inFlight, 1);
  assert.is(admission.waiting, 0);
  assert.is(admission.take(), undefined, 'nothing waits to start again: a new run starts at once');
});

test('beside runs that do not end, the first start waiting to start again goes after the stall time, then the next', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timers();
  // Times 50 ms apart or more: timers are coarse on some systems (Windows: about 16 ms).
  const admission = new RunAdmission(() => 10, 100);
  for (let i = 0; i < 3; i++) assert.is(admission.take(), undefined);
  const order: string[] = [];
  const first = admission.retryAfterAnEnd()?.then(() => order.push('first'));
  const second = admission.retryAfterAnEnd()?.then(() => order.push('second'));
  assert.ok(first !== undefined && second !== undefined, 'a run is in flight: they wait');
  const mark = new Promise<void>((resolve) => setTimeout(() => {
    order.push('150 ms');
    resolve();
  }, 150));
  await Promise.all([first, second, mark]);
  assert.equal(order, ['first', '150 ms', 'second'], 'one at a time, a stall time apart');
  assert.is(admission.inFlight, 3, 'each counted again, to start once more');
  assert.is(timers(), before, 'no timer is left once none waits');
});

test('beside other runs, every end sets the stall time again, and lets the first waiting go', async () => {
  const admission = new RunAdmission(() => 10, 200);
  for (let i = 0; i < 4; i++) assert.is(admission.take(), undefined);
  const order: string[] = [];
  const first = admission.retryAfterAnEnd()?.then(() => order.push('first'));
  const second = admission.retryAfterAnEnd()?.then(() => order.push('second'));
  assert.ok(first !== undefined && second !== undefined);
  // An end at 100 ms lets the first go and the stall time starts again: the second goes at 300
  // ms, after a mark at 250 ms (at 200 ms, before it, had the end not set it again).
  setTimeout(() => admission.release(), 100);
  const mark = new Promise<void>((resolve) => setTimeout(() => {
    order.push('250 ms');
    resolve();
  }, 250));
  await Promise.all([first, second, mark]);
  assert.equal(order, ['first', '250 ms', 'second']);
  assert.is(admission.inFlight, 3, 'one run ended; both counted again');
});

test('an end that lets the last waiting start go stops the stall timer', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  const before = timers();
  const admission = new RunAdmission(() => 10, 60_000);
  assert.is(admission.take(), undefined);
  assert.is(admission.take(), undefined);
  const waiting = admission.retryAfterAnEnd();
  assert.ok(waiting !== undefined);
  assert.is(timers(), before + 1, 'the stall timer runs while a start waits');
  admission.release();
  await waiting;
  assert.is(timers(), before, 'and holds the event loop no longer');
});

test.run();
