// What a run's preparation keeps across the runs of this process: the credential deny set (under
// the stamps of every path it looked at) and the git configs outside every write root (under the
// stamp of the file read). Each is given again only while nothing it was made from has changed; a
// change made between two runs is seen by the next one, and a stamp changed too recently to be
// trusted keeps nothing.
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { HostFacts } from '../../lib/host-facts.js';
import { credentialMemoClock, credentialMemoCounts } from '../../lib/sandbox/credential-memo.js';
import { outsideConfigClock, outsideConfigCounts, readOutsideConfig } from '../../lib/sandbox/outside-config.js';
import { credentialDenySet } from '../../lib/sandbox/credential-deny.js';
import { makeTree, sh } from '../helpers/sandbox.js';
import { linuxSandboxTestsEnabled } from '../helpers/probe.js';

// process.platform: the stamps vouch for a directory's entries on Linux only (elsewhere nothing is kept).
const LINUX = process.platform === 'linux';
const realNow = credentialMemoClock.now;
const realConfigNow = outsideConfigClock.now;
/** A clock a minute ahead: the stamps this test just made count as settled. */
const ahead = (): bigint => BigInt(Date.now() + 60_000) * 1_000_000n;
const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

/** Calls credentialDenySet for `home` and says whether the memo answered. */
function denySet(home: string, ws: string): { set: ReturnType<typeof credentialDenySet>; answered: boolean } {
  const before = credentialMemoCounts.answered;
  const set = credentialDenySet([{ HOME: home, PATH: '/usr/bin:/bin' }], [ws], new HostFacts());
  return { set, answered: credentialMemoCounts.answered > before };
}

test('credential deny set: kept while its paths are unchanged, a credential store made or removed between calls is seen by the next', async () => {
  const t = makeTree('zs-credmemo-');
  credentialMemoClock.now = ahead;
  try {
    const home = join(t.base, 'home');
    mkdirSync(home);
    const first = denySet(home, t.ws);
    assert.is(first.answered, false, 'the first call computes');
    assert.is(denySet(home, t.ws).answered, false, 'the second computes too: the stamps read before it vouch for it');
    // The stamps include every directory above the workspace, /var/tmp among them, where the tests
    // running beside this one make and remove their trees: a call after such a change computes
    // again, and the one after it is answered.
    let third = denySet(home, t.ws);
    for (let call = 0; LINUX && !third.answered && call < 4; call++) third = denySet(home, t.ws);
    assert.is(third.answered, LINUX, 'answered from the memo');
    assert.equal(third.set, first.set, 'with the same set');
    const aws = join(realpathSync(home), '.aws');
    assert.not.ok(first.set.existing.includes(aws));
    await tick();
    mkdirSync(join(home, '.aws'));
    writeFileSync(join(home, '.aws', 'credentials'), '[default]\n');
    const made = denySet(home, t.ws);
    assert.is(made.answered, false, 'the home directory changed: computed afresh');
    assert.ok(made.set.existing.includes(aws), 'the new store is masked');
    denySet(home, t.ws);
    assert.ok(denySet(home, t.ws).set.existing.includes(aws), 'and stays so once kept again');
    await tick();
    rmSync(join(home, '.aws'), { recursive: true });
    const removed = denySet(home, t.ws);
    assert.is(removed.answered, false);
    assert.not.ok(removed.set.existing.includes(aws), 'gone again');
    assert.ok(removed.set.tree.denied.includes(aws), 'still denied in the read tree, missing or not');
  } finally {
    credentialMemoClock.now = realNow;
    t.cleanup();
  }
});

test('credential deny set: a directory changed within the racy window, or a link on the way, keeps nothing', () => {
  const t = makeTree('zs-credmemo-');
  try {
    const home = join(t.base, 'home');
    mkdirSync(home);
    // The real clock: the home directory was made just now, so its stamp may not show a change yet.
    for (let i = 0; i < 4; i++) assert.is(denySet(home, t.ws).answered, false, `fresh home, call ${i}`);
    credentialMemoClock.now = ahead;
    const linked = join(t.base, 'linked-home');
    symlinkSync(home, linked);
    for (let i = 0; i < 4; i++) assert.is(denySet(linked, t.ws).answered, false, `home through a link, call ${i}`);
  } finally {
    credentialMemoClock.now = realNow;
    t.cleanup();
  }
});

test('outside config: the entries are read again once the file is rewritten in place or replaced', async () => {
  const t = makeTree('zs-gitcfg-');
  outsideConfigClock.now = ahead;
  try {
    const file = join(t.outside, 'gitconfig');
    writeFileSync(file, '[core]\n\thooksPath = /x/hooks-a\n');
    const hooks = (path: string) => readOutsideConfig(path)?.find((e) => e.key === 'hookspath')?.value;
    const read = outsideConfigCounts.read;
    assert.is(hooks(file), '/x/hooks-a');
    assert.is(hooks(file), '/x/hooks-a');
    assert.is(outsideConfigCounts.read - read, LINUX ? 1 : 2, 'one read while the file is the same');
    await tick();
    writeFileSync(file, '[core]\n\thooksPath = /x/hooks-b\n');
    assert.is(hooks(file), '/x/hooks-b', 'rewritten in place (same inode and size)');
    const next = join(t.outside, 'gitconfig.new');
    writeFileSync(next, '[core]\n\thooksPath = /x/hooks-c\n');
    renameSync(next, file);
    assert.is(hooks(file), '/x/hooks-c', 'replaced by a rename');
    rmSync(file);
    assert.is(readOutsideConfig(file), undefined, 'removed');
    // The real clock: a file written just now is read every time.
    outsideConfigClock.now = realConfigNow;
    writeFileSync(file, '[core]\n\thooksPath = /x/hooks-d\n');
    const fresh = outsideConfigCounts.read;
    assert.is(hooks(file), '/x/hooks-d');
    assert.is(hooks(file), '/x/hooks-d');
    assert.is(outsideConfigCounts.read - fresh, 2, 'a file changed within the racy window is not kept');
  } finally {
    outsideConfigClock.now = realConfigNow;
    t.cleanup();
  }
});

test('runs: a global git config changed between two runs guards its new hooks directory in the next', async () => {
  if (!linuxSandboxTestsEnabled()) return;
  const t = makeTree('zs-gitcfg-run-');
  const saved = process.env.GIT_CONFIG_GLOBAL;
  outsideConfigClock.now = ahead;
  try {
    const config = join(t.outside, 'gitconfig');
    mkdirSync(join(t.ws, 'hooks-a'));
    mkdirSync(join(t.ws, 'hooks-b'));
    writeFileSync(config, `[core]\n\thooksPath = ${join(t.ws, 'hooks-a')}\n`);
    process.env.GIT_CONFIG_GLOBAL = config;
    const first = await sh(t, 'echo x > hooks-b/pre-commit');
    assert.is(first.exitCode, 0, first.stderr);
    assert.ok(existsSync(join(t.ws, 'hooks-b', 'pre-commit')), 'hooks-b is not a hooks directory yet');
    await sh(t, 'true');
    const next = join(t.outside, 'gitconfig.new');
    writeFileSync(next, `[core]\n\thooksPath = ${join(t.ws, 'hooks-b')}\n`);
    renameSync(next, config);
    const second = await sh(t, 'echo x > hooks-b/post-checkout');
    assert.is.not(second.exitCode, 0, 'hooks-b is read-only now');
    assert.not.ok(existsSync(join(t.ws, 'hooks-b', 'post-checkout')), 'no hook reached the host');
  } finally {
    if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = saved;
    outsideConfigClock.now = realConfigNow;
    t.cleanup();
  }
});

test.run();
