// SPDX-License-Identifier: MIT
// Backend selection: every platform branch, with the platform and the measured facts injected.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { MACOS_REQUIRED_FACTS, selectBackend, WINDOWS_REQUIRED_FACTS } from '../../lib/backend/select.js';
import { callNative } from '../../lib/native/load.js';
import type { NativeFact } from '../../lib/native/types.js';

const ok = (): NativeFact => ({ attempted: true, ok: true, errno: 0, value: 0 });
const failed = (errno: number, syscall: string): NativeFact => ({ attempted: true, ok: false, errno, syscall, value: 0 });
const notTried = (): NativeFact => ({ attempted: false, ok: false, errno: 0, value: 0 });

test('linux: linux-native, available when no default-policy layer is missing', () => {
  const info = selectBackend({ platform: 'linux', facts: {}, linuxMissing: [] });
  assert.equal(info, {
    name: 'linux-native', available: true, platform: 'linux', nativeIsolation: true, commandWrapping: true,
    setupInitialized: true,
  });
});

test('linux: a missing layer makes it unavailable and the message names the layer and reason', () => {
  const info = selectBackend({
    platform: 'linux',
    facts: {},
    linuxMissing: [{ layer: 'userns', reason: 'AppArmor restricts unprivileged user namespaces' }],
  });
  assert.is(info.name, 'linux-native');
  assert.is(info.available, false);
  assert.is(info.message, 'userns: AppArmor restricts unprivileged user namespaces');
});

test('darwin: macos-seatbelt, available when sandbox-exec ran a profile, a deny rule denied and the real profile ran', () => {
  const info = selectBackend({ platform: 'darwin', facts: { sandboxExec: ok(), seatbeltEnforced: ok(), seatbeltProfile: ok(), sandboxInit: ok() } });
  assert.is(info.name, 'macos-seatbelt');
  assert.is(info.available, true);
  assert.is(info.message, undefined);
});

test('darwin: sandbox-exec failing (already sandboxed) or absent is unavailable, with the reason', () => {
  const enforcedOnly = { seatbeltEnforced: ok(), seatbeltProfile: ok() };
  const nested = selectBackend({ platform: 'darwin', facts: { ...enforcedOnly, sandboxExec: failed(1, 'sandbox-exec exit 71') } });
  assert.is(nested.available, false);
  assert.match(nested.message ?? '', /^sandboxExec failed \(sandbox-exec exit 71, error 1\): .*already sandboxed/);
  const absent = selectBackend({ platform: 'darwin', facts: { ...enforcedOnly, sandboxExec: notTried() } });
  assert.is(absent.available, false);
  assert.match(absent.message ?? '', /^sandboxExec not measured/);
  const notEnforced = selectBackend({ platform: 'darwin', facts: { sandboxExec: ok(), seatbeltProfile: ok(), seatbeltEnforced: failed(0, 'sandbox-exec deny exit 0') } });
  assert.is(notEnforced.available, false);
  assert.match(notEnforced.message ?? '', /^seatbeltEnforced failed .*did not stop cat/);
  assert.is(selectBackend({ platform: 'darwin', facts: {} }).available, false);
  // The real profile this package builds did not compile on this macOS: refused, with the reason.
  const badProfile = selectBackend({ platform: 'darwin', facts: { sandboxExec: ok(), seatbeltEnforced: ok(), seatbeltProfile: failed(65, 'sandbox-exec with the network deny profile: unknown operation') } });
  assert.is(badProfile.available, false);
  assert.match(badProfile.message ?? '', /^seatbeltProfile failed \(sandbox-exec with the network deny profile: unknown operation, error 65\): the seatbelt profile zero-sandbox builds/);
});

test('win32: windows-appcontainer, available only when every required fact holds', () => {
  const all = Object.fromEntries(WINDOWS_REQUIRED_FACTS.map((name) => [name, ok()]));
  const info = selectBackend({ platform: 'win32', facts: all });
  assert.is(info.name, 'windows-appcontainer');
  assert.is(info.available, true);
  assert.is(info.setupInitialized, true);
  for (const name of WINDOWS_REQUIRED_FACTS) {
    const broken = selectBackend({ platform: 'win32', facts: { ...all, [name]: failed(5, `${name}Call`) } });
    assert.is(broken.available, false, name);
    assert.ok(broken.message?.startsWith(`${name} failed (${name}Call, error 5)`), broken.message);
  }
});

test('win32: a Windows API failure is named as a Win32 error or an HRESULT, never as an errno', () => {
  const all = Object.fromEntries(WINDOWS_REQUIRED_FACTS.map((name) => [name, ok()]));
  // 5 is access denied as a Win32 code and EIO as an errno: it must not be labelled as either's twin.
  const win32 = selectBackend({ platform: 'win32', facts: { ...all, firewallService: { ...failed(0, 'OpenSCManagerW'), win32Error: 5 } } });
  assert.ok(win32.message?.startsWith('firewallService failed (OpenSCManagerW, Win32 error 5)'), win32.message);
  const hresult = selectBackend({ platform: 'win32', facts: { ...all, appContainerProfile: { ...failed(0, 'CreateAppContainerProfile'), hresult: 0x80070005 } } });
  assert.ok(hresult.message?.startsWith('appContainerProfile failed (CreateAppContainerProfile, HRESULT 0x80070005)'), hresult.message);
});

test('win32: two missing facts are both reported', () => {
  const info = selectBackend({ platform: 'win32', facts: { jobObject: ok() } });
  assert.is(info.available, false);
  assert.match(info.message ?? '', /appContainerProfile not measured.*; securityCapabilities not measured.*; appContainerSpawn not measured.*; firewallService not measured/);
});

test('other platforms: unavailable, no native isolation, message names the platform', () => {
  for (const platform of ['freebsd', 'openbsd', 'aix', 'android', 'sunos']) {
    const info = selectBackend({ platform, facts: { sandboxExec: ok() } });
    assert.is(info.name, 'unavailable');
    assert.is(info.available, false);
    assert.is(info.nativeIsolation, false);
    assert.is(info.commandWrapping, false);
    assert.is(info.message, `no native sandbox backend for platform ${platform}; supported: linux, darwin, win32`);
  }
});

test('facts of another platform never make a backend available', () => {
  // A Linux probe carries no seatbelt or AppContainer facts; a Windows fact does not help macOS.
  const windowsFacts = Object.fromEntries(WINDOWS_REQUIRED_FACTS.map((name) => [name, ok()]));
  assert.is(selectBackend({ platform: 'darwin', facts: windowsFacts }).available, false);
  assert.is(selectBackend({ platform: 'win32', facts: { sandboxExec: ok() } }).available, false);
});

// On macOS and Windows: the real probe (sandbox-exec applying a profile and a deny rule; an
// AppContainer profile, capabilities, a kill-on-close job and cmd.exe run in a container). With
// ZERO_SANDBOX_MUST_WORK=1 (CI) every required fact must hold.
const REAL: Record<string, { name: string; facts: readonly string[] }> = {
  darwin: { name: 'macos-seatbelt', facts: MACOS_REQUIRED_FACTS },
  win32: { name: 'windows-appcontainer', facts: WINDOWS_REQUIRED_FACTS },
};
const here = REAL[process.platform];
if (here !== undefined) {
  test(`${process.platform}: the real probe measures every required fact and selection agrees`, () => {
    const probe = callNative((native) => native.probeSync());
    assert.is(probe.platform, process.platform);
    const info = selectBackend({ platform: process.platform, facts: probe.facts });
    assert.is(info.name, here.name);
    for (const name of here.facts) {
      const fact = probe.facts[name];
      assert.ok(fact !== undefined, `fact ${name} is missing from the probe`);
      if (process.env.ZERO_SANDBOX_MUST_WORK === '1') assert.ok(fact.attempted && fact.ok, `${name}: ${JSON.stringify(fact)}`);
    }
    assert.is(info.available, here.facts.every((name) => probe.facts[name]?.ok === true), info.message);
  });
}

test.run();
