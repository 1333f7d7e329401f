// SPDX-License-Identifier: MIT
// Attack: two runs of one workspace are in flight. The first one's command removed zero-sandbox's
// own entry point (node_modules/.bin/zero-sandbox), so its check puts it back on the host while
// the second run's command is still running. That command swaps node_modules/.bin between a real
// directory and a link to a directory outside every write root as fast as it can: a restore that
// looked at .bin, saw a directory and then wrote by path would write through the link, making
// files outside the jail on the sandbox's behalf.
// Fix: the restore makes every directory and the entry through the descriptor walk (no link
// followed anywhere from "/"): a component swapped for a link makes that step fail (reported as
// "could not be put back"), never lands it elsewhere. The test runs the swapping command in a
// real sandbox, restores again and again meanwhile, and checks the outside directory stays empty.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { checkOwnEntries, type OwnEntry } from '../../lib/sandbox/own-entries.js';
import { makeTree, py, sandboxTest, until } from '../helpers/sandbox.js';

const SHIM = Buffer.from('#!/bin/sh\nexec node "$(dirname "$0")/../zero-sandbox/dist/cli/main.js" "$@"\n');

sandboxTest('attack: a command swapping .bin for a link while another run restores an entry point never gets a file made outside', async () => {
  const t = makeTree('zs-entry-race-');
  try {
    const bin = join(t.ws, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    const entry: OwnEntry = { path: join(bin, 'zero-sandbox'), root: t.ws, kind: 'file', content: SHIM, mode: 0o755 };
    const stop = join(t.ws, 'stop');
    // Four renames a round (microseconds): .bin is a link about half of the time, and the entry
    // is removed each round so that every check has something to put back.
    const swapper = py(t, [
      'import os, shutil',
      `os.chdir(${JSON.stringify(join(t.ws, 'node_modules'))})`,
      `os.symlink(${JSON.stringify(t.outside)}, 'l')`,
      "open('../started', 'w').close()",
      'n = 0',
      "while not os.path.exists('../stop'):",
      '    n += 1',
      "    if n % 64 == 0 and os.path.exists('../stop'): break",
      '    try:',
      "        os.unlink('.bin/zero-sandbox')",
      '    except OSError:',
      '        pass',
      '    try:',
      "        os.rename('.bin', 'd'); os.rename('l', '.bin'); os.rename('.bin', 'l'); os.rename('d', '.bin')",
      '    except OSError:',
      // The host made .bin anew between two renames: start the round over from a clean state.
      '        try:',
      "            if os.path.islink('.bin'): os.unlink('.bin')",
      "            elif os.path.isdir('.bin'): shutil.rmtree('.bin')",
      "            if os.path.isdir('d') and not os.path.islink('d'): os.rename('d', '.bin')",
      "            else: os.mkdir('.bin')",
      `            if not os.path.lexists('l'): os.symlink(${JSON.stringify(t.outside)}, 'l')`,
      '        except OSError:',
      '            pass',
      "print('swapped')",
    ].join('\n'));
    await until(join(t.ws, 'started'));
    let restores = 0;
    for (let i = 0; i < 20000 && readdirSync(t.outside).length === 0; i++) {
      if (checkOwnEntries([entry]).length > 0) restores++;
      if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    writeFileSync(stop, '');
    const r = await swapper;
    assert.is(r.stdout, 'swapped\n', r.stderr);
    assert.ok(restores > 0, 'the entry point was restored while the command swapped .bin');
    assert.equal(readdirSync(t.outside), [], 'nothing was made outside the write roots');
    assert.not.ok(existsSync(join(t.outside, 'zero-sandbox')));
  } finally {
    t.cleanup();
  }
});

test.run();
