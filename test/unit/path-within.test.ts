// SPDX-License-Identifier: MIT
// DirectorySet answers exactly what isWithin over every directory of the set answers (POSIX and
// Windows separators, roots, siblings sharing a prefix), whatever the number of directories.
import { sep } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { directorySetOf, DirectorySet, enclosingPaths, hasPrefix, isWithin, rootsOverlap } from '../../lib/path-within.js';

const POSIX_DIRS = ['/', '/a', '/a/b', '/ab', '/a/b/c/d', '/x/y', '/x/yz'];
const POSIX_PATHS = ['/', '/a', '/a/', '/a/b', '/a/bc', '/ab', '/abc', '/a/b/c', '/a/b/c/d/e', '/x', '/x/y', '/x/y/z', '/x/yz', '/x/y z', '/q/r/s', ''];
const WINDOWS_DIRS = ['C:\\', 'C:\\Users\\me', 'D:\\work', 'D:\\work\\sub'];
const WINDOWS_PATHS = ['C:\\', 'C:\\Users', 'C:\\Users\\me', 'C:\\Users\\me\\x', 'C:\\Users\\mel', 'D:\\', 'D:\\work', 'D:\\workspace', 'D:\\work\\sub\\deep', 'E:\\x'];

function check(dirs: string[], paths: string[], separator: string): void {
  // Every subset of the directories (they are few): the set's answers against isWithin's.
  for (let mask = 0; mask < 1 << dirs.length; mask++) {
    const chosen = dirs.filter((_, i) => (mask & (1 << i)) !== 0);
    const set = new DirectorySet(chosen, separator);
    for (const path of paths) {
      const holders = chosen.filter((dir) => isWithin(dir, path, separator));
      assert.is(set.holds(path), holders.length > 0, `${path} in {${chosen.join(', ')}}`);
      const innermost = holders.sort((a, b) => b.length - a.length)[0];
      assert.is(set.holderOf(path), innermost, `holder of ${path} in {${chosen.join(', ')}}`);
      // holderAbove: the same with `path` itself left out (a root's own root is the one around it).
      const above = holders.filter((dir) => dir !== path)[0];
      assert.is(set.holderAbove(path), above, `holder above ${path} in {${chosen.join(', ')}}`);
    }
  }
}

test('DirectorySet agrees with isWithin on POSIX paths', () => {
  check(POSIX_DIRS, POSIX_PATHS, '/');
});

test('DirectorySet agrees with isWithin on Windows paths', () => {
  check(WINDOWS_DIRS, WINDOWS_PATHS, '\\');
});

test('isWithin is the parent itself or a prefix ending in a separator; hasPrefix is startsWith', () => {
  // The definitions, spelled out with startsWith (isWithin avoids building parent + separator).
  const within = (parent: string, child: string, separator: string) => child === parent || child.startsWith(parent.endsWith(separator) ? parent : parent + separator);
  const concatenated = (path: string) => path.split('').reduce((out, char) => out + char, '');
  for (const [strings, separator] of [[[...POSIX_DIRS, ...POSIX_PATHS], '/'], [[...WINDOWS_DIRS, ...WINDOWS_PATHS], '\\'], [['a::b', 'a::', 'a', 'a:', 'a::b::c', 'a:b', '::', ''], '::']] as const) {
    for (const parent of strings) {
      for (const child of strings) {
        assert.is(isWithin(parent, child, separator), within(parent, child, separator), `${parent} holds ${child} (${separator})`);
        assert.is(isWithin(concatenated(parent), concatenated(child), separator), within(parent, child, separator), `${parent} holds ${child}, built by concatenation`);
        assert.is(hasPrefix(child, parent), child.startsWith(parent), `${child} starts with ${parent}`);
      }
    }
  }
});

test('enclosingPaths lists every parent isWithin accepts, innermost first', () => {
  assert.equal([...enclosingPaths('/a/b', '/')], ['/a/b', '/a/', '/a', '/', '']);
  for (const path of POSIX_PATHS) {
    for (const parent of [...POSIX_DIRS, ...POSIX_PATHS]) {
      assert.is([...enclosingPaths(path, '/')].includes(parent), isWithin(parent, path, '/'), `${parent} encloses ${path}`);
    }
  }
});

test('rootsOverlap agrees with isWithin over every pair, either way round', () => {
  for (const [dirs, paths, separator] of [[POSIX_DIRS, POSIX_PATHS, '/'], [WINDOWS_DIRS, WINDOWS_PATHS, '\\']] as const) {
    for (let mask = 0; mask < 1 << dirs.length; mask++) {
      const chosen = dirs.filter((_, i) => (mask & (1 << i)) !== 0);
      for (const others of [paths.slice(0, 1), paths.slice(2, 5), paths.slice(5), [...paths]]) {
        const pairwise = chosen.some((x) => others.some((y) => isWithin(x, y, separator) || isWithin(y, x, separator)));
        assert.is(rootsOverlap(chosen, others, separator), pairwise, `{${chosen.join(', ')}} and {${others.join(', ')}}`);
        assert.is(rootsOverlap(others, chosen, separator), pairwise, `{${others.join(', ')}} and {${chosen.join(', ')}}`);
      }
    }
  }
});

test('a frozen list of directories has one set made for it; any other list a new one, with the same answers', () => {
  // This OS's separator: the kept sets are those of the paths this OS gives.
  const p = (...parts: string[]) => sep + parts.join(sep);
  const frozen = Object.freeze([p('a', 'b'), p('c')]);
  assert.is(directorySetOf(frozen), directorySetOf(frozen), 'made once for a frozen list');
  const open = [p('a', 'b'), p('c')];
  assert.is.not(directorySetOf(open), directorySetOf(open), 'made again for a list that could have changed');
  for (const path of [p('a', 'b'), p('a', 'b', 'x'), p('a'), p('c', 'd'), p('cd'), sep]) {
    assert.is(directorySetOf(frozen).holds(path), new DirectorySet(frozen).holds(path), path);
  }
  // Frozen lists in either position give the pairwise answer too.
  assert.ok(rootsOverlap(frozen, Object.freeze([p('a', 'b', 'c', 'd')])));
  assert.not.ok(rootsOverlap(Object.freeze([p('a', 'bc')]), frozen));
});

test.run();
