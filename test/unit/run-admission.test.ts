// SPDX-License-Identifier: MIT
// The admission of runs by the caller's descriptor limit: how many it allows, that the runs over
// it wait in call order and start as others end, that an abort while waiting rejects with
// `aborted` (nothing started), and that a run that does not wait is counted all the same.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { DESCRIPTOR_RESERVE, DESCRIPTORS_PER_RUN, RunAdmission, descriptorLimit, runsAllowed } from '../../lib/sandbox/run-admission.js';
import { rejection } from '../helpers/sandbox.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 4096                 files
Max locked memory         8388608              8388608              bytes
`;

test('the soft open-file limit is read from /proc/self/limits; anything else means no limit known', () => {
  assert.is(descriptorLimit(LIMITS), 1024);
  assert.is(descriptorLimit(LIMITS.replace('1024 ', 'unlimited ')), Number.POSITIVE_INFINITY);
  assert.is(descriptorLimit(''), Number.POSITIVE_INFINITY);
  assert.is(descriptorLimit('Max open files            0    0    files\n'), Number.POSITIVE_INFINITY);
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

test.run();
