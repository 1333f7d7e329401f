// SPDX-License-Identifier: MIT
// Mount templates: runs of a policy after its first copy the mount namespace built for it once.
// A templated run must hide, protect and report exactly as a run that set its mounts up itself:
// a read of a hidden file (or of a file of a hidden directory) is reported as a denial naming that
// file, in that run only, and the process holds a bounded number of descriptors however many
// policies come and go.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

function readScopes(r: RunResult): string[] {
  return r.denials.filter((d) => d.capability.kind === 'filesystem_read').map((d) => d.capability.scope ?? '').sort();
}

sandboxTest('templated runs report the reads of hidden files and directories of their own run only', async () => {
  const t = makeTree();
  try {
    const secret = join(t.ws, 'secret.env');
    writeFileSync(secret, 'SECRET-FILE\n');
    const keys = join(t.ws, 'keys');
    mkdirSync(keys);
    writeFileSync(join(keys, 'id'), 'SECRET-KEY\n');
    const options: RunOptions = { workspace: t.ws, denyRead: [secret, keys], prewarm: false };
    for (let i = 0; i < 3; i++) {
      const quiet = await runSandboxed(['/bin/sh', '-c', 'echo quiet'], options);
      assert.is(quiet.stdout, 'quiet\n', quiet.stderr);
      assert.equal(readScopes(quiet), [], `run ${i} read nothing`);
    }
    for (let i = 0; i < 2; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', 'cat secret.env keys/id; echo done'], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.not.match(r.stdout, /SECRET/);
      assert.equal(readScopes(r), [join(keys, 'id'), secret].sort(), `run ${i}`);
      const next = await runSandboxed(['/bin/sh', '-c', 'echo quiet'], options);
      assert.equal(readScopes(next), [], `the run after ${i} read nothing`);
    }
  } finally {
    t.cleanup();
  }
});

/**
 * The process's descriptor count once it has stayed the same for 300 ms (at most 5 s): the exits'
 * mount namespaces are closed by a thread of the addon's own after the exit is delivered, so a
 * count read at once can still hold a few of the last runs' namespaces on a loaded machine.
 */
async function settledCount(): Promise<number> {
  const end = Date.now() + 5_000;
  let count = readdirSync('/proc/self/fd').length;
  let since = Date.now();
  while (Date.now() < end && Date.now() - since < 300) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = readdirSync('/proc/self/fd').length;
    if (now !== count) {
      count = now;
      since = Date.now();
    }
  }
  return count;
}

sandboxTest('many policies coming and going leave the process with a bounded number of descriptors', async () => {
  const t = makeTree();
  try {
    const policies: RunOptions[] = [];
    for (let i = 0; i < 10; i++) {
      const dir = join(t.ws, `hidden${i}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'key'), 'k\n');
      writeFileSync(join(t.ws, `secret${i}`), 's\n');
      policies.push({ workspace: t.ws, denyRead: [dir, join(t.ws, `secret${i}`)], prewarm: false });
    }
    const round = async () => {
      for (const options of policies) {
        for (let k = 0; k < 3; k++) {
          const r = await runSandboxed(['/bin/true'], options);
          assert.is(r.exitCode, 0, r.stderr);
        }
      }
      return settledCount();
    };
    const first = await round();
    await round();
    const third = await round();
    assert.ok(third <= first + 2, `descriptors grew from ${first} to ${third}`);
  } finally {
    t.cleanup();
  }
});

sandboxTest('templated runs with a workspace inside the private /tmp each get a /tmp of their own', async () => {
  const ws = mkdtempSync('/tmp/zs-template-');
  try {
    writeFileSync(join(ws, 'secret.env'), 'SECRET\n');
    const options: RunOptions = { workspace: ws, denyRead: [join(ws, 'secret.env')], prewarm: false };
    for (let i = 0; i < 4; i++) {
      const marker = `/tmp/zs-template-marker-${process.pid}`;
      const r = await runSandboxed(['/bin/sh', '-c', `ls ${marker} 2>/dev/null; echo run${i} > ${marker}; cat secret.env; echo run${i} > out; echo done`], options);
      assert.is(r.stdout, 'done\n', `run ${i}: ${r.stderr}`);
      assert.is(readFileSync(join(ws, 'out'), 'utf8'), `run${i}\n`);
      assert.not.ok(existsSync(marker), 'the private /tmp stays the sandbox\'s');
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test.run();
