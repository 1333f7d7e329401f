import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SANDBOX_ERROR_CODES, SandboxError, fromNative, isSandboxErrorCode } from '../../lib/errors.js';

test('native errors keep code, errno, syscall, path and layer', () => {
  const raw = Object.assign(new Error('mount(/tmp) failed: Operation not permitted'), {
    code: 'mount_failed',
    errno: 1,
    syscall: 'mount(/tmp)',
    path: '/tmp',
    layer: 'mount',
  });
  const error = fromNative(raw);
  assert.instance(error, SandboxError);
  assert.is(error.code, 'mount_failed');
  assert.is(error.errno, 1);
  assert.is(error.syscall, 'mount(/tmp)');
  assert.is(error.path, '/tmp');
  assert.is(error.layer, 'mount');
  assert.is(error.message, 'mount(/tmp) failed: Operation not permitted');
  assert.is(error.cause, raw);
});

test('an unknown native code becomes internal_error, a TypeError becomes invalid_argument', () => {
  assert.is(fromNative(Object.assign(new Error('x'), { code: 'EWHATEVER' })).code, 'internal_error');
  assert.is(fromNative(new TypeError('spec.argv must be an array')).code, 'invalid_argument');
  assert.is(fromNative('a string').code, 'internal_error');
});

test('a SandboxError passes through unchanged', () => {
  const original = new SandboxError('sandbox_unavailable', 'no landlock', { layer: 'landlock' });
  assert.is(fromNative(original), original);
});

test('codes are unique snake_case strings', () => {
  assert.is(new Set(SANDBOX_ERROR_CODES).size, SANDBOX_ERROR_CODES.length);
  for (const code of SANDBOX_ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
  assert.ok(isSandboxErrorCode('sandbox_unavailable'));
  assert.not.ok(isSandboxErrorCode('Sandbox_Unavailable'));
});

test.run();
