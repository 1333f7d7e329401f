// SPDX-License-Identifier: MIT
// The public options of runSandboxed/spawnSandboxed are checked by one zod schema before anything
// runs: an unknown key, a wrong type or a bad value rejects with invalid_argument naming the option
// and what it accepts. These calls never reach the sandbox (validation comes first).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { validateOptions } from '../../lib/sandbox/options.js';

async function rejects(options: unknown, pattern: RegExp): Promise<void> {
  let error: unknown;
  try {
    await runSandboxed(['true'], options as never);
  } catch (caught) {
    error = caught;
  }
  assert.instance(error, SandboxError, `no SandboxError for ${JSON.stringify(options)}`);
  assert.is((error as SandboxError).code, 'invalid_argument');
  assert.match((error as SandboxError).message, pattern);
}

test('a bad network value is an error naming the accepted values, not a silent deny', async () => {
  await rejects({ network: 'allwo' }, /options\.network.*"allwo".*"deny".*"allow"/);
});

test('an unknown option is an error with a suggestion and the accepted names', async () => {
  await rejects({ timeout: 5000 }, /options\.timeout is not an option \(did you mean timeoutMs\?\); accepted: workspace, cwd, network/);
  await rejects({ limits: { tmpSize: 1 } }, /options\.limits\.tmpSize is not an option/);
});

test('wrong types name the option and the expected form', async () => {
  await rejects(null, /options must be an object \(got null\)/);
  await rejects('x', /options must be an object/);
  await rejects({ env: { A: 1 } }, /options\.env\.A is invalid \(got number 1\)/);
  await rejects({ allowWrite: 'x' }, /options\.allowWrite.*array of non-empty path strings/);
  await rejects({ timeoutMs: -1 }, /options\.timeoutMs.*positive integer/);
  await rejects({ timeoutMs: 1.5 }, /options\.timeoutMs/);
  await rejects({ maxBuffer: 0 }, /options\.maxBuffer/);
  await rejects({ signal: {} }, /options\.signal.*AbortSignal/);
  await rejects({ onPermissionRequest: 'yes' }, /options\.onPermissionRequest/);
  await rejects({ permissionMode: 'yolo' }, /options\.permissionMode.*"auto", "ask"/);
  await rejects({ input: 5 }, /options\.input.*string or Uint8Array/);
  await rejects({ workspace: '' }, /options\.workspace/);
});

test('valid options pass, process.env itself included', () => {
  validateOptions('run', { env: process.env, network: 'allow', limits: { processes: 64 } });
  validateOptions('spawn', { env: { ...process.env, A: undefined }, stdio: 'ignore', signal: new AbortController().signal });
  validateOptions('run', {});
});

test('spawnSandboxed: stdio accepts a mode or three, nothing else; capture is not public', () => {
  const throws = (options: unknown, pattern: RegExp) => {
    try {
      spawnSandboxed(['true'], options as never);
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, pattern);
      return;
    }
    assert.unreachable(`spawnSandboxed accepted ${JSON.stringify(options)}`);
  };
  throws({ stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }, /options\.stdio.*array of 3/);
  throws({ stdio: 'inherits' }, /options\.stdio.*"pipe".*"ignore".*"inherit"/);
  throws({ capture: { input: new Uint8Array(), maxBuffer: 1 } }, /options\.capture is not an option/);
  throws({ input: 'x' }, /options\.input is not an option/);
});

test('the JSON Schema in schema/ is what the zod schema generates (they cannot drift)', () => {
  const script = fileURLToPath(new URL('../../../scripts/gen-config-schema.mjs', import.meta.url));
  const result = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
});

test.run();
