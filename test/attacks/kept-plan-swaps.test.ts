// Attack: runs of one policy keep its plan and sandbox spec across runs while nothing they looked
// at changed (plan-memo.ts, spec-memo.ts). Between two such runs the host changes what the plan
// stands on: a denyRead file becomes a directory holding the secret, or a credential store appears
// in the home directory. The next run must not read either, as a run with nothing kept would not.
// Each test runs real sandboxes.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { watchedMemoCounts } from '../../lib/sandbox/watched-memo.js';
import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

/**
 * Runs `run` until the kept plan and spec answered (on Linux, at most 12 runs), each time without
 * the secret; `mustAnswer` false where the sandbox's read tree lists the shared test base (a home
 * directory there), which other tests change meanwhile: the memo may then find no quiet run.
 */
async function warm(run: () => ReturnType<typeof sh>, mustAnswer = true): Promise<void> {
  const before = watchedMemoCounts.answered;
  for (let i = 0; i < 12; i++) {
    const r = await run();
    assert.not.match(r.stdout, /TOKEN/, `run ${i} read the secret`);
    if (i >= 3 && watchedMemoCounts.answered > before) return;
  }
  // process.platform: plans are kept only where watch sets exist (Linux).
  if (mustAnswer && process.platform === 'linux') assert.unreachable('the later runs never used the kept plan and spec');
}

sandboxTest('attack: a denyRead file swapped for a directory between two runs of a kept plan stays unreadable', async () => {
  const t = makeTree();
  try {
    const secret = join(t.ws, 'secret.env');
    writeFileSync(secret, 'TOKEN=one\n');
    const run = () => sh(t, 'cat secret.env secret.env/key 2>&1; echo done', { denyRead: [secret] });
    await warm(run);
    rmSync(secret);
    mkdirSync(secret);
    writeFileSync(join(secret, 'key'), 'TOKEN=two\n');
    const r = await run();
    assert.match(r.stdout, /done/, r.stderr);
    assert.not.match(r.stdout, /TOKEN/, 'the secret in the new directory was read');
    await warm(run);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a credential store made in the home directory between two runs of a kept plan stays unreadable', async () => {
  const t = makeTree();
  try {
    const home = join(t.outside, 'home');
    mkdirSync(home);
    const env = { HOME: home, PATH: '/usr/bin:/bin' };
    const run = () => sh(t, 'cat "$HOME/.aws/credentials" "$HOME/.npmrc" 2>&1; echo done', { env });
    await warm(run, false);
    mkdirSync(join(home, '.aws'));
    writeFileSync(join(home, '.aws', 'credentials'), 'TOKEN=aws\n');
    writeFileSync(join(home, '.npmrc'), '//registry/:_authToken=TOKEN\n');
    const r = await run();
    assert.match(r.stdout, /done/, r.stderr);
    assert.not.match(r.stdout, /TOKEN/, 'a credential store made between the runs was read');
  } finally {
    t.cleanup();
  }
});

test.run();
