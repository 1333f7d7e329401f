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

test('answers kept across passes are the walk\'s answers for what each pass added', () => {
  // Passes of later runs add the same scans and ask about the same roots, and are given the answers
  // again; a pass that added other git dirs under the same roots, or one more root, or that asks
  // with other names, is not given those answers.
  const all = pathsUpTo(2);
  const setups: Array<Array<{ root: string; gitDirs: string[] }>> = [
    [{ root: '/a', gitDirs: [] }],
    [{ root: '/a', gitDirs: ['/a/dist'] }],
    [{ root: '/a', gitDirs: ['/a/dist'] }, { root: '/dist', gitDirs: [] }],
    [{ root: '/a', gitDirs: [] }, { root: '/dist', gitDirs: ['/dist/a'] }],
    [{ root: '/a/dist', gitDirs: [] }, { root: '/a', gitDirs: [] }],
    [{ root: '/', gitDirs: ['/a', '/dist'] }],
    [{ root: '/', gitDirs: ['/a\u0000/dist'] }],
  ];
  for (let pass = 0; pass < 3; pass++) {
    for (const adds of setups) {
      const scanned = new ScannedRoots();
      const roots = new Set<string>();
      const notEntered = new Set<string>();
      for (const { root, gitDirs } of adds) {
        // Asked between two adds too: what was added by then decides.
        for (const path of all) assert.is(scanned.covers(path), coversByDefinition(roots, notEntered, path), `pass ${pass}, ${JSON.stringify(adds)}: ${path} before ${root}`);
        scanned.add(root, gitDirs);
        roots.add(root);
        for (const dir of gitDirs) notEntered.add(dir);
      }
      for (const path of all) {
        const walked = coversByDefinition(roots, notEntered, path);
        for (const skip of [['node_modules'], ['dist'], ['dist', 'a'], []]) {
          const named = coversByDefinition(roots, notEntered, path, skip);
          assert.is(scanned.coverage(path, skip), named ? 'named' : walked ? 'walked' : 'no', `pass ${pass}, ${JSON.stringify(adds)}: ${path} skipping ${skip.join(',')}`);
        }
      }
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
