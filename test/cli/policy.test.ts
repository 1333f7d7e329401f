// SPDX-License-Identifier: MIT
// `zero-sandbox policy`: JSON shapes, --effective, config tightening rules and the loss report.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { makeCliPlace } from '../fixtures/policy/cli-env.js';

test('policy --json has the Go Zero CLI keys, the profile and the loss report', async () => {
  const p = makeCliPlace();
  try {
    p.write(join(p.config, 'zero', 'config.json'), '{"sandbox": {}}');
    const r = await runCli(['policy', '--json'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(Object.keys(out), ['policy', 'backend', 'plan', 'grantsPath', 'permissionProfileNote', 'configFiles']);
    assert.equal(out.policy, { mode: 'enforce', network: 'deny', enforceWorkspace: true });
    assert.is(out.grantsPath, p.grants);
    assert.is(out.plan.workspaceRoot, p.ws);
    const roots = out.plan.permissionProfile.fileSystem.writeRoots;
    assert.equal(roots[0], { root: p.ws, readOnlySubpaths: [`${p.ws}/.git/hooks`, `${p.ws}/.git/config`], protectedMetadataNames: ['.zero', '.agents'] });
    assert.is(out.plan.permissionProfile.network.mode, 'deny');
    assert.ok(out.plan.permissionProfile.fileSystem.denyReadIfExists.includes(join(p.config, 'zero', 'config.json')), 'the zero config dir is hidden from commands');
    const e = out.plan.enforcement;
    assert.ok(Array.isArray(e.capabilities) && e.capabilities.length > 0);
    assert.is(e.complete, e.capabilities.every((c: { enforced: boolean }) => c.enforced));
  } finally {
    p.cleanup();
  }
});

test('a layer that cannot be enforced shows up as not enforced, with the reason, and the backend as unavailable', async () => {
  const p = makeCliPlace();
  try {
    const r = await runCli(['policy', '--json'], { env: { ...p.env, ZERO_SANDBOX_TEST_DISABLE_LAYERS: 'landlock' }, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const missing = out.plan.enforcement.capabilities.find((c: { enforced: boolean; reason?: string }) => !c.enforced && c.reason?.includes('landlock'));
    assert.ok(missing, JSON.stringify(out.plan.enforcement));
    assert.match(missing.reason, 'disabled for testing');
    assert.is(out.plan.enforcement.complete, false);
    assert.is(out.backend.available, false);
    assert.is(out.plan.commandWrapped, false);
  } finally {
    p.cleanup();
  }
});

test('policy --effective adds write roots and guards; text has the Go Zero CLI header', async () => {
  const p = makeCliPlace();
  try {
    let r = await runCli(['policy', '--effective', '--json'], { env: p.env, cwd: p.ws });
    const out = JSON.parse(r.stdout);
    assert.equal(out.guards, { interactiveCommand: true, network: true, workspace: true });
    assert.is(out.workspaceRoot, p.ws);
    assert.is(out.writeRoots[0], p.ws);
    r = await runCli(['policy'], { env: p.env, cwd: p.ws });
    assert.match(r.stdout, `Zero sandbox policy\nroot: ${p.ws}\nmode: enforce\nnetwork: deny\n`);
    r = await runCli(['policy', '--effective'], { env: p.env, cwd: p.ws });
    assert.match(r.stdout, /^Zero effective sandbox policy\n/);
    assert.match(r.stdout, '\nworkspace_guard: enabled\n');
    r = await runCli(['policy', '--bogus'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 2);
  } finally {
    p.cleanup();
  }
});

test('user config sets the policy; a project config may only tighten (loosening is reported, not applied)', async () => {
  const p = makeCliPlace();
  try {
    // A directory in the home (the home itself is never a write root: it would hand the host over).
    const extra = join(p.root, 'extra');
    p.write(join(extra, '.keep'), '');
    p.write(join(p.config, 'zero', 'config.json'), '{"model": "x", "sandbox": {"network": "allow", "additionalWriteRoots": ["' + extra + '"]}}');
    let r = await runCli(['policy', '--effective', '--json'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    let out = JSON.parse(r.stdout);
    assert.is(out.policy.network, 'allow');
    assert.ok(out.writeRoots.includes(extra));
    p.write(join(p.config, 'zero', 'config.json'), '{"sandbox": {}}');
    p.write(join(p.ws, '.zero', 'config.json'), '{"sandbox": {"network": "allow", "enabled": false, "denyRead": ["secret"]}}');
    p.write(join(p.ws, 'secret', 'x'), 'x');
    r = await runCli(['policy', '--json'], { env: p.env, cwd: p.ws });
    out = JSON.parse(r.stdout);
    assert.is(out.policy.network, 'deny');
    assert.is(out.policy.mode, 'enforce');
    assert.equal(out.policy.denyRead, ['secret']);
    assert.equal(out.plan.permissionProfile.fileSystem.denyRead, [join(p.ws, 'secret')]);
    assert.match(r.stderr, 'sandbox.network: ignored; a project config may only tighten the sandbox');
    assert.match(r.stderr, 'sandbox.enabled: ignored');
  } finally {
    p.cleanup();
  }
});

test('policy shows the caps a run gets: the defaults, the config\'s limits and the --limit-* flags, each with its source', async () => {
  const p = makeCliPlace();
  try {
    p.write(join(p.config, 'zero', 'config.json'), '{"sandbox": {"limits": {"tmpBytes": "512M", "processes": 2000}}}');
    p.write(join(p.ws, '.zero', 'config.json'), '{"sandbox": {"limits": {"processes": 1500}}}');
    let r = await runCli(['policy', '--json', '--limit-shm', '64M', '--limit-memory', '2G'], { env: p.env, cwd: p.ws, timeoutMs: 240_000 });
    assert.is(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout).plan;
    const MIB = 1024 * 1024;
    if (process.platform === 'linux') {
      assert.equal(plan.limits, { tmpBytes: 512 * MIB, processes: 1500, shmBytes: 64 * MIB, memoryBytes: 2048 * MIB });
      assert.equal(plan.limitSources, { tmpBytes: 'config', processes: 'config', shmBytes: 'flag', memoryBytes: 'flag' });
      assert.ok(['rlimit', 'pids-cgroup', 'pid-max', 'none'].includes(plan.processLimitBy), plan.processLimitBy);
      assert.is(plan.limitsNotEnforced === undefined, plan.processLimitBy !== 'none');
    }
    r = await runCli(['policy', '--limit-processes', '300'], { env: p.env, cwd: p.ws, timeoutMs: 240_000 });
    assert.is(r.code, 0, r.stderr);
    if (process.platform === 'linux') {
      assert.match(r.stdout, '\nlimit: tmpBytes 512M (config)\n');
      assert.match(r.stdout, '\nlimit: processes 300 (flag)\n');
      assert.match(r.stdout, /\nlimit: shmBytes \d+[GMK]? \(default\)\n/);
    }
    r = await runCli(['policy', '--limit-tmp', 'lots'], { env: p.env, cwd: p.ws, timeoutMs: 240_000 });
    assert.is(r.code, 2, 'a bad size is a usage error');
    assert.match(r.stderr, '--limit-tmp');
  } finally {
    p.cleanup();
  }
});

test.run();
