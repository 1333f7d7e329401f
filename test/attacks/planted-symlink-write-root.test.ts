// Attack: a symlink planted by one run poisons the next. Run 1 creates `ws/build -> <outside>`;
// a later `--allow-write build`, `allowWrite: ['build']`, a config write root or an engine extra
// root naming it would make the outside directory writable; `--workspace ws/sub` through a
// planted `ws/sub -> <outside>` would make it the workspace.
// Fix: a write root reached through a symlink is refused (invalid_argument, CLI exit 2, wherever
// it was given: flag, option, config file) unless the caller names the resolved path itself, and the
// message names both. A workspace given through a symlink is the caller's choice, except when a
// link on the way (any component) lies inside an earlier run's workspace or extra write root. The test plants the links from inside a real
// sandbox, then checks that nothing was written outside.
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { runCli } from '../helpers/cli.js';
import { makeTree, rejection, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';

async function plant(t: Tree, name: string): Promise<void> {
  const r = await sh(t, `ln -s ${t.outside} ${name} && echo planted`);
  assert.is(r.stdout, 'planted\n', r.stderr);
}

sandboxTest('allowWrite through a symlink planted by an earlier run is refused, naming both paths; the target named itself is allowed', async () => {
  const t = makeTree('zs-planted-');
  try {
    await plant(t, 'build');
    const outside = realpathSync(t.outside);
    const message = `allowWrite build reaches ${outside} through a symlink (a link inside a write root may have been planted by an earlier sandboxed command); pass ${outside} itself to allow writes there`;
    const relative = await rejection(runSandboxed('touch build/pwned', { workspace: t.ws, allowWrite: ['build'] }));
    assert.is(relative.code, 'invalid_argument');
    assert.is(relative.message, message);
    const absolute = await rejection(runSandboxed('touch build/pwned', { workspace: t.ws, allowWrite: [join(t.ws, 'build')] }));
    assert.is(absolute.message, message.replace('allowWrite build', `allowWrite ${join(t.ws, 'build')}`));
    assert.equal(readdirSync(t.outside), [], 'nothing was written through the link');
    // The caller who means the target says so: then it is a write root like any other.
    const chosen = await runSandboxed(`touch ${outside}/chosen`, { workspace: t.ws, allowWrite: [outside] });
    assert.is(chosen.exitCode, 0, chosen.stderr);
    assert.equal(readdirSync(t.outside), ['chosen']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('--allow-write, a config write root and an engine extra root through a planted symlink are refused; the outside stays untouched', async () => {
  const t = makeTree('zs-planted-');
  try {
    await plant(t, 'build');
    const outside = realpathSync(t.outside);
    const env = { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
    const flag = await runCli(['run', '--workspace', t.ws, '--allow-write', 'build', '--', 'touch', 'build/pwned'], { env, cwd: t.ws });
    assert.is(flag.code, 2, flag.stderr);
    assert.is(flag.stderr, `zero-sandbox run: allowWrite build reaches ${outside} through a symlink (a link inside a write root may have been planted by an earlier sandboxed command); pass ${outside} itself to allow writes there [invalid_argument]\n`);

    const configFile = join(t.base, 'config', 'zero', 'config.json');
    mkdirSync(join(t.base, 'config', 'zero'), { recursive: true });
    writeFileSync(configFile, JSON.stringify({ sandbox: { additionalWriteRoots: [join(t.ws, 'build')] } }));
    const config = await runCli(['run', '--workspace', t.ws, '--', 'touch', 'build/pwned'], { env, cwd: t.ws });
    assert.is(config.code, 2, config.stderr);
    assert.match(config.stderr, '[invalid_argument]');
    assert.match(config.stderr, `${configFile}: sandbox.additionalWriteRoots[0]: additional write root ${join(t.ws, 'build')} reaches ${outside} through a symlink`);

    const engine = await rejection(createEngine({ workspaceRoot: t.ws, extraWriteRoots: ['build'].map((n) => join(t.ws, n)), env: { ...env, XDG_CONFIG_HOME: join(t.base, 'no-config') } }));
    assert.is(engine.code, 'invalid_argument');
    assert.match(engine.message, `extra write root ${join(t.ws, 'build')} reaches ${outside} through a symlink`);
    assert.equal(readdirSync(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a workspace through a link planted inside an earlier workspace is refused; a link of the caller\'s own is accepted', async () => {
  const t = makeTree('zs-planted-');
  try {
    await plant(t, 'sub');
    const outside = realpathSync(t.outside);
    const planted = await rejection(runSandboxed('touch pwned', { workspace: join(t.ws, 'sub') }));
    assert.is(planted.code, 'invalid_argument');
    assert.is(planted.message, `workspace ${join(t.ws, 'sub')} reaches ${outside} through the symlink ${join(realpathSync(t.ws), 'sub')}, which lies inside ${realpathSync(t.ws)}, the workspace of an earlier sandboxed run (a command there may have planted it); pass ${outside} itself to use it`);
    const cli = await runCli(['run', '--workspace', join(t.ws, 'sub'), '--', 'touch', 'pwned'], { cwd: t.ws });
    assert.is(cli.code, 2, cli.stderr);
    assert.equal(readdirSync(t.outside), []);
    // The caller's own link, made on the host outside any earlier workspace.
    symlinkSync(t.outside, join(t.base, 'mine'));
    const own = await runSandboxed('touch mine-ok', { workspace: join(t.base, 'mine') });
    assert.is(own.exitCode, 0, own.stderr);
    assert.equal(readdirSync(t.outside), ['mine-ok']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a workspace through a link planted in an earlier run\'s extra write root (at any component) is refused, naming both; the outside stays untouched', async () => {
  const t = makeTree('zs-planted-');
  try {
    const extra = join(t.base, 'extra');
    mkdirSync(extra);
    // Run 1 may write `extra` (not its workspace) and plants a link there.
    const planted = await runSandboxed(`ln -s ${t.outside} ${extra}/proj && echo planted`, { workspace: t.ws, allowWrite: [extra] });
    assert.is(planted.stdout, 'planted\n', planted.stderr);
    const outside = realpathSync(t.outside);
    mkdirSync(join(t.outside, 'sub'));
    const expected = (given: string, target: string) => `workspace ${given} reaches ${target} through the symlink ${join(realpathSync(extra), 'proj')}, which lies inside ${realpathSync(extra)}, a write root of an earlier sandboxed run (a command there may have planted it); pass ${target} itself to use it`;
    const last = await rejection(runSandboxed('touch pwned', { workspace: join(extra, 'proj') }));
    assert.is(last.code, 'invalid_argument');
    assert.is(last.message, expected(join(extra, 'proj'), outside));
    // The link is a middle component: still found.
    const middle = await rejection(runSandboxed('touch pwned', { workspace: join(extra, 'proj', 'sub') }));
    assert.is(middle.message, expected(join(extra, 'proj', 'sub'), join(outside, 'sub')));
    const cli = await runCli(['run', '--workspace', join(extra, 'proj'), '--', 'touch', 'pwned'], { cwd: t.ws });
    assert.is(cli.code, 2, cli.stderr);
    assert.match(cli.stderr, 'a write root of an earlier sandboxed run');
    assert.equal(readdirSync(t.outside), ['sub']);
    assert.equal(readdirSync(join(t.outside, 'sub')), []);
    // Named by its resolved path, it is the caller's choice.
    const chosen = await runSandboxed('touch chosen', { workspace: outside });
    assert.is(chosen.exitCode, 0, chosen.stderr);
  } finally {
    t.cleanup();
  }
});

test.run();
