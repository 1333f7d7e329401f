// SPDX-License-Identifier: MIT
// HostFacts answers exactly as node:fs does (values, missing, errors) for every kind of path,
// looks each path up once, and never outlives the call it was made for.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { HostFacts, handOverFacts } from '../../lib/host-facts.js';
import { isCleanAbsolute } from '../../lib/path-within.js';

type Outcome = { kind: 'missing' } | { kind: 'value'; value: string } | { kind: 'error'; code: string | undefined };

function outcome(fn: () => unknown): Outcome {
  try {
    const value = fn();
    if (value === undefined) return { kind: 'missing' };
    if (typeof value === 'string') return { kind: 'value', value };
    const st = value as { ino: number; mode: number; size: number };
    return { kind: 'value', value: `${st.ino}/${st.mode}/${st.size}` };
  } catch (error) {
    return { kind: 'error', code: (error as NodeJS.ErrnoException).code };
  }
}

function buildTree(base: string): string[] {
  mkdirSync(join(base, 'dir', 'sub'), { recursive: true });
  writeFileSync(join(base, 'dir', 'file'), 'x');
  symlinkSync(join(base, 'dir'), join(base, 'dir-link'));
  symlinkSync(join(base, 'dir', 'file'), join(base, 'file-link'));
  symlinkSync(join(base, 'gone'), join(base, 'dangling'));
  symlinkSync('sub', join(base, 'dir', 'relative-link'));
  return [
    '/', base, join(base, 'dir'), join(base, 'dir', 'sub'), join(base, 'dir', 'file'),
    join(base, 'dir-link'), join(base, 'dir-link', 'sub'), join(base, 'dir-link', 'file'), join(base, 'file-link'),
    join(base, 'dangling'), join(base, 'dangling', 'x'), join(base, 'dir', 'relative-link'),
    join(base, 'missing'), join(base, 'missing', 'child'), join(base, 'missing', 'child', 'grandchild'),
    join(base, 'dir', 'file', 'through-a-file'), `${base}/dir-link/../dir/file`, `${base}//dir/./sub/`, `${base}/dir/sub/..`,
  ];
}

test('every answer equals the node:fs one, asked in any order, and asked twice', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-host-facts-')));
  try {
    const paths = buildTree(base);
    // Children first and parents first: derived answers must not depend on the order.
    for (const order of [paths, [...paths].reverse()]) {
      const facts = new HostFacts();
      for (const round of [1, 2]) {
        for (const path of order) {
          const where = `${path} (round ${round})`;
          assert.equal(outcome(() => facts.lstat(path)), outcome(() => lstatSync(path, { throwIfNoEntry: false })), `lstat ${where}`);
          assert.equal(outcome(() => facts.stat(path)), outcome(() => statSync(path, { throwIfNoEntry: false })), `stat ${where}`);
          assert.equal(outcome(() => facts.realpath(path)), outcome(() => realpathSync(path)), `realpath ${where}`);
        }
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('a path is looked up once per facts; new facts look again', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-host-facts-')));
  try {
    const path = join(base, '.git');
    const facts = new HostFacts();
    assert.is(facts.lstat(path), undefined);
    mkdirSync(path);
    assert.is(facts.lstat(path), undefined, 'within one call the first answer stands');
    assert.ok(new HostFacts().lstat(path)?.isDirectory(), 'the next call sees the new directory');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('with the listings of its directories noted, every answer still equals the node:fs one', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-host-facts-')));
  try {
    const paths = buildTree(base);
    const facts = new HostFacts();
    for (const dir of [base, join(base, 'dir'), join(base, 'dir', 'sub')]) facts.noteListing(dir, readdirSync(dir));
    for (const path of paths) {
      assert.equal(outcome(() => facts.lstat(path)), outcome(() => lstatSync(path, { throwIfNoEntry: false })), `lstat ${path}`);
      assert.equal(outcome(() => facts.stat(path)), outcome(() => statSync(path, { throwIfNoEntry: false })), `stat ${path}`);
      assert.equal(outcome(() => facts.realpath(path)), outcome(() => realpathSync(path)), `realpath ${path}`);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

// The listing stands for this call as the answers do: a name it lacks is missing with no look-up
// (shown here by a file made after the listing), on Linux, where that is what ENOENT means.
test('a name a noted listing lacks is missing without a look; a case-folded match or a non-ASCII listing looks', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-host-facts-')));
  const listedAbsent = process.platform === 'linux';
  try {
    for (const [listing, name, absent] of [
      [['a'], '.vscode', listedAbsent],
      [['.VSCode'], '.vscode', false],
      [['caf\u00e9'], '.claude', false],
      [['a'], 'caf\u00e9', false],
    ] as Array<[string[], string, boolean]>) {
      const dir = mkdtempSync(join(base, 'd-'));
      const facts = new HostFacts();
      facts.noteListing(dir, listing);
      writeFileSync(join(dir, name), 'made after the listing');
      assert.is(facts.listedIn(dir)?.mayHold(name) === false, absent, `listedIn: ${name} with listing ${JSON.stringify(listing)}`);
      const st = facts.lstat(join(dir, name));
      assert.is(st === undefined, absent, `${name} with listing ${JSON.stringify(listing)}`);
    }
    const dir = mkdtempSync(join(base, 'd-'));
    writeFileSync(join(dir, 'kept'), 'x');
    const facts = new HostFacts();
    facts.noteListing(dir, readdirSync(dir));
    assert.ok(facts.lstat(join(dir, 'kept'))?.isFile(), 'a listed name is looked up');
    assert.is(facts.listedIn(dir)?.size, process.platform === 'linux' ? 1 : undefined);
    assert.is(facts.listedIn(base), undefined, 'a directory not listed tells nothing');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('handed-over facts serve one spawn, and only within the same synchronous run', async () => {
  const facts = new HostFacts();
  const take = handOverFacts(facts);
  assert.is(take(), facts);
  assert.is.not(take(), facts, 'taken once');
  const later = handOverFacts(facts);
  await Promise.resolve();
  assert.is.not(later(), facts, 'a plan spawned after the run gets fresh facts');
});

test('clean absolute paths: exactly those with no empty, . or .. component and no trailing slash', () => {
  const reference = (path: string) =>
    path === '/' || (path.startsWith('/') && !path.endsWith('/') && path.slice(1).split('/').every((part) => part !== '' && part !== '.' && part !== '..'));
  const samples = [
    '/', '', 'a', 'a/b', '/a', '/a/b', '/a/', '//a', '/a//b', '/./a', '/a/.', '/a/./b', '/a/..', '/a/../b', '/..', '/.',
    '/a/.b', '/a/..b', '/a/b.', '/a/b..', '/.a', '/...', '/a/.../b', '/a/b/', '/tmp/zs-x/ws', '/.git/hooks', '/a.b/c..d/.e',
  ];
  for (const path of samples) assert.is(isCleanAbsolute(path), reference(path), JSON.stringify(path));
});

test.run();
