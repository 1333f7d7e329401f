import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { MUST_WORK } from '../helpers/probe.js';

test('doctor --json prints the probe and exits 0 when the default policy is enforceable', async () => {
  const result = await runCli(['doctor', '--json']);
  const report = JSON.parse(result.stdout) as { canEnforceDefaultPolicy: boolean; landlockAbi: number; layers: Record<string, { available: boolean }> };
  assert.is(result.code, report.canEnforceDefaultPolicy ? 0 : 1);
  if (MUST_WORK && process.platform === 'linux') {
    assert.is(result.code, 0);
    const canaries = (JSON.parse(result.stdout) as { canaries: Array<{ name: string; enforced: boolean; detail: string }> }).canaries;
    assert.equal(canaries.map((c) => c.name), ['read_denied_file', 'write_outside_workspace', 'connect_host_loopback', 'open_host_unix_socket']);
    for (const canary of canaries) assert.ok(canary.enforced, `${canary.name}: ${canary.detail}`);
    assert.match(canaries.find((c) => c.name === 'read_denied_file')!.detail, process.platform === 'linux' ? /read as empty/ : /EACCES/);
    assert.ok(report.layers.userns?.available);
    assert.ok(report.layers.seccomp?.available);
    assert.ok(report.landlockAbi >= 1);
  }
});

test('doctor text names each layer and the verdict', async () => {
  const result = await runCli(['doctor']);
  if (process.platform === 'linux') {
    for (const layer of ['userns', 'mountns', 'pidns', 'netns', 'landlock', 'seccomp']) assert.match(result.stdout, layer);
  }
  assert.match(result.stdout, /Result: /);
});

test('a disabled layer makes doctor exit 1 and name the layer with a fix', async () => {
  const result = await runCli(['doctor'], { env: { ...process.env, ZERO_SANDBOX_TEST_DISABLE_LAYERS: 'landlock' } });
  assert.is(result.code, 1);
  assert.match(result.stdout, /missing landlock: disabled for testing/);
  assert.match(result.stdout, /fix: /);
});

test('unknown flags are usage errors on stderr with exit 2', async () => {
  const result = await runCli(['doctor', '--verbose']);
  assert.is(result.code, 2);
  assert.is(result.stdout, '');
  assert.match(result.stderr, /unknown flag --verbose/);
  assert.match(result.stderr, /zero-sandbox doctor --help/);
});

test('--help works for the CLI and for doctor', async () => {
  const top = await runCli(['--help']);
  assert.is(top.code, 0);
  assert.match(top.stdout, /Usage: zero-sandbox <command>/);
  const doctor = await runCli(['doctor', '--help']);
  assert.is(doctor.code, 0);
  assert.match(doctor.stdout, /Usage: zero-sandbox doctor/);
  const unknown = await runCli(['frobnicate']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
});

test('setup reports that no setup is required, in the Go Zero CLI shape', async () => {
  const result = await runCli(['setup', '--json']);
  const out = JSON.parse(result.stdout) as { platform: string; backend: string; ran: boolean; message: string; available: boolean };
  assert.is(out.ran, false);
  assert.is(out.message, `No native sandbox setup is required for ${out.platform}`);
  assert.is(result.code, out.available ? 0 : 1);
  if (MUST_WORK && process.platform === 'linux') assert.is(out.backend, 'linux-native');
  const bad = await runCli(['setup', '--force']);
  assert.is(bad.code, 2);
});

test.run();
