// The probe's answers are checked against what this test can observe on its own, by other means
// than the addon: the unshare(1) tool, a direct Landlock syscall from Python, /proc/self/status.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { probe } from '../../lib/probe.js';
import { MUST_WORK } from '../helpers/probe.js';

const linux = process.platform === 'linux';
const linuxTest = linux ? test : test.skip;

function observeUserns(): boolean {
  return spawnSync('unshare', ['--user', '--map-root-user', 'true']).status === 0;
}

function observeLandlockAbi(): number {
  const script =
    'import ctypes; libc = ctypes.CDLL(None, use_errno=True); ' +
    'print(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))';
  const out = spawnSync('python3', ['-c', script], { encoding: 'utf8' });
  const value = Number.parseInt(out.stdout.trim(), 10);
  return Number.isNaN(value) || value < 0 ? 0 : value;
}

linuxTest('probe reports the platform, kernel and user as the OS does', async () => {
  const report = await probe();
  assert.is(report.platform, 'linux');
  assert.is(report.kernelRelease, readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim());
  assert.is(report.uid, userInfo().uid);
  assert.is(report.isRoot, userInfo().uid === 0);
});

linuxTest('user namespaces: the probe agrees with unshare(1)', async () => {
  const report = await probe();
  const observed = observeUserns();
  assert.is(report.layers.userns?.available, observed);
  if (MUST_WORK) assert.ok(observed, 'CI requires user namespaces');
});

linuxTest('Landlock ABI: the probe agrees with a direct landlock_create_ruleset call', async () => {
  const report = await probe();
  const observed = observeLandlockAbi();
  assert.is(report.landlockAbi, observed);
  assert.is(report.layers.landlock?.available, observed >= 1);
  if (MUST_WORK) assert.ok(observed >= 1, 'CI requires Landlock');
});

linuxTest('seccomp: the probe agrees with the kernel advertising seccomp filters', async () => {
  const report = await probe();
  const status = readFileSync('/proc/self/status', 'utf8');
  const observed = /^Seccomp:\s+\d/m.test(status) && /^Seccomp_filters:/m.test(status);
  assert.is(report.layers.seccomp?.available, observed);
});

linuxTest('the default policy is enforceable on a machine that must work', async () => {
  const report = await probe();
  if (MUST_WORK) assert.equal(report.missing, []);
  assert.is(report.canEnforceDefaultPolicy, report.missing.length === 0);
});

test.run();
