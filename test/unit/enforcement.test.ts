import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildEnforcementReport } from '../../lib/backend/enforcement.js';
import type { LayerName, ProbeReport } from '../../lib/probe.js';

function report(missing: LayerName[] = [], platform = 'linux'): ProbeReport {
  const layers: ProbeReport['layers'] = {};
  for (const name of ['userns', 'mountns', 'pidns', 'netns', 'ipcns', 'utsns', 'landlock', 'seccomp'] as LayerName[]) {
    layers[name] = missing.includes(name) ? { available: false, reason: `${name} is off`, measuredBy: 'test' } : { available: true, measuredBy: 'test' };
  }
  return {
    platform, arch: 'x86_64', kernelRelease: '6.8', isRoot: false, uid: 1000, backend: 'linux-native', landlockAbi: 4, layers,
    macos: { applicable: false }, windows: { applicable: false }, canEnforceDefaultPolicy: missing.length === 0, missing: [],
    disabledForTesting: [], facts: {},
  };
}

test('everything enforced on a complete Linux machine, with the limits stated', () => {
  const r = buildEnforcementReport(report(), { network: 'deny' });
  assert.ok(r.complete);
  assert.ok(r.capabilities.every((c) => c.enforced));
  assert.ok(r.limitations.some((l) => l.includes('hardlink')));
});

test('a missing layer marks exactly the capabilities that depend on it, with the reason', () => {
  const r = buildEnforcementReport(report(['netns']), { network: 'deny' });
  assert.not.ok(r.complete);
  const lost = r.capabilities.filter((c) => !c.enforced);
  assert.equal(lost.map((c) => c.capability), ['no network contact outside the sandbox (TCP, UDP, host Unix sockets)']);
  assert.match(lost[0]!.reason!, /netns is off/);
  assert.ok(buildEnforcementReport(report(['netns']), { network: 'allow' }).complete, 'network allow does not need netns');
});

test('other platforms report that nothing is enforced natively yet', () => {
  const r = buildEnforcementReport(report([], 'darwin'), { network: 'deny' });
  assert.not.ok(r.complete);
  assert.match(r.capabilities[0]!.reason!, /darwin/);
});

test.run();
