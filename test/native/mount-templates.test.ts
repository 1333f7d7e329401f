// SPDX-License-Identifier: MIT
// Mount templates: runs of a policy after its first copy the mount namespace built for it once.
// A templated run must hide, protect and report exactly as a run that set its mounts up itself:
// a read of a hidden file (or of a file of a hidden directory) is reported as a denial naming that
// file, in that run only, and the process holds a bounded number of descriptors however many
// policies come and go.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { loadNative } from '../../lib/native/load.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { openDescriptors } from '../helpers/fds.js';
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
 * The process's descriptors less those of the templates kept (a bounded cache whose templates
 * hold more or fewer descriptors as policies come and go) and of the network namespaces kept for
 * reuse (at most 8, with the user namespace they were made in).
 */
function openBesideKept(): number {
  const open = [...openDescriptors().values()].filter((target) => !/^(net|user):\[/.test(target)).length;
  return open - (loadNative().mountTemplateCounts?.().fds ?? 0);
}

/**
 * That count once it has stayed the same for 300 ms (at most 5 s): the exits' mount namespaces
 * are closed by a thread of the addon's own after the exit is delivered, so a count read at once
 * can still hold a few of the last runs' namespaces on a loaded machine.
 */
async function settledCount(): Promise<number> {
  const end = Date.now() + 5_000;
  let count = openBesideKept();
  let since = Date.now();
  while (Date.now() < end && Date.now() - since < 300) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = openBesideKept();
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
    // More policies than the templates kept (16): each round drops and builds some.
    for (let i = 0; i < 20; i++) {
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
    assert.ok(third <= first, `descriptors beside the kept templates and namespaces grew from ${first} to ${third}`);
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

// A write root inside the private /tmp is cloned from the template's locked copy into each run's
// new /tmp, not copied with the template's namespace and then cloned again: a templated run's
// namespace holds each of its mounts once, as the run that set its mounts up itself did; its
// denyWrite entries stay read-only, and the reads of its hidden files are reported.
sandboxTest('templated runs with a workspace inside the private /tmp hold its mounts once', async () => {
  const ws = mkdtempSync('/tmp/zs-template-');
  try {
    const files: string[] = [];
    for (let i = 0; i < 20; i++) {
      mkdirSync(join(ws, `p${i}`));
      writeFileSync(join(ws, `p${i}`, 'secret.env'), 'KEEP\n');
      files.push(join(ws, `p${i}`, 'secret.env'));
    }
    mkdirSync(join(ws, 'hidden'));
    writeFileSync(join(ws, 'hidden', 'id'), 'KEEP\n');
    const hidden = [join(ws, 'hidden'), files[0] as string];
    const options: RunOptions = { workspace: ws, denyWrite: files, denyRead: hidden, prewarm: false };
    const script = `grep -c secret.env /proc/self/mountinfo; grep -c " ${ws} " /proc/self/mountinfo; cat hidden/id p0/secret.env; echo run > p3/secret.env || echo refused; echo ok > out`;
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', script], options);
      runs.push(r.stdout);
      assert.is(readFileSync(join(ws, 'p3', 'secret.env'), 'utf8'), 'KEEP\n', `run ${i} wrote a denyWrite file`);
      assert.is(readFileSync(join(ws, 'out'), 'utf8'), 'ok\n', `run ${i} could not write its workspace`);
      assert.equal(readScopes(r), [join(ws, 'hidden', 'id'), files[0]].sort(), `run ${i}'s reads of hidden files`);
    }
    assert.is(runs[0], '20\n1\nrefused\n');
    for (let i = 1; i < 4; i++) assert.is(runs[i], runs[0], `run ${i} (from the template)`);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test.run();
