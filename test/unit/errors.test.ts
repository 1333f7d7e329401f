import { constants } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SANDBOX_ERROR_CODES, SandboxError, fromNative, isSandboxErrorCode } from '../../lib/errors.js';
import { namespaceCountsAboveZero } from '../../lib/process-limits.js';

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

test('a full descriptor table or a refused clone is resource_exhausted whichever layer met it, that layer kept', () => {
  const { EMFILE, ENFILE, EACCES } = constants.errno;
  const raw = Object.assign(new Error('landlock_create_ruleset failed: Too many open files'), { code: 'landlock_unsupported', errno: EMFILE, syscall: 'landlock_create_ruleset', layer: 'landlock' });
  const error = fromNative(raw);
  assert.is(error.code, 'resource_exhausted');
  assert.is(error.layer, 'landlock');
  assert.is(error.errno, EMFILE);
  assert.match(error.message, /^landlock_create_ruleset failed: Too many open files; .*RLIMIT_NOFILE.* is reached: nothing ran$/);
  const system = fromNative(Object.assign(new Error('pipe2(stdio) failed'), { code: 'spawn_failed', errno: ENFILE }));
  assert.is(system.code, 'resource_exhausted');
  assert.match(system.message, /system's open-file table is full/);
  assert.is(fromNative(Object.assign(new Error('open(/x) failed'), { code: 'native_unavailable', errno: EACCES })).code, 'native_unavailable', 'other errors keep their code');
  const { EAGAIN } = constants.errno;
  const clone = fromNative(Object.assign(new Error('clone(CLONE_NEWUSER|...) failed'), { code: 'spawn_failed', errno: EAGAIN, syscall: 'clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|...)', layer: 'userns' }));
  assert.is(clone.code, 'resource_exhausted', 'a clone refused for want of processes');
  assert.match(clone.message, /RLIMIT_NPROC/);
  assert.is(fromNative(Object.assign(new Error('write failed'), { code: 'spawn_failed', errno: EAGAIN, syscall: 'write(pipe)' })).code, 'spawn_failed', 'EAGAIN elsewhere is no exhaustion');
});

test('a namespace refused with ENOSPC is resource_exhausted where no kind of namespace is switched off', () => {
  const { ENOSPC, EACCES } = constants.errno;
  // This machine's limits decide which: above 0 a count was reached; a 0 is a missing layer.
  const counted = namespaceCountsAboveZero();
  const clone = fromNative(Object.assign(new Error('clone(CLONE_NEWUSER|...) failed'), { code: 'userns_denied', errno: ENOSPC, syscall: 'clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|...)', layer: 'userns' }));
  assert.is(clone.code, counted ? 'resource_exhausted' : 'userns_denied');
  if (counted) assert.match(clone.message, /user\.max_\*_namespaces\) is reached: nothing ran$/);
  const copy = fromNative(Object.assign(new Error('detach_clone(/w) failed'), { code: 'mount_failed', errno: ENOSPC, syscall: 'detach_clone(/w)', layer: 'mount' }));
  assert.is(copy.code, counted ? 'resource_exhausted' : 'mount_failed');
  assert.is(copy.layer, 'mount');
  if (counted) assert.match(copy.message, /fs\.mount-max/);
  const landlock = fromNative(Object.assign(new Error('landlock_add_rule failed'), { code: 'landlock_unsupported', errno: ENOSPC, layer: 'landlock' }));
  assert.is(landlock.code, 'landlock_unsupported', 'ENOSPC of another layer is no namespace count');
  assert.is(fromNative(Object.assign(new Error('mount failed'), { code: 'mount_failed', errno: EACCES, layer: 'mount' })).code, 'mount_failed');
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
