// SPDX-License-Identifier: MIT
// A process that says it runs one sandbox (one-run.ts: the CLI's `run`) keeps nothing for a later
// run: the guard's look, the credential deny set and the watched looks and listings at write
// roots are made afresh on every call, with the answers a fresh look gives, and no memo answers
// the second call as it would in a long-lived process. This file's process declares it (each test
// file runs in a process of its own).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { inspect, inspectMany, inspectManyWatched, readSmall, toBytes, watchedLookCounts } from '../../lib/sandbox/beneath.js';
import { credentialMemoCounts, rememberedFor } from '../../lib/sandbox/credential-memo.js';
import { guardMemoCounts, lookKept } from '../../lib/sandbox/guard-memo.js';
import { declareOneRun, oneRun } from '../../lib/sandbox/one-run.js';
import { listRoots, rootListingCounts } from '../../lib/sandbox/root-walk.js';
import { guardRoot, settle } from '../helpers/guard-root.js';
import { makeTree } from '../helpers/sandbox.js';

// process.platform: the memos these skip keep anything only on Linux (inotify, directory stamps).
const linuxTest = process.platform === 'linux' ? test : test.skip;

declareOneRun();

test('the declaration holds for the rest of the process', () => {
  assert.ok(oneRun());
});

linuxTest('the guard look is made on every call and never kept, and sees what changed in between', async () => {
  const { t, root, asked } = await guardRoot();
  try {
    let looks = 0;
    const look = () => {
      looks++;
      return `${inspect(toBytes(join(root, '.zero'))).kind} ${readSmall(toBytes(join(root, '.git', 'config')), 1 << 20)?.toString() ?? 'none'}`;
    };
    const reused = guardMemoCounts.reused;
    for (let i = 0; i < 3; i++) {
      const kept = lookKept(asked, look);
      assert.is(kept.value, 'missing [core]\n');
      assert.is(kept.quiet, undefined, 'no watch set vouches for a later run');
    }
    assert.is(looks, 3, 'every call looked');
    assert.is(guardMemoCounts.reused, reused, 'no call was answered from the memo');
    mkdirSync(join(root, '.zero'));
    assert.is(lookKept(asked, look).value, 'dir [core]\n');
  } finally {
    t.cleanup();
  }
});

linuxTest('watched looks and root listings look every time and answer as plain looks do', async () => {
  const t = makeTree();
  try {
    const dirs = ['a', 'b', 'c'].map((name) => join(t.ws, name));
    for (const dir of dirs) mkdirSync(join(dir, 'sub', '.git'), { recursive: true });
    await settle();
    const paths = [...dirs, join(t.ws, 'missing')].map(toBytes);
    const { answered, looked } = watchedLookCounts;
    const listed = rootListingCounts.answered;
    const plain = inspectMany(paths).map((info) => info.kind);
    for (let i = 0; i < 2; i++) {
      assert.equal(inspectManyWatched(paths).map((info) => info.kind), plain);
      const listings = listRoots(dirs, 8);
      assert.equal(listings, dirs.map(() => 'ddsub/'));
    }
    assert.is(watchedLookCounts.answered, answered, 'no look was answered from a watch');
    assert.is(watchedLookCounts.looked, looked, 'the unwatched verb looked');
    assert.is(rootListingCounts.answered, listed, 'no listing was a kept one');
  } finally {
    t.cleanup();
  }
});

test('the credential deny set is computed on every call, its paths not noted', () => {
  const { answered, computed } = credentialMemoCounts;
  let calls = 0;
  let noted = 0;
  for (let i = 0; i < 2; i++) {
    const value = rememberedFor('one-run key', (note) => {
      calls++;
      note('/');
      noted++;
      return 'set';
    });
    assert.is(value, 'set');
  }
  assert.is(calls, 2);
  assert.is(noted, 2);
  assert.is(credentialMemoCounts.answered, answered);
  assert.is(credentialMemoCounts.computed, computed, 'the memo did not run');
});

test.run();
