import { constants } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import type { NativeFact, NativeProbe } from '../../lib/native/types.js';
import { buildProbeReport, errnoName, ranOutMeasuring } from '../../lib/probe.js';

const NAMES = [
  'userNamespace', 'uidMap', 'mountNamespace', 'mountPrivate', 'mountSetattr', 'tmpfs', 'netNamespace',
  'loopbackUp', 'ipcNamespace', 'utsNamespace', 'pidNamespace', 'procMount', 'landlockAbi',
  'landlockEnforced', 'noNewPrivs', 'seccompFilter',
];

function linuxProbe(overrides: Record<string, Partial<NativeFact>> = {}): NativeProbe {
  const facts: Record<string, NativeFact> = {};
  for (const name of NAMES) {
    facts[name] = { attempted: true, ok: true, errno: 0, value: name === 'landlockAbi' ? 4 : 0, ...overrides[name] };
  }
  return { platform: 'linux', arch: 'x86_64', release: '6.8.0', uid: 1000, facts };
}

test('all layers present: the default policy is enforceable', () => {
  const report = buildProbeReport(linuxProbe(), {});
  assert.ok(report.canEnforceDefaultPolicy);
  assert.is(report.backend, 'linux-native');
  assert.is(report.landlockAbi, 4);
  assert.equal(report.missing, []);
  assert.not.ok(report.isRoot);
  assert.is(report.macos.reason, 'not this platform');
  assert.is(report.windows.reason, 'not this platform');
});

test('a failed user namespace makes every namespace layer missing, with errno names', () => {
  const skipped = { attempted: false, ok: false };
  const report = buildProbeReport(
    linuxProbe({
      userNamespace: { ok: false, errno: 1, syscall: 'unshare(CLONE_NEWUSER)' },
      uidMap: skipped, mountNamespace: skipped, mountPrivate: skipped, mountSetattr: skipped, tmpfs: skipped,
      netNamespace: skipped, loopbackUp: skipped, ipcNamespace: skipped, utsNamespace: skipped,
      pidNamespace: skipped, procMount: skipped,
    }),
    {},
  );
  assert.not.ok(report.canEnforceDefaultPolicy);
  assert.is(report.backend, 'unavailable');
  const userns = report.layers.userns!;
  assert.not.ok(userns.available);
  assert.is(userns.errnoName, 'EPERM');
  assert.match(userns.reason!, /unshare\(CLONE_NEWUSER\) failed \(EPERM\)/);
  assert.ok(userns.fix!.length > 0);
  assert.equal(report.missing.map((m) => m.layer), ['userns', 'mountns', 'pidns', 'netns', 'ipcns', 'utsns']);
});

test('Landlock ABI 0 is reported as missing landlock', () => {
  const report = buildProbeReport(
    linuxProbe({ landlockAbi: { ok: false, errno: 38, value: 0, syscall: 'landlock_create_ruleset(VERSION)' }, landlockEnforced: { attempted: false, ok: false } }),
    {},
  );
  assert.is(report.landlockAbi, 0);
  assert.equal(report.missing.map((m) => m.layer), ['landlock']);
  assert.match(report.layers.landlock!.reason!, /ENOSYS/);
});

test('the test override can only remove layers', () => {
  const report = buildProbeReport(linuxProbe(), { ZERO_SANDBOX_TEST_DISABLE_LAYERS: 'seccomp, landlock' });
  assert.not.ok(report.canEnforceDefaultPolicy);
  assert.equal(report.disabledForTesting, ['seccomp', 'landlock']);
  assert.equal(report.missing.map((m) => m.layer), ['landlock', 'seccomp']);
  assert.match(report.missing[0]!.reason, /ZERO_SANDBOX_TEST_DISABLE_LAYERS/);
});

test('other platforms report themselves without a Linux layer table', () => {
  const report = buildProbeReport({ platform: 'darwin', arch: 'arm64', release: '24.0.0', uid: 501, facts: {} }, {});
  assert.is(report.macos.applicable, true);
  assert.is(report.windows.reason, 'not this platform');
  assert.not.ok(report.canEnforceDefaultPolicy);
  assert.is(errnoName(2), 'ENOENT');
});

test('macOS and Windows are judged from their measured facts through the backend selection', () => {
  const ok = { attempted: true, ok: true, errno: 0, value: 0 };
  const mac = buildProbeReport({ platform: 'darwin', arch: 'arm64', release: '24.0.0', uid: 501, facts: { sandboxExec: ok, seatbeltEnforced: ok, seatbeltProfile: ok } }, {});
  assert.ok(mac.canEnforceDefaultPolicy);
  assert.is(mac.backend, 'macos-seatbelt');
  assert.ok(mac.layers.seatbelt?.available);
  const macOff = buildProbeReport({ platform: 'darwin', arch: 'arm64', release: '24.0.0', uid: 501, facts: { sandboxExec: ok, seatbeltEnforced: ok, seatbeltProfile: ok } }, { ZERO_SANDBOX_TEST_DISABLE_LAYERS: 'seatbelt' });
  assert.not.ok(macOff.canEnforceDefaultPolicy);
  const win = buildProbeReport({ platform: 'win32', arch: 'x64', release: '', uid: -1, facts: { appContainerProfile: ok } }, {});
  assert.not.ok(win.canEnforceDefaultPolicy);
  assert.is(win.missing[0]!.layer, 'appcontainer');
  assert.match(win.missing[0]!.reason, /securityCapabilities/);
});

test('a measurement in which a step ran out of processes or descriptors is not one to keep', () => {
  assert.is(ranOutMeasuring(linuxProbe()), false);
  assert.is(ranOutMeasuring(linuxProbe({ pidNamespace: { ok: false, errno: constants.errno.EPERM } })), false, 'a layer refused (EPERM) is a finding');
  const { EAGAIN, EMFILE, ENFILE } = constants.errno;
  for (const errno of [EAGAIN, EMFILE, ENFILE]) {
    assert.is(ranOutMeasuring(linuxProbe({ pidNamespace: { ok: false, errno } })), true, `errno ${errno}`);
  }
  assert.is(ranOutMeasuring(linuxProbe({ pidNamespace: { ok: true, errno: EAGAIN } })), false, 'only a failed step counts');
  const noSpace = linuxProbe({ userNamespace: { ok: false, errno: constants.errno.ENOSPC } });
  assert.is(ranOutMeasuring(noSpace, () => true), true, 'ENOSPC with every namespace limit above 0: a count reached');
  assert.is(ranOutMeasuring(noSpace, () => false), false, 'ENOSPC with a limit of 0: namespaces switched off, a finding');
});

test.run();
