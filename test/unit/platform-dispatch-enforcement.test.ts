// SPDX-License-Identifier: MIT
// The loss report for macOS and Windows (what the platform backend enforces, its limits, what a
// missing layer costs), and the Linux report unchanged against goldens made before the extension.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildEnforcementReport } from '../../lib/backend/enforcement.js';
import { SEATBELT_ENFORCED, SEATBELT_LIMITATIONS } from '../../lib/backend/macos/limitations.js';
import { APPCONTAINER_ENFORCED, APPCONTAINER_LIMITATIONS } from '../../lib/backend/windows/limitations.js';
import { buildProbeReport, type LayerName, type ProbeReport } from '../../lib/probe.js';

const fact = (ok: boolean) => ({ attempted: true, ok, errno: ok ? 0 : 1, value: 0 });

function darwin(ok: boolean): ProbeReport {
  return buildProbeReport({ platform: 'darwin', arch: 'arm64', release: '24.0.0', uid: 501, facts: { sandboxExec: fact(ok), seatbeltEnforced: fact(true), seatbeltProfile: fact(true) } }, {});
}

function windows(ok: boolean): ProbeReport {
  const facts = { appContainerProfile: fact(true), securityCapabilities: fact(true), jobObject: fact(true), appContainerSpawn: fact(true), firewallService: fact(ok) };
  return buildProbeReport({ platform: 'win32', arch: 'x64', release: '10.0.22631', uid: -1, facts }, {});
}

test('macOS with seatbelt working: every seatbelt capability enforced, its limits listed', () => {
  const r = buildEnforcementReport(darwin(true), { network: 'deny' });
  assert.is(r.backend, 'macos-seatbelt');
  assert.ok(r.complete);
  assert.equal(r.capabilities.map((c) => c.capability), [...SEATBELT_ENFORCED.map((c) => c.capability), 'secrets scrubbed from the environment']);
  assert.ok(r.capabilities.every((c) => c.enforced && c.reason === undefined));
  assert.equal(r.capabilities[0]!.by, SEATBELT_ENFORCED[0]!.by);
  assert.equal(r.limitations, [...SEATBELT_LIMITATIONS]);
});

test('macOS without a working seatbelt: incomplete, each lost capability names the probe reason', () => {
  const r = buildEnforcementReport(darwin(false), { network: 'deny' });
  assert.not.ok(r.complete);
  const lost = r.capabilities.filter((c) => !c.enforced);
  assert.is(lost.length, SEATBELT_ENFORCED.length);
  for (const c of lost) assert.match(c.reason!, /^seatbelt is not available on darwin: sandboxExec failed/);
});

test('Windows: network deny is enforced by the container; allow replaces it and stays complete', () => {
  const deny = buildEnforcementReport(windows(true), { network: 'deny' });
  assert.is(deny.backend, 'windows-appcontainer');
  assert.ok(deny.complete);
  assert.ok(deny.capabilities.some((c) => c.capability.startsWith('network deny') && c.enforced));
  assert.equal(deny.limitations, [...APPCONTAINER_LIMITATIONS]);
  const allow = buildEnforcementReport(windows(true), { network: 'allow' });
  assert.ok(allow.complete);
  assert.not.ok(allow.capabilities.some((c) => c.capability.startsWith('network deny')));
  assert.ok(allow.capabilities.some((c) => c.capability === 'network allowed (policy allow)'));
  assert.is(allow.capabilities.length, APPCONTAINER_ENFORCED.length + 1);
});

test('Windows without the firewall services: refused, and the report says why', () => {
  const r = buildEnforcementReport(windows(false), { network: 'deny' });
  assert.not.ok(r.complete);
  assert.match(r.capabilities.find((c) => !c.enforced)!.reason!, /appcontainer is not available on win32: firewallService failed/);
});

test('other platforms: nothing enforced, named', () => {
  const r = buildEnforcementReport(buildProbeReport({ platform: 'freebsd', arch: 'amd64', release: '14', uid: 1, facts: {} }, {}), { network: 'deny' });
  assert.not.ok(r.complete);
  assert.match(r.capabilities[0]!.reason!, /freebsd/);
});

test('Linux: output identical to the goldens recorded from the report before macOS/Windows were added', () => {
  const golden = JSON.parse(readFileSync(new URL('../../../test/fixtures/enforcement/linux-reports.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const names: LayerName[] = ['userns', 'mountns', 'pidns', 'netns', 'ipcns', 'utsns', 'landlock', 'seccomp'];
  const linux = (missing: LayerName[]): ProbeReport => {
    const layers: ProbeReport['layers'] = {};
    for (const n of names) layers[n] = missing.includes(n) ? { available: false, reason: `${n} is off`, measuredBy: 'test' } : { available: true, measuredBy: 'test' };
    return { platform: 'linux', arch: 'x86_64', kernelRelease: '6.8', isRoot: false, uid: 1000, backend: 'linux-native', landlockAbi: 4, layers, macos: { applicable: false }, windows: { applicable: false }, canEnforceDefaultPolicy: missing.length === 0, missing: [], disabledForTesting: [], facts: {} };
  };
  assert.equal(buildEnforcementReport(linux([]), { network: 'deny' }), golden['complete-deny']);
  assert.equal(buildEnforcementReport(linux(['netns']), { network: 'deny' }), golden['no-netns-deny']);
  assert.equal(buildEnforcementReport(linux(['landlock', 'seccomp']), { network: 'allow' }), golden['no-landlock-seccomp-allow']);
});

test.run();
