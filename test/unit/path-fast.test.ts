// SPDX-License-Identifier: MIT
// The engine's shortcuts around node:path give node:path's answers: normalized() is normalize(),
// cleanJoin() is join() and resolve() whenever it answers, a path scope is empty exactly when
// normalize() makes it '.', a grant covers a path exactly when relative() says it holds it, and
// the protected-name check finds what relative() finds. Every pair of a list of awkward paths
// (trailing and doubled separators, `.` and `..` components, names that begin with dots, siblings
// sharing a prefix, the root) is compared.
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join, normalize, posix, relative, resolve, sep } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { cleanJoin, normalized } from '../../lib/path-within.js';
import { deriveScope, grantCovers, resolveScopeAbs } from '../../lib/policy/grants/grant-match.js';
import { touchesProtectedPath } from '../../lib/policy/paths/path-check.js';
import { normalizePrefixForRoot, validateUnderRoot } from '../../lib/policy/paths/paths.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

test.after(removeTempDirs);

const ABSOLUTE = [
  '/', '//', '/a', '/a/', '/a//', '/a/b', '/a/b/', '/a//b', '/a/./b', '/a/b/.', '/a/b/..', '/a/../b', '/a/b/../..',
  '/ab', '/a/bc', '/a/b/c', '/a/b/.c', '/a/b/..c', '/a/b/c..', '/a/b/...', '/a/.git', '/a/.git/hooks', '/a/b/.zero',
  '/a/b/.agents/x', '/a/b/.gitx', '/../a', '/x y/ü', '/a/b/c/d/e',
];
const RELATIVE = ['', '.', '..', 'a', 'a/', 'a/b', './a', 'a/./b', 'a/../b', '../a', 'a//b', '.a', '..a', 'a/..', '.git', '.git/config', 'x y'];

test('normalized() gives normalize() for every path', () => {
  for (const path of [...ABSOLUTE, ...RELATIVE]) assert.is(normalized(path), normalize(path), path);
});

test('cleanJoin() gives join() and resolve() whenever it answers, and answers for clean paths on POSIX', () => {
  // Clean absolute bases, and an empty and a relative one (join keeps those relative).
  const bases = [...ABSOLUTE.filter((base) => base === normalize(base) && (base === '/' || !base.endsWith('/'))), '', 'r', 'r/s'];
  let answered = 0;
  for (const base of bases) {
    for (const path of RELATIVE) {
      const joined = cleanJoin(base, path);
      if (joined === undefined) continue;
      answered++;
      assert.is(joined, join(base, path), `join ${base} ${path}`);
      if (base.startsWith('/')) assert.is(joined, resolve(base, path), `resolve ${base} ${path}`);
    }
  }
  // The shortcut is taken (a check that could never answer would pass the loop above).
  if (sep === '/') assert.ok(answered > bases.length, `answered ${answered}`);
  else assert.is(answered, 0);
});

test('resolveScopeAbs gives what normalize and resolve give', () => {
  for (const root of ['/w', '/w/s', '/']) {
    for (const scope of [...ABSOLUTE, ...RELATIVE].filter((s) => s !== '')) {
      const expected = posix.isAbsolute(scope) ? posix.normalize(scope) : posix.resolve(root, scope);
      assert.is(resolveScopeAbs(scope, root, 'linux'), expected, `${root} ${scope}`);
    }
  }
});

test('a path scope is empty exactly for the workspace itself, as normalize() says', () => {
  for (const path of [...ABSOLUTE, ...RELATIVE, ' a ', './', './/', 'a/b/../..', 'a/../', '...', ' . ']) {
    const trimmed = path.trim();
    const none = trimmed === '' || posix.normalize(trimmed).replace(/\/+$/, '') === '.';
    assert.equal(deriveScope('read_file', { path }), none ? { raw: '', kind: '' } : { raw: trimmed, kind: 'file' }, path);
  }
});

test('a file or directory grant covers a path exactly when relative() says so', () => {
  for (const scope of ABSOLUTE) {
    for (const requestScope of ABSOLUTE) {
      const rel = posix.relative(posix.normalize(scope), posix.normalize(requestScope));
      const holds = rel === '' || (rel !== '..' && !rel.startsWith('../') && !posix.isAbsolute(rel));
      assert.is(grantCovers({ scope, scopeKind: 'dir' }, requestScope, 'linux'), holds, `dir ${scope} ${requestScope}`);
      assert.is(grantCovers({ scope, scopeKind: 'file' }, requestScope, 'linux'), rel === '', `file ${scope} ${requestScope}`);
    }
  }
});

test('the protected-name check finds what relative() finds below each write root and the workspace', () => {
  if (sep !== '/') return; // POSIX paths
  const roots = ['/a', '/a/b', '/', '/ab'];
  const protectedNames = new Set(['.git', '.zero', '.agents']);
  for (const root of ['/a', '/a/b', '']) {
    for (const path of [...ABSOLUTE, ...RELATIVE.filter((p) => p !== '')]) {
      const abs = path.startsWith('/') ? normalize(path) : join(root, path);
      const below = (parent: string) => {
        const rel = relative(parent, abs);
        return rel === '' || (rel !== '..' && !rel.startsWith('../'));
      };
      const expected =
        roots.some((writeRoot) => below(writeRoot) && protectedNames.has(relative(writeRoot, abs).split('/')[0] ?? '')) ||
        (root !== '' && protectedNames.has(relative(root, abs).split('/')[0] ?? ''));
      assert.is(touchesProtectedPath(path, root, roots), expected, `${root} ${path}`);
    }
  }
});

test('the walk below a root follows a link and then `..` as the filesystem does, on a path not normalized', () => {
  if (sep !== '/') return; // POSIX links
  const base = realpathSync(tempDir('zs-path-fast-'));
  mkdirSync(join(base, 'real', 'sub'), { recursive: true });
  mkdirSync(join(base, 'w'));
  symlinkSync(join(base, 'real', 'sub'), join(base, 'link'));
  symlinkSync(join(base, 'real', 'sub'), join(base, 'w', 'inner'));
  // Outside the root: the link resolves, then `..` leaves its target, not the link.
  assert.is(normalizePrefixForRoot(`${base}/link/../f`, join(base, 'w')), join(base, 'real', 'f'));
  assert.is(normalizePrefixForRoot(`${base}/link/./g`, join(base, 'w')), join(base, 'real', 'sub', 'g'));
  // Into the root through the link's parent: inside it, kept verbatim.
  assert.is(normalizePrefixForRoot(`${base}/link/../../w/x`, join(base, 'w')), join(base, 'w', 'x'));
  // A link inside the root leading out of it is a traversal, however the path reaches it.
  assert.is(validateUnderRoot(join(base, 'w'), 'inner/x').code, 'symlink_traversal');
  assert.is(validateUnderRoot(join(base, 'w'), `${base}/w/./inner/x`).code, 'symlink_traversal');
  assert.is(validateUnderRoot(join(base, 'w'), 'x/../inner/y').code, 'symlink_traversal');
  assert.is(validateUnderRoot(join(base, 'w'), 'x/y').code, null);
});

test.run();
