// Attack: the user's zero-sandbox settings (the user config file and the grants file) lie inside
// a directory the command may write, for example `XDG_CONFIG_HOME` or `ZERO_SANDBOX_GRANTS_PATH`
// pointed into the project. The command writes `{"sandbox":{"enabled":false}}` to the config, or
// an "always allow" grant, and the next invocation runs unsandboxed or grants it more.
// Fix: a workspace or write root that holds (or lies inside) the settings directory or the grants
// file is refused like one that would hand over the home directory: exit 2, invalid_argument,
// naming the path and why. Nothing runs; the settings stay as they were.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { runCli } from '../helpers/cli.js';
import { makeTree, rejection, sandboxTest } from '../helpers/sandbox.js';

const WHY = 'the command could turn the sandbox off or grant itself more for the next run';

sandboxTest('a workspace or write root holding the user config dir or the grants file is refused; the settings are not written', async () => {
  const t = makeTree('zs-own-settings-');
  try {
    const config = join(t.ws, 'cfg');
    mkdirSync(config);
    const env = { ...process.env, XDG_CONFIG_HOME: config, ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
    // What the command would do first; the refusal comes before anything runs.
    const run = await runCli(['run', '--workspace', t.ws, '--', 'mkdir', '-p', 'cfg/zero'], { env, cwd: t.ws });
    assert.is(run.code, 2, run.stderr);
    assert.match(run.stderr, `workspace ${t.ws} holds zero-sandbox's own settings (${join(config, 'zero')}): ${WHY} [invalid_argument]`);
    assert.not.ok(existsSync(join(config, 'zero')), 'nothing ran');

    const grants = join(t.outside, 'grants.json');
    const env2 = { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: grants };
    const write = await runCli(['run', '--workspace', t.ws, '--allow-write', t.outside, '--', 'touch', grants], { env: env2, cwd: t.ws });
    assert.is(write.code, 2, write.stderr);
    assert.match(write.stderr, `allowWrite ${t.outside} holds zero-sandbox's own settings (${grants})`);
    assert.equal(readdirSync(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('runSandboxed: the same refusal for the API (the settings as this process sees them)', async () => {
  const t = makeTree('zs-own-settings-');
  const saved = process.env.XDG_CONFIG_HOME;
  try {
    process.env.XDG_CONFIG_HOME = join(t.ws, 'cfg');
    const error = await rejection(runSandboxed('touch ran', { workspace: t.ws }));
    assert.is(error.code, 'invalid_argument');
    assert.match(error.message, `holds zero-sandbox's own settings (${join(t.ws, 'cfg', 'zero')})`);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
  } finally {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
    t.cleanup();
  }
});

test.run();
