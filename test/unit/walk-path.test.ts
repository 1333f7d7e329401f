// SPDX-License-Identifier: MIT
// Where the addon's file walks start: "/" on POSIX; the drive or share root on Windows, the only
// part opened by name, so that every component a command could swap for a junction is opened
// relative to the directory handle before it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { walkArgs } from '../../lib/sandbox/walk-path.js';

test('POSIX: the root is / and the rest loses its leading slashes', () => {
  assert.equal(walkArgs('/home/u/ws/.git', false), ['/', 'home/u/ws/.git']);
  assert.equal(walkArgs('//x', false), ['/', 'x']);
  assert.equal(walkArgs('/', false), ['/', '']);
});

test('Windows: a drive path starts at its drive root, whatever the separators', () => {
  assert.equal(walkArgs('C:\\Users\\u\\ws\\.git', true), ['C:\\', 'Users\\u\\ws\\.git']);
  assert.equal(walkArgs('d:/ws/a/', true), ['d:\\', 'ws\\a']);
  assert.equal(walkArgs('C:\\ws\\\\a', true), ['C:\\', 'ws\\a']);
  assert.equal(walkArgs('C:\\', true), ['C:\\', '']);
  assert.equal(walkArgs('C:', true), ['C:\\', '']);
});

test('Windows: a share path starts at its share, and \\\\?\\ names the same root', () => {
  assert.equal(walkArgs('\\\\srv\\share\\ws\\f', true), ['\\\\srv\\share\\', 'ws\\f']);
  assert.equal(walkArgs('\\\\?\\C:\\ws\\f', true), ['C:\\', 'ws\\f']);
  assert.equal(walkArgs('\\\\?\\UNC\\srv\\share\\ws', true), ['\\\\srv\\share\\', 'ws']);
});

test('Windows: a path naming no drive or share has no walk (refused, never guessed)', () => {
  for (const path of ['ws\\f', '\\ws\\f', 'C:ws', '\\\\.\\PhysicalDrive0\\x', '\\\\srv', '\\\\?\\GLOBALROOT\\x', '/home/u']) {
    assert.is(walkArgs(path, true), undefined, path);
  }
});

test.run();
