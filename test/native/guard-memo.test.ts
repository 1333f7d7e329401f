// The guard's look before a run, kept across runs (guard-memo.ts lookKept): a look is kept only
// when made after its watch set (the second one), given again while the set is quiet and every
// file it read keeps its stamp, and made afresh once anything it depends on changed: an entry made
// where it found none, an entry removed, a file it read written in place (no directory event), a
// directory above renamed. Each case changes the host between two calls and checks that the next
// call looks again and answers what a look gives now.
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { inspect, readSmall, toBytes } from '../../lib/sandbox/beneath.js';
import { forgetKeptLooks, guardMemoCounts, lookKept, type LookAsked } from '../../lib/sandbox/guard-memo.js';
import { deepFreeze } from '../../lib/sandbox/watched-memo.js';
import type { WritableRoot } from '../../lib/backend/types.js';
import { guardRoot, settle } from '../helpers/guard-root.js';
import { makeTree } from '../helpers/sandbox.js';

// process.platform: only Linux has the watch sets (inotify).
const linuxTest = process.platform === 'linux' ? test : test.skip;

/** What the guard would ask: `.zero` missing or not, `.git` a directory, the config's content. */
function look(root: string): () => string {
  return () => `${inspect(toBytes(join(root, '.zero'))).kind} ${inspect(toBytes(join(root, '.git'))).kind} ${readSmall(toBytes(join(root, '.git', 'config')), 1 << 20)?.toString() ?? 'none'}`;
}

/** Three calls: the set is made, the look kept, then given again. */
function warm(asked: LookAsked, root: string): void {
  forgetKeptLooks();
  assert.is(lookKept(asked, look(root)).quiet, undefined, 'the first look made the set: not kept');
  const second = lookKept(asked, look(root));
  assert.ok(second.quiet !== undefined, 'the second look, made after the set, is kept');
  second.quiet?.release();
  const reused = guardMemoCounts.reused;
  const third = lookKept(asked, look(root));
  assert.is(guardMemoCounts.reused, reused + 1, 'the third is the kept one');
  assert.ok(third.quiet?.quiet() === true);
  third.quiet?.release();
}

/** The next call looks again and gives what a look gives now. */
function looksAgain(asked: LookAsked, root: string, what: string): void {
  const reused = guardMemoCounts.reused;
  const next = lookKept(asked, look(root));
  assert.is(guardMemoCounts.reused, reused, `${what}: looked again`);
  assert.is(next.value, look(root)(), `${what}: the answer of a look now`);
  next.quiet?.release();
}

linuxTest('an entry made where the look found none: looked at again', async () => {
  const { t, root, asked } = await guardRoot();
  try {
    warm(asked, root);
    mkdirSync(join(root, '.zero'));
    looksAgain(asked, root, '.zero made');
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

linuxTest('a file the look read written in place (no directory event): looked at again', async () => {
  const { t, root, asked } = await guardRoot();
  try {
    warm(asked, root);
    appendFileSync(join(root, '.git', 'config'), '\tfsmonitor = x\n');
    looksAgain(asked, root, 'config appended to');
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

linuxTest('a directory the look found removed, or one above it renamed: looked at again', async () => {
  const { t, root, asked } = await guardRoot();
  try {
    warm(asked, root);
    rmSync(join(root, '.git'), { recursive: true });
    looksAgain(asked, root, '.git removed');
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, '.git', 'config'), '[core]\n');
    await settle();
    warm(asked, root);
    renameSync(t.ws, `${t.ws}-away`);
    mkdirSync(root, { recursive: true });
    looksAgain(asked, root, 'workspace renamed');
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

linuxTest('a kept look is given to one root set only; a file changed in the last two seconds is never kept', async () => {
  const { t, root, asked } = await guardRoot();
  try {
    warm(asked, root);
    const other: WritableRoot = { root: join(t.ws, 'other'), readOnlySubpaths: [], protectedNames: ['.zero'] };
    mkdirSync(other.root);
    const reused = guardMemoCounts.reused;
    lookKept({ writeRoots: [other], user: [other] }, look(other.root)).quiet?.release();
    assert.is(guardMemoCounts.reused, reused, 'another root set looks');
    writeFileSync(join(root, '.git', 'config'), '[core]\n\tbare = false\n');
    forgetKeptLooks();
    for (let i = 0; i < 8; i++) assert.is(lookKept(asked, look(root)).quiet, undefined, 'a config changed just now is not kept');
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

linuxTest('frozen roots given again are the same roots; a root in the middle or its protected names changed is looked at again', async () => {
  const { t, root } = await guardRoot();
  try {
    const roots = ['a', 'b', 'c'].map((name) => join(t.ws, name));
    for (const r of roots) mkdirSync(r);
    const rootOf = (path: string, names = ['.zero']): WritableRoot => ({ root: path, readOnlySubpaths: [], protectedNames: names });
    const list = deepFreeze([rootOf(root), ...roots.map((r) => rootOf(r))]);
    const asked: LookAsked = { writeRoots: list, user: list.filter(() => true) };
    warm(asked, root);
    // The plan memo's frozen roots again, in a new filtered array: given again.
    let reused = guardMemoCounts.reused;
    lookKept({ writeRoots: list, user: list.filter(() => true) }, look(root)).quiet?.release();
    assert.is(guardMemoCounts.reused, reused + 1, 'the same frozen roots: kept');
    // The same first and last root (the key), another root between: looked at again.
    mkdirSync(join(t.ws, 'd'));
    const middle = deepFreeze([rootOf(root), rootOf(roots[0] as string), rootOf(join(t.ws, 'd')), rootOf(roots[2] as string)]);
    warm(asked, root);
    reused = guardMemoCounts.reused;
    lookKept({ writeRoots: middle, user: middle.filter(() => true) }, look(root)).quiet?.release();
    assert.is(guardMemoCounts.reused, reused, 'another root in the middle: looked at again');
    // The same frozen array of write roots, one root's protected names changed (another frozen root): looked at again.
    warm(asked, root);
    reused = guardMemoCounts.reused;
    const names = list.map((w, i) => (i === 2 ? deepFreeze(rootOf(w.root, ['.zero', '.other'])) : w));
    lookKept({ writeRoots: list, user: names }, look(root)).quiet?.release();
    assert.is(guardMemoCounts.reused, reused, 'protected names changed: looked at again');
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

// More root sets in turn than the memo keeps (16): least recently used first, each would drop the
// look of the next to come before any run was given it, and no look would ever be given again.
// A key whose look went unused backs off and does not take the room of looks in use.
linuxTest('20 root sets in turn: most looks are given again, each the answer of a look now', async () => {
  const t = makeTree();
  forgetKeptLooks();
  try {
    const roots = Array.from({ length: 20 }, (_, i) => {
      const root = join(t.ws, `pkg${i}`);
      mkdirSync(join(root, '.git'), { recursive: true });
      writeFileSync(join(root, '.git', 'config'), `[core]\n# ${i}\n`);
      const w: WritableRoot = { root, readOnlySubpaths: [], protectedNames: ['.zero'] };
      return { root, asked: { writeRoots: [w], user: [w] } };
    });
    await settle();
    let reused = 0;
    for (let round = 0; round < 12; round++) {
      const before = guardMemoCounts.reused;
      for (const { root, asked } of roots) {
        const got = lookKept(asked, look(root));
        assert.is(got.value, look(root)(), `round ${round}: ${root}`);
        got.quiet?.release();
      }
      reused = guardMemoCounts.reused - before;
    }
    assert.ok(reused >= 12, `${reused} of 20 looks given again in the last round`);
  } finally {
    forgetKeptLooks();
    t.cleanup();
  }
});

test.run();
