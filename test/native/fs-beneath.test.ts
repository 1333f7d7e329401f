// The host-side descriptor walk (beneath.ts over the addon) survives any tree shape a sandboxed
// command can leave, never follows a link and never leaves the tree it started from: a directory
// nested beyond PATH_MAX, 100k entries, names with newlines or invalid UTF-8, symlink loops,
// links to outside directories, unreadable directories, FIFOs.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { inspect, inspectMany, listDir, Lookahead, makeEntry, readSmall, removeEntry, removeEntryAsync, toBytes } from '../../lib/sandbox/beneath.js';
import { makeTree } from '../helpers/sandbox.js';

/** A directory chain of `depth` levels under `dir`, built with relative steps (past PATH_MAX). */
function deepChain(dir: string, depth: number): void {
  execFileSync('python3', ['-c', `
import os, sys
os.chdir(sys.argv[1])
for _ in range(int(sys.argv[2])):
    os.mkdir('dddddddd'); os.chdir('dddddddd')
open('leaf', 'w').write('x')
os.symlink('/', 'root-link')
`, dir, String(depth)]);
}

test('a tree deeper than PATH_MAX is removed whole, without throwing', () => {
  const t = makeTree();
  try {
    const top = join(t.ws, 'deep');
    mkdirSync(top);
    deepChain(top, 1200); // 1200 * 9 bytes: over twice PATH_MAX
    assert.ok(removeEntry(toBytes(top)));
    assert.not.ok(existsSync(top));
  } finally {
    t.cleanup();
  }
});

// The removal the caller's thread does not wait for (pruned runtime caches): the same walk on a
// thread of the addon's own, through a tree a command could leave.
test('removeEntryAsync removes a tree deeper than PATH_MAX with links out and a loop, following none', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'keep'), 'keep');
    const top = join(t.ws, 'deep');
    mkdirSync(top);
    symlinkSync(t.outside, join(top, 'out'));
    symlinkSync('loop', join(top, 'loop'));
    deepChain(top, 1200);
    const removing = removeEntryAsync(toBytes(top));
    assert.instance(removing, Promise);
    assert.ok(await removing);
    assert.not.ok(existsSync(top));
    assert.equal(readdirSync(t.outside), ['keep']);
    assert.ok(await removeEntryAsync(toBytes(top)), 'nothing there: nothing left');
  } finally {
    t.cleanup();
  }
});

test('links inside the tree are removed, never followed: the outside stays, loops end', () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'keep'), 'keep');
    const top = join(t.ws, 'tree');
    mkdirSync(join(top, 'a', 'b'), { recursive: true });
    symlinkSync(t.outside, join(top, 'a', 'out'));
    symlinkSync(t.outside, join(top, 'a', 'b', 'out-dir'));
    symlinkSync('loop', join(top, 'loop'));
    symlinkSync('..', join(top, 'a', 'b', 'up'));
    execFileSync('mkfifo', [join(top, 'fifo')]);
    writeFileSync(join(top, 'new\nline'), '');
    writeFileSync(Buffer.concat([Buffer.from(`${top}/`), Buffer.from([0xff, 0xfe])]), '');
    mkdirSync(join(top, 'locked', 'in'), { recursive: true });
    writeFileSync(join(top, 'locked', 'in', 'f'), '');
    chmodSync(join(top, 'locked', 'in'), 0o000);
    chmodSync(join(top, 'locked'), 0o000);
    assert.ok(removeEntry(toBytes(top)));
    assert.not.ok(existsSync(top));
    assert.equal(readdirSync(t.outside), ['keep']);
  } finally {
    t.cleanup();
  }
});

test('a path through a symlink is not walked: reads, lists and removals stop at the link', () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'secret'), 'secret');
    symlinkSync(t.outside, join(t.ws, 'link'));
    const through = toBytes(join(t.ws, 'link', 'secret'));
    assert.is(inspect(through).kind, 'error');
    assert.is(readSmall(through, 100), undefined);
    assert.is(listDir(toBytes(join(t.ws, 'link')), 10), undefined);
    assert.not.ok(removeEntry(through));
    assert.ok(existsSync(join(t.outside, 'secret')));
    assert.is(inspect(toBytes(join(t.ws, 'link'))).kind, 'link');
    // A FIFO is never opened for reading (it would block).
    execFileSync('mkfifo', [join(t.ws, 'fifo')]);
    assert.is(readSmall(toBytes(join(t.ws, 'fifo')), 100), undefined);
    assert.is(inspect(toBytes(join(t.ws, 'fifo'))).kind, 'other');
  } finally {
    t.cleanup();
  }
});

test('a batched look answers as the looks one by one: links stop it, a file on the way is an error', () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'secret'), 'secret');
    symlinkSync(t.outside, join(t.ws, 'link'));
    mkdirSync(join(t.ws, 'dir', 'sub'), { recursive: true });
    writeFileSync(join(t.ws, 'dir', 'file'), 'x');
    execFileSync('mkfifo', [join(t.ws, 'dir', 'fifo')]);
    writeFileSync(Buffer.concat([Buffer.from(`${t.ws}/dir/`), Buffer.from([0xff])]), '');
    const paths = [
      'link', 'link/secret', 'dir', 'dir/sub', 'dir/file', 'dir/file/below', 'dir/fifo', 'dir/missing', 'missing/a', 'missing/b',
    ].map((rel) => toBytes(join(t.ws, rel)));
    // A dot-dot component is refused (join would resolve it); a name that is not UTF-8 is a name.
    paths.push(`${toBytes(join(t.ws, 'dir', 'sub'))}/..`, `${toBytes(`${t.ws}/dir`)}/\xff`, '/', toBytes(t.ws));
    const many = inspectMany(paths);
    assert.equal(many.map((info) => info.kind), ['link', 'error', 'dir', 'dir', 'file', 'error', 'other', 'missing', 'missing', 'missing', 'error', 'file', 'error', 'dir']);
    assert.equal(many, paths.map(inspect));
    assert.equal(inspectMany([]), []);
  } finally {
    t.cleanup();
  }
});

test('a batched look over many directories answers as the looks one by one, in any order and at any depth', () => {
  const t = makeTree();
  try {
    // Siblings sharing ancestors, a chain deeper than the directories a pass holds open, links and
    // a file on the way at several depths, missing directories, FIFOs, names that sort around '/'
    // ("a!x", "a.x" and "a0" next to "a/x"), UTF-8 and invalid UTF-8 names.
    const deep = Array.from({ length: 70 }, (_, i) => `d${i % 7}`).join('/');
    mkdirSync(join(t.ws, deep), { recursive: true });
    writeFileSync(join(t.ws, deep, 'leaf'), 'x');
    symlinkSync(t.outside, join(t.ws, 'd0', 'd1', 'd2', 'link'));
    writeFileSync(join(t.outside, 'secret'), 's');
    for (const name of ['a', 'a!x', 'a.x', 'a0', 'café', 'p1', 'p2']) mkdirSync(join(t.ws, name, 'x', 'y'), { recursive: true });
    writeFileSync(join(t.ws, 'a', 'x', 'file'), 'x');
    execFileSync('mkfifo', [join(t.ws, 'a', 'x', 'fifo')]);
    symlinkSync(join(t.ws, 'a'), join(t.ws, 'p2', 'up'));
    const bad = toBytes(`${t.ws}/p1/`) + '\xfe\xff';
    mkdirSync(Buffer.from(`${bad}/in`, 'latin1'), { recursive: true });
    const rels = [
      'a/x', 'a!x/x', 'a.x/x/y', 'a0/x', 'a/x/y', 'a/x/file', 'a/x/file/below', 'a/x/fifo', 'a/x/fifo/below', 'a/missing/x', 'a/missing/y',
      'café/x/y', 'café/x/missing', 'p2/up/x', 'p2/up', 'p2/x/y', 'd0/d1/d2/link', 'd0/d1/d2/link/secret', 'd0/d1/d2/d3', 'missing/a/b',
      `${deep}/leaf`, `${deep}/missing`, `${deep.split('/').slice(0, 66).join('/')}/d3`, `${deep.split('/').slice(0, 40).join('/')}/link`, 'd0/d1',
    ];
    const paths = rels.map((rel) => toBytes(join(t.ws, rel)));
    // Every directory of the deep chain, each the parent of the next: more levels than are held.
    const levels = deep.split('/');
    const chain = levels.map((_, i) => toBytes(join(t.ws, ...levels.slice(0, i + 1))));
    paths.push(`${bad}/in`, `${bad}/missing`, bad, `${toBytes(t.ws)}//a`, `${toBytes(t.ws)}/./a`);
    // Each order gives the answers one by one: the batch's walk does not depend on what came before.
    const one = paths.map(inspect);
    assert.equal(inspectMany([...paths, ...chain]), [...one, ...chain.map(inspect)]);
    assert.ok(chain.every((path) => inspect(path).kind === 'dir'));
    assert.equal(inspectMany(paths), one);
    assert.equal(inspectMany([...paths].reverse()), [...one].reverse());
    const shuffled = paths.map((_, i) => (i * 7) % paths.length);
    assert.equal(inspectMany(shuffled.map((i) => paths[i] as string)), shuffled.map((i) => one[i]));
    const kinds = Object.fromEntries(rels.map((rel, i) => [rel, one[i]?.kind]));
    assert.equal([kinds['a/x'], kinds['a!x/x'], kinds['a/x/fifo'], kinds['a/x/fifo/below'], kinds['a/missing/x'], kinds['café/x/y']], ['dir', 'dir', 'other', 'error', 'missing', 'dir']);
    assert.equal([kinds['p2/up'], kinds['p2/up/x'], kinds['d0/d1/d2/link/secret'], kinds[`${deep}/leaf`], kinds[`${deep}/missing`]], ['link', 'error', 'error', 'file', 'missing']);
    assert.equal(one.slice(rels.length).map((info) => info.kind), ['dir', 'missing', 'dir', 'error', 'error']);
  } finally {
    t.cleanup();
  }
});

test('a lookahead answers each path once from its batch, then afresh; after drop, always afresh', () => {
  const t = makeTree();
  try {
    const a = toBytes(join(t.ws, 'a'));
    const b = toBytes(join(t.ws, 'b'));
    writeFileSync(a, 'x');
    writeFileSync(b, 'x');
    const ahead = new Lookahead([a, b, a]);
    rmSync(join(t.ws, 'a'));
    rmSync(join(t.ws, 'b'));
    assert.is(ahead.take(a).kind, 'file', 'the batch, taken before the removal');
    assert.is(ahead.take(a).kind, 'missing', 'asked again: looked at afresh');
    ahead.drop();
    assert.is(ahead.take(b).kind, 'missing', 'dropped: looked at afresh');
  } finally {
    t.cleanup();
  }
});

test('directories and links are made only where no link is on the way, and never over a link', () => {
  const t = makeTree();
  try {
    symlinkSync(t.outside, join(t.ws, 'link'));
    assert.not.ok(makeEntry(toBytes(join(t.ws, 'link', 'dir')), 0o755));
    assert.not.ok(makeEntry(toBytes(join(t.ws, 'link', 'entry')), 0o777, '/bin/sh'));
    assert.not.ok(makeEntry(toBytes(join(t.ws, 'link')), 0o755), 'a link to a directory is not a directory');
    assert.equal(readdirSync(t.outside), [], 'nothing made where the link points');
    assert.ok(makeEntry(toBytes(join(t.ws, 'dir')), 0o755));
    assert.ok(makeEntry(toBytes(join(t.ws, 'dir')), 0o755), 'a directory already there will do');
    assert.ok(makeEntry(toBytes(join(t.ws, 'dir', 'entry')), 0o777, '../x'));
    assert.is(readlinkSync(join(t.ws, 'dir', 'entry')), '../x');
    assert.not.ok(makeEntry(toBytes(join(t.ws, 'dir', 'entry')), 0o777, '../y'), 'nothing may be where a link is made');
  } finally {
    t.cleanup();
  }
});

test('100k entries are listed and removed', () => {
  const t = makeTree();
  try {
    const top = join(t.ws, 'many');
    execFileSync('python3', ['-c', `
import os, sys
os.mkdir(sys.argv[1])
for i in range(100):
    d = os.path.join(sys.argv[1], 'd%d' % i); os.mkdir(d)
    for j in range(1000): open(os.path.join(d, 'f%d' % j), 'w').close()
`, top]);
    assert.is(listDir(toBytes(join(top, 'd0')), 100_000)?.length, 1000);
    assert.ok(removeEntry(toBytes(top)));
    assert.not.ok(existsSync(top));
  } finally {
    t.cleanup();
  }
});

test.run();
