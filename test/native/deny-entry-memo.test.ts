// The kinds of a plan's deny entries kept across runs (deny-entry-memo.ts): given again only while
// the entry's directory has the stamp it had when the entry was looked at. Every change between
// two runs (an entry swapped for a link, removed, created, turned into a directory, its directory
// replaced or swapped for a link) is seen by the next one, which gives what a fresh look gives;
// a directory changed too recently to be trusted keeps nothing.
import { mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { prepareLinux } from '../../lib/backend/linux/start.js';
import { denyEntryKinds, denyEntryMemoClock, denyEntryMemoCounts } from '../../lib/sandbox/deny-entry-memo.js';
import { makeTree, sh } from '../helpers/sandbox.js';
import { linuxSandboxTestsEnabled } from '../helpers/probe.js';

// process.platform: the stamps vouch for a directory's entries on Linux only (elsewhere every entry is looked at).
const LINUX = process.platform === 'linux';
const realNow = denyEntryMemoClock.now;
/** A clock a minute ahead: the stamps this test just made count as settled. */
const ahead = (): bigint => BigInt(Date.now() + 60_000) * 1_000_000n;
const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

/** denyEntryKinds of `paths`, and how many of them the memo answered. */
function kinds(paths: string[]): { kinds: ReturnType<typeof denyEntryKinds>; answered: number } {
  const before = denyEntryMemoCounts.answered;
  const out = denyEntryKinds(paths);
  return { kinds: out, answered: denyEntryMemoCounts.answered - before };
}

/** The plan's deny lists for these options, as a run would resolve them (or the error's code and message). */
function planOf(ws: string, denyRead: string[], denyWrite: string[] = []): { denyRead: string[]; denyWrite: string[] } | string {
  let prepared;
  try {
    prepared = prepareLinux(['/bin/true'], { workspace: ws, denyRead, denyWrite });
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
  prepared.release();
  return { denyRead: prepared.plan.denyRead.filter((path) => path.startsWith(ws)), denyWrite: prepared.plan.denyWrite };
}

test('deny entries: kinds kept while their directories are unchanged, every change between calls seen by the next', async () => {
  const t = makeTree('zs-denymemo-');
  denyEntryMemoClock.now = ahead;
  try {
    const ws = realpathSync(t.ws);
    mkdirSync(join(ws, 'a'));
    mkdirSync(join(ws, 'b'));
    mkdirSync(join(ws, 'c'));
    writeFileSync(join(ws, 'a', 'secret'), 'x');
    writeFileSync(join(ws, 'b', 'secret'), 'x');
    mkdirSync(join(ws, 'c', 'keys'));
    writeFileSync(join(t.outside, 'elsewhere'), 'x');
    const paths = [join(ws, 'a', 'secret'), join(ws, 'b', 'secret'), join(ws, 'c', 'keys'), join(ws, 'a', 'absent')];
    const first = kinds(paths);
    assert.equal(first.kinds, ['nondir', 'nondir', 'dir', undefined]);
    assert.is(first.answered, 0, 'the first call looks');
    const second = kinds(paths);
    assert.equal(second.kinds, first.kinds);
    assert.is(second.answered, LINUX ? 3 : 0, 'the second is answered, but for the missing entry');

    await tick();
    // a/secret swapped for a link to a file outside: the link is seen.
    rmSync(join(ws, 'a', 'secret'));
    symlinkSync(join(t.outside, 'elsewhere'), join(ws, 'a', 'secret'));
    const swapped = kinds(paths);
    assert.equal(swapped.kinds, [undefined, 'nondir', 'dir', undefined], 'a link is no entry of its own real path');
    assert.is(swapped.answered, LINUX ? 2 : 0, 'b and c are unchanged');

    await tick();
    // b/secret removed; the missing a/absent created; c/keys turned into a file.
    rmSync(join(ws, 'b', 'secret'));
    writeFileSync(join(ws, 'a', 'absent'), 'x');
    rmSync(join(ws, 'c', 'keys'), { recursive: true });
    writeFileSync(join(ws, 'c', 'keys'), 'x');
    assert.equal(kinds(paths).kinds, [undefined, undefined, 'nondir', 'nondir']);
    assert.equal(kinds(paths).kinds, [undefined, undefined, 'nondir', 'nondir'], 'and stays so');

    await tick();
    // The directory c replaced by another holding the same name (another inode), then by a link to it.
    renameSync(join(ws, 'c'), join(t.outside, 'c-old'));
    mkdirSync(join(ws, 'c'));
    mkdirSync(join(ws, 'c', 'keys'));
    assert.equal(kinds(paths).kinds[2], 'dir', 'a new directory c: its keys looked at again');
    await tick();
    rmSync(join(ws, 'c'), { recursive: true });
    symlinkSync(join(t.outside, 'c-old'), join(ws, 'c'));
    const linked = kinds(paths);
    assert.is(linked.kinds[2], undefined, 'c is a link now: its entry is reached through it');
  } finally {
    denyEntryMemoClock.now = realNow;
    t.cleanup();
  }
});

test('deny entries: a directory changed within the racy window keeps nothing', () => {
  const t = makeTree('zs-denymemo-');
  try {
    const ws = realpathSync(t.ws);
    mkdirSync(join(ws, 'fresh'));
    writeFileSync(join(ws, 'fresh', 'secret'), 'x');
    // The real clock: the directory was made just now, so its stamp may not show a change yet.
    for (let i = 0; i < 4; i++) assert.is(kinds([join(ws, 'fresh', 'secret')]).answered, 0, `call ${i}`);
  } finally {
    t.cleanup();
  }
});

test('deny entries: the plan resolves a kept entry as a fresh look would, after a swap for a link, a removal and a re-creation', async () => {
  if (!LINUX) return;
  const t = makeTree('zs-denymemo-plan-');
  denyEntryMemoClock.now = ahead;
  try {
    const ws = realpathSync(t.ws);
    const outside = realpathSync(t.outside);
    mkdirSync(join(ws, 'pkg'));
    const secret = join(ws, 'pkg', 'secret.env');
    const locked = join(ws, 'pkg', 'locked.txt');
    writeFileSync(secret, 'x');
    writeFileSync(locked, 'x');
    writeFileSync(join(outside, 'target.env'), 'x');
    const expected = { denyRead: [secret], denyWrite: [locked] };
    assert.equal(planOf(ws, [secret], [locked]), expected);
    const answered = denyEntryMemoCounts.answered;
    assert.equal(planOf(ws, [secret], [locked]), expected);
    assert.ok(denyEntryMemoCounts.answered > answered, 'answered from the memo');

    await tick();
    rmSync(secret);
    symlinkSync(join(outside, 'target.env'), secret);
    assert.equal(planOf(ws, [secret], [locked]), { denyRead: [], denyWrite: [locked] }, 'the link resolves to its target outside the workspace');
    const viaLink = prepareLinux(['/bin/true'], { workspace: ws, denyRead: [secret] });
    viaLink.release();
    assert.ok(viaLink.plan.denyRead.includes(join(outside, 'target.env')), 'the target is what is denied');

    await tick();
    rmSync(secret);
    assert.match(planOf(ws, [secret], [locked]) as string, /^invalid_argument: denyRead .* does not exist/, 'removed: refused as a fresh look refuses it');

    await tick();
    mkdirSync(secret);
    assert.equal(planOf(ws, [secret], [locked]), expected, 'created again (a directory now)');
    assert.equal(planOf(ws, [secret], [locked]), expected);
  } finally {
    denyEntryMemoClock.now = realNow;
    t.cleanup();
  }
});

test('runs: a denyRead file replaced by a directory between two runs is masked as a directory in the next', async () => {
  if (!linuxSandboxTestsEnabled()) return;
  const t = makeTree('zs-denymemo-run-');
  denyEntryMemoClock.now = ahead;
  try {
    const secret = join(t.ws, 'pkg', 'secret');
    mkdirSync(join(t.ws, 'pkg'));
    writeFileSync(secret, 'file-secret');
    for (let i = 0; i < 2; i++) {
      const r = await sh(t, 'cat pkg/secret', { denyRead: [secret] });
      assert.not.match(r.stdout, /file-secret/, `run ${i}: the file is masked`);
    }
    await tick();
    rmSync(secret);
    mkdirSync(secret);
    writeFileSync(join(secret, 'inner'), 'dir-secret');
    const r = await sh(t, 'cat pkg/secret/inner; ls pkg/secret', { denyRead: [secret] });
    assert.not.match(r.stdout, /dir-secret/, 'the directory is masked');
    assert.not.match(r.stdout, /inner/, 'and cannot be listed');
  } finally {
    denyEntryMemoClock.now = realNow;
    t.cleanup();
  }
});

test.run();
