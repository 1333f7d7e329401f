// SPDX-License-Identifier: MIT
// The rules of the memo under the kept plan and spec (watched-memo.ts), with a watch set the test
// controls: a value is kept only from a computation made after the set and under its watch, used
// while the set is quiet and every file read reads the same, and never from answers gathered
// before the set was made.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { logContent, logLooked, logUncovered, nextLookEpoch } from '../../lib/sandbox/look-log.js';
import { declareOneRun } from '../../lib/sandbox/one-run.js';
import { WatchedMemo } from '../../lib/sandbox/watched-memo.js';

// process.platform: the memo takes clean POSIX paths ('/a/b'); Windows paths are not clean there.
const posixTest = process.platform === 'win32' ? test.skip : test;

interface FakeSet {
  quiet: boolean;
  released: boolean;
  entries: readonly string[];
}

function memo(max = 2, maxPaths?: number): { memo: WatchedMemo<string, { n: number }>; sets: FakeSet[] } {
  const sets: FakeSet[] = [];
  const watch = (entries: readonly string[]) => {
    const set: FakeSet = { quiet: true, released: false, entries };
    sets.push(set);
    return { quiet: () => set.quiet && !set.released, again: () => undefined, release: () => void (set.released = true) };
  };
  return { memo: new WatchedMemo<string, { n: number }>(max, (a, b) => a === b, (k) => k, watch, maxPaths), sets };
}

posixTest('kept only from a computation after the set, used while it is quiet', () => {
  const { memo: m, sets } = memo();
  let computed = 0;
  const compute = () => {
    logLooked('/a/b');
    return { n: ++computed };
  };
  assert.is(m.get('k', compute).n, 1);
  assert.is(sets.length, 1, 'the first computation made a set');
  assert.equal(sets[0]?.entries, ['/a/b']);
  assert.is(m.get('k', compute).n, 2, 'the second computes, under the set');
  assert.is(m.get('k', compute).n, 2, 'the third is answered');
  assert.ok(Object.isFrozen(m.get('k', compute)), 'kept values are frozen');
  (sets[0] as FakeSet).quiet = false;
  assert.is(m.get('k', compute).n, 3, 'an event: computed afresh');
  assert.ok(sets[0]?.released, 'the old set is released');
  assert.is(m.get('k', compute).n, 4);
  assert.is(m.get('k', compute).n, 4);
});

posixTest('answers gathered before the set, or a look the set cannot vouch for, are not kept', () => {
  const { memo: m } = memo();
  let computed = 0;
  const compute = () => {
    logLooked('/a/b');
    return { n: ++computed };
  };
  const early = nextLookEpoch();
  m.get('k', compute);
  assert.is(m.get('k', compute, early).n, 2, 'facts older than the set');
  assert.is(m.get('k', compute, early).n, 3, 'still not kept');
  assert.is(m.get('k', compute).n, 4, 'fresh facts: kept');
  assert.is(m.get('k', compute).n, 4);
  const linked = () => {
    logUncovered();
    return { n: ++computed };
  };
  for (let i = 0; i < 3; i++) assert.is(m.get('l', linked).n, 5 + i, 'a followed link: computed every time');
  const relative = () => {
    logLooked('a/b');
    return { n: ++computed };
  };
  for (let i = 0; i < 3; i++) assert.is(m.get('r', relative).n, 8 + i, 'a path that is not clean: computed every time');
});

posixTest('a computation that looked beyond its set makes a new one; a file read is read again on every use', () => {
  const { memo: m, sets } = memo();
  const dir = mkdtempSync(join(tmpdir(), 'zs-wmemo-'));
  try {
    const file = join(dir, 'f');
    writeFileSync(file, 'one');
    let computed = 0;
    let extra = false;
    const compute = () => {
      logLooked('/a/b');
      if (extra) logLooked('/a/c');
      logContent(file, 'one');
      return { n: ++computed };
    };
    m.get('k', compute);
    extra = true;
    assert.is(m.get('k', compute).n, 2);
    assert.is(sets.length, 2, 'looked at /a/c too: a new set');
    assert.is(m.get('k', compute).n, 3, 'kept now');
    assert.is(m.get('k', compute).n, 3);
    writeFileSync(file, 'two');
    assert.is(m.get('k', compute).n, 4, 'the file reads otherwise: computed afresh');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

posixTest('sets that change before they are used, run after run, are made less and less often', () => {
  const { memo: m, sets } = memo();
  let computed = 0;
  for (let run = 0; run < 100; run++) {
    for (const set of sets) set.quiet = false; // the command writes where the policy looked, every run
    assert.is(m.get('k', () => (logLooked('/a/b'), { n: ++computed })).n, computed, `run ${run} computed`);
  }
  assert.ok(sets.length <= 8, `${sets.length} sets for 100 runs`);
  for (const set of sets) set.quiet = true;
  for (let run = 0; run < 70 && m.get('k', () => (logLooked('/a/b'), { n: ++computed })).n === computed; run++);
  const answered = computed;
  assert.is(m.get('k', () => (logLooked('/a/b'), { n: ++computed })).n, answered, 'once quiet again it answers');
});

posixTest('at most `max` keys are kept; the oldest set is released', () => {
  const { memo: m, sets } = memo();
  for (const key of ['a', 'b', 'c']) for (let i = 0; i < 2; i++) m.get(key, () => (logLooked('/x'), { n: 0 }));
  assert.ok(sets[0]?.released, 'the oldest was dropped');
  assert.not.ok(sets[2]?.released);
});

posixTest('the paths watched over all keys are bounded: the least recently used go to make room', () => {
  const { memo: m, sets } = memo(16, 5);
  const paths: Record<string, string[]> = { a: ['/a/1', '/a/2'], b: ['/b/1', '/b/2'], c: ['/c/1', '/c/2'], big: ['/d/1', '/d/2', '/d/3', '/d/4', '/d/5', '/d/6'] };
  let computed = 0;
  const get = (key: string) =>
    m.get(key, () => {
      for (const path of paths[key] as string[]) logLooked(path);
      return { n: ++computed };
    });
  const setOf = (key: string) => sets.find((set) => set.entries[0] === paths[key]?.[0] && !set.released);
  for (const key of ['a', 'b', 'a']) for (let i = 0; i < 2; i++) get(key);
  assert.ok(setOf('a') !== undefined && setOf('b') !== undefined, 'four paths: both kept');
  const before = computed;
  get('a');
  get('b');
  assert.is(computed, before, 'both answered');
  get('a'); // b is now the least recently used
  get('c');
  assert.is(setOf('b'), undefined, 'b went to make room for c');
  assert.ok(setOf('a') !== undefined, 'a, used after b, stayed');
  get('big');
  assert.is(setOf('a'), undefined);
  assert.is(setOf('c'), undefined);
  assert.ok(setOf('big') !== undefined, 'a key over the bound alone is kept by itself');
  get('big');
  const kept = computed;
  get('big');
  assert.is(computed, kept, 'and answered');
});

posixTest('more keys in turn than fit: those dropped unanswered rest, and the others stay kept and answered', () => {
  const { memo: m } = memo(16);
  const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
  let computed = 0;
  const get = (key: string) =>
    m.get(key, () => {
      logLooked(`/${key}/x`);
      computed++;
      return { n: Number(key.slice(1)) };
    });
  let last = 0;
  for (let round = 0; round < 12; round++) {
    const before = computed;
    for (const key of keys) assert.is(get(key).n, Number(key.slice(1)), `round ${round}: ${key}`);
    last = computed - before;
  }
  assert.ok(last <= 8, `${last} of 20 computed in the last round`);
});

// Last: a process that says it runs once cannot take it back (the flag is for the process's life).
posixTest('in a process that runs once, a key seen for the first time makes no set', () => {
  const { memo: m, sets } = memo();
  let computed = 0;
  const compute = () => {
    logLooked('/a/b');
    return { n: ++computed };
  };
  declareOneRun();
  assert.is(m.get('k', compute).n, 1);
  assert.is(sets.length, 0, 'no set: no later run would use it');
  assert.is(m.get('k', compute).n, 2);
  assert.is(sets.length, 1, 'asked again after all: the set is made then');
});

test.run();
