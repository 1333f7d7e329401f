// Which write roots a scan of an outer one already walked (ScannedRoots, scanned-roots.ts), asked for a
// thousand nested roots per run before it and after it, and the path helpers both passes use: held
// to the definitions they replace (dirname, basename and join, names folded as a case-folding
// volume would), on every kind of name a byte-string path can hold.
import { basename, dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { childOf, cleanPosix, parentOf, ScannedRoots } from '../../lib/sandbox/scanned-roots.js';

/** The walk by its definition: up from `root` through dirname until a scanned root, as before. */
function coversByDefinition(roots: Set<string>, notEntered: Set<string>, root: string, skip?: readonly string[]): boolean {
  for (let dir = root; dirname(dir) !== dir; ) {
    const name = basename(dir).toLowerCase();
    if (name === '.git' || notEntered.has(dir)) return false;
    if (skip?.some((s) => s.toLowerCase() === name) === true) return false;
    dir = dirname(dir);
    if (roots.has(dir)) return true;
  }
  return false;
}

const NAMES = ['i\u0307b', '\u0130B', 'a', 'dist', '.git', '.GIT', '.Git', 'node_modules', 'Node_Modules', 'NODE_MODULES', 'node_module', '.gi', 'x.git', '\u00c4b', '\u00e9', 'G\u00cfT'];

function pathsUpTo(depth: number): string[] {
  const out = ['/'];
  let level = [''];
  for (let d = 0; d < depth; d++) {
    level = level.flatMap((prefix) => NAMES.map((name) => `${prefix}/${name}`));
    out.push(...level);
  }
  return out;
}

test('coverage answers as covers(root) and covers(root, skip) by their definition', () => {
  const all = pathsUpTo(3);
  const setups: Array<{ roots: string[]; gitDirs: string[] }> = [
    { roots: ['/'], gitDirs: [] },
    { roots: ['/a'], gitDirs: ['/a/dist'] },
    { roots: ['/a', '/dist/a'], gitDirs: ['/a/x.git', '/dist/a/\u00e9'] },
    { roots: ['/node_modules', '/\u00c4b/.gi'], gitDirs: ['/node_modules/a'] },
    // A scanned root that is also a git dir (only directories below it count), and one nested in it.
    { roots: ['/a', '/a/dist/a'], gitDirs: ['/a', '/a/dist'] },
    // Not clean ones (never a directory a clean path passes) beside clean ones.
    { roots: ['/a/', '', '/dist', '//a'], gitDirs: ['/dist/', '/', '', '/dist//a', '/dist/.git/x'] },
    // More than a few scanned roots and git dirs: the walk up each path's levels.
    { roots: ['/a', ...NAMES.map((name) => `/dist/${name}`)], gitDirs: NAMES.map((name) => `/a/${name}/a`) },
  ];
  for (const { roots, gitDirs } of setups) {
    const scanned = new ScannedRoots();
    scanned.add(roots[0] as string, gitDirs);
    for (const root of roots.slice(1)) scanned.add(root, []);
    const rootSet = new Set(roots);
    const notEntered = new Set(gitDirs);
    for (const path of all) {
      const walked = coversByDefinition(rootSet, notEntered, path);
      const named = coversByDefinition(rootSet, notEntered, path, ['node_modules']);
      assert.is(scanned.coverage(path, ['node_modules']), named ? 'named' : walked ? 'walked' : 'no', `${roots.join(',')}: ${path}`);
      assert.is(scanned.covers(path), walked, path);
      assert.is(scanned.covers(path, ['node_modules']), named, path);
      assert.is(scanned.coverage(path, []), walked ? 'named' : 'no', path);
      // A name to skip outside ASCII (its fold may be longer than the name): as defined too.
      const folded = coversByDefinition(rootSet, notEntered, path, ['\u0130b']);
      assert.is(scanned.coverage(path, ['\u0130b']), folded ? 'named' : walked ? 'walked' : 'no', `${path} (non-ASCII skip)`);
    }
  }
});

test('childOf and parentOf give what join and dirname give', () => {
  assert.is(cleanPosix('/a/b'), process.platform !== 'win32');
  const paths = [...pathsUpTo(2), '/a/', '//a', '/a/./b', '/a/../b', 'a/b', '', '.', '/a//b'];
  for (const path of paths) {
    assert.is(parentOf(path), dirname(path), path);
    for (const name of ['.git', '.zero', '\u00e9', '', '.', '..', 'a/b', '../c']) {
      assert.is(childOf(path, name), join(path, name), `${path} ${name}`);
      // A walk that knows its root is clean says so: the same answers below it.
      if (cleanPosix(path)) assert.is(childOf(path, name, true), join(path, name), `${path} ${name} (clean)`);
    }
    if (cleanPosix(path)) assert.is(parentOf(path, true), dirname(path), `${path} (clean)`);
  }
});

test.run();
