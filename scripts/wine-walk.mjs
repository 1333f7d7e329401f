#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Runs INSIDE a Windows node.exe (under Wine, from scripts/test-wine.mjs) with the MinGW-built
// addon named by ZERO_SANDBOX_BINDING: the host-side file verbs of lib/sandbox/beneath.ts go
// through the addon's handle-relative walk (native/windows/), on real files. The fixture directory
// (argv[2]) was made on the Linux side, because Wine 8 makes neither junctions
// (FSCTL_SET_REPARSE_POINT answers ERROR_NOT_SUPPORTED) nor Windows symlinks (CreateSymbolicLinkW
// reports success and makes nothing):
//   ws\tree\a\b\c.txt (b also holds a deeper tree), ws\tree\a\d.txt, ws\tree\inner -> ../../outside (a Unix symlink),
//   ws\ulink -> ../outside (a Unix symlink to a directory), ws\Case\.GIT\, ws\repo\.git\,
//   outside\secret.txt.
// Wine shows a Unix symlink to a directory as a reparse point in its parent's listing only (the
// handle it opens is the target's), which the walk also asks: so a link on the way is refused here
// as a junction is on Windows, but through the listing, not the handle's own attributes.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const lib = (rel) => import(pathToFileURL(join(root, 'dist', 'lib', rel)).href);
const base = process.argv[2];
const results = [];

function check(name, fn) {
  try {
    fn();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) });
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const { loadNative } = await lib('native/load.js');
const b = await lib('sandbox/beneath.js');
const p = (...parts) => b.toBytes(join(base, ...parts));
const secret = join(base, 'outside', 'secret.txt');
const outsideIntact = () => {
  expect(readFileSync(secret, 'utf8') === 'secret\n', 'outside\\secret.txt changed');
  expect(readdirSync(join(base, 'outside')).join(',') === 'secret.txt', `outside holds ${readdirSync(join(base, 'outside'))}`);
};

check('the addon offers the walk (beneath.ts uses it, not node:fs)', () => {
  const binding = loadNative();
  for (const verb of ['fsInspect', 'fsInspectMany', 'fsRead', 'fsList', 'fsRemove', 'fsReplace', 'fsMake']) {
    expect(typeof binding[verb] === 'function', `${verb} is missing`);
  }
});

check('a plain tree is inspected, read and listed', () => {
  const file = b.inspect(p('ws', 'tree', 'a', 'b', 'c.txt'));
  expect(file.kind === 'file' && /^\d+:\d+:4:-?\d+:-?\d+$/.test(file.stamp), `c.txt: ${JSON.stringify(file)}`);
  expect(b.inspect(p('ws', 'tree', 'a')).kind === 'dir', 'a is not a dir');
  expect(b.inspect(p('ws', 'tree', 'nope', 'x')).kind === 'missing', 'a path below a missing directory is not missing');
  expect(b.inspect(p('ws', 'tree', 'a', 'd.txt', 'x')).kind === 'error', 'a path below a file is not an error');
  expect(b.readSmall(p('ws', 'tree', 'a', 'b', 'c.txt'), 4)?.toString() === 'ccc\n', 'c.txt content');
  expect(b.readSmall(p('ws', 'tree', 'a', 'b', 'c.txt'), 3) === undefined, 'a file over max was read');
  expect(b.readSmall(p('ws', 'tree', 'a'), 100) === undefined, 'a directory was read');
  const list = b.listDir(p('ws', 'tree', 'a'), 100)?.sort();
  expect(JSON.stringify(list) === '[["b","dir"],["d.txt","file"]]', `a lists ${JSON.stringify(list)}`);
  expect(b.listDir(p('ws', 'tree', 'a'), 1)?.length === 1, 'listDir ignores max');
  const many = b.inspectMany([p('ws', 'tree', 'a', 'd.txt'), p('ws', 'tree', 'a', 'b'), p('ws', 'nope'), p('ws', 'tree', 'a', 'b', 'c.txt')]);
  const one = [p('ws', 'tree', 'a', 'd.txt'), p('ws', 'tree', 'a', 'b'), p('ws', 'nope'), p('ws', 'tree', 'a', 'b', 'c.txt')].map(b.inspect);
  expect(JSON.stringify(many) === JSON.stringify(one), `inspectMany ${JSON.stringify(many)} differs from inspect ${JSON.stringify(one)}`);
});

check('names are compared case-insensitively, as Windows opens them', () => {
  const lower = b.inspect(p('ws', 'tree', 'a', 'b', 'c.txt'));
  const upper = b.inspect(p('ws', 'TREE', 'A', 'B', 'C.TXT'));
  expect(upper.kind === 'file' && upper.stamp === lower.stamp, `C.TXT: ${JSON.stringify(upper)} vs ${JSON.stringify(lower)}`);
  const scan = b.scanRepositories(p('ws'), 1000, 100);
  const names = scan.worktrees.map((w) => b.fromBytes(w).slice(base.length + 1)).sort();
  expect(!scan.incomplete && JSON.stringify(names) === JSON.stringify(['ws\\Case', 'ws\\repo']), `scan found ${JSON.stringify(scan)}`);
});

check('a link on the way is refused by every verb, and nothing outside is touched', () => {
  expect(b.inspect(p('ws', 'ulink')).kind === 'link', `ulink: ${b.inspect(p('ws', 'ulink')).kind}`);
  expect(b.inspect(p('ws', 'ulink', 'secret.txt')).kind === 'error', 'inspect went through the link');
  expect(b.inspectMany([p('ws', 'ulink', 'secret.txt')])[0].kind === 'error', 'inspectMany went through the link');
  expect(b.readSmall(p('ws', 'ulink', 'secret.txt'), 100) === undefined, 'readSmall went through the link');
  expect(b.listDir(p('ws', 'ulink'), 100) === undefined, 'listDir listed through the link');
  expect(!b.removeEntry(p('ws', 'ulink', 'secret.txt')), 'removeEntry went through the link');
  expect(!b.replaceFile(p('ws', 'ulink', 'secret.txt'), Buffer.from('owned')), 'replaceFile went through the link');
  expect(!b.makeEntry(p('ws', 'ulink', 'made'), 0o755), 'makeEntry went through the link');
  expect(!b.removeEntry(p('ws', 'tree', 'inner', 'secret.txt')), 'removeEntry went through the nested link');
  outsideIntact();
});

check('a plain tree is replaced, made and removed', () => {
  expect(b.replaceFile(p('ws', 'tree', 'a', 'd.txt'), Buffer.from('new')), 'replace d.txt');
  expect(readFileSync(join(base, 'ws', 'tree', 'a', 'd.txt'), 'utf8') === 'new', 'd.txt not replaced');
  expect(b.replaceFile(p('ws', 'tree', 'a', 'b'), Buffer.from('was a dir')), 'replace the directory b (a tree four levels deep)');
  expect(b.inspect(p('ws', 'tree', 'a', 'b')).kind === 'file', 'b is not a file now');
  expect(b.makeEntry(p('ws', 'made'), 0o755) && b.makeEntry(p('ws', 'made'), 0o755), 'makeEntry of a directory (twice)');
  expect(b.inspect(p('ws', 'made')).kind === 'dir', 'made is not a dir');
  expect(!b.makeEntry(p('ws', 'tree', 'a', 'd.txt'), 0o755), 'makeEntry over a file');
  expect(b.removeEntry(p('ws', 'tree', 'a')), 'removeEntry of the tree a');
  expect(b.inspect(p('ws', 'tree', 'a')).kind === 'missing', 'the tree a is still there');
  expect(b.removeEntry(p('ws', 'nope')), 'removing a missing entry');
  outsideIntact();
});

// Windows deletes a junction through a handle opened as itself; Wine cannot delete a Unix symlink
// to a directory through a handle (it opens the target, and its rmdir of the link's name fails),
// so under Wine these removals fail: what holds is that they never reach the target.
check('removing a tree with a link in it, or the link itself, leaves the target alone', () => {
  b.removeEntry(p('ws', 'tree'));
  outsideIntact();
  b.removeEntry(p('ws', 'ulink'));
  outsideIntact();
  expect(b.inspect(p('ws', 'ulink')).kind !== 'dir', 'the link became a directory');
});

process.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
