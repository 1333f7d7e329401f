// SPDX-License-Identifier: MIT
// The fallback scan's one name comparison (Windows): on a case-insensitive volume `.GIT` is the
// `.git` host git opens, so a repository the command made under that spelling is checked too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { sameGitName } from '../../lib/sandbox/beneath.js';

test('case-insensitive volumes: any spelling of .git, HEAD, objects and refs is the name git opens', () => {
  for (const [name, wanted] of [['.GIT', '.git'], ['.Git', '.git'], ['head', 'HEAD'], ['OBJECTS', 'objects'], ['Refs', 'refs']] as const) {
    assert.ok(sameGitName(name, wanted, true), `${name} is ${wanted} when folding`);
    assert.not.ok(sameGitName(name, wanted, false), `${name} is not ${wanted} on a case-sensitive volume`);
  }
});

test('other names never match, whatever the folding', () => {
  for (const name of ['.git.', '.gitx', 'git', '.git ', 'HEADS', 'object']) {
    assert.not.ok(sameGitName(name, name.startsWith('.') ? '.git' : name.startsWith('H') ? 'HEAD' : 'objects', true), name);
  }
  assert.ok(sameGitName('.git', '.git', false));
});

test.run();
