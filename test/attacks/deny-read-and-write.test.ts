// SPDX-License-Identifier: MIT
// A file that is both denyRead and denyWrite is covered by its read mask alone (no read-only bind
// beneath the mask). Attack: read it, write it, truncate it, remove it, rename it or a directory
// above it, and put a file of the command's choosing at its path; each must fail and the host
// file stay as it was. A sibling file next to it, named by neither list, stays readable and
// writable, and so does a file that is denyWrite only.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('a file both denyRead and denyWrite can be neither read nor replaced; its sibling can be both', async () => {
  const t = makeTree();
  try {
    const pkg = join(t.ws, 'packages', 'p1');
    mkdirSync(pkg, { recursive: true });
    const secret = join(pkg, 'secret.env');
    const locked = join(pkg, 'locked.txt');
    const sibling = join(pkg, 'other.env');
    writeFileSync(secret, 'TOKEN=host');
    writeFileSync(locked, 'locked');
    writeFileSync(sibling, 'sibling');
    const script = [
      `cat ${secret} > ${t.ws}/read.out`,
      `cat ${sibling} > ${t.ws}/sibling.out`,
      `echo evil > ${secret}`,
      `truncate -s 0 ${secret}`,
      `echo evil > ${locked}`,
      `rm -f ${secret}`,
      `mv ${secret} ${pkg}/moved.env`,
      `mv ${pkg} ${t.ws}/packages/p1-moved && echo evil > ${secret}`,
      `mv ${t.ws}/packages ${t.ws}/packages-moved && mkdir -p ${pkg} && echo evil > ${secret}`,
      `echo changed > ${sibling}`,
      'true',
    ].join('; ');
    const r = await sh(t, script, { denyRead: [secret], denyWrite: [secret, locked] });
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(readFileSync(join(t.ws, 'read.out'), 'utf8'), '', 'the hidden file reads empty');
    assert.is(readFileSync(join(t.ws, 'sibling.out'), 'utf8'), 'sibling', 'the sibling is readable');
    assert.is(readFileSync(secret, 'utf8'), 'TOKEN=host');
    assert.is(readFileSync(locked, 'utf8'), 'locked');
    assert.not.ok(existsSync(join(pkg, 'moved.env')));
    assert.not.ok(existsSync(join(t.ws, 'packages', 'p1-moved')));
    assert.not.ok(existsSync(join(t.ws, 'packages-moved')));
    assert.is(readFileSync(sibling, 'utf8'), 'changed\n', 'the sibling is writable');
  } finally {
    t.cleanup();
  }
});

test.run();
