// SPDX-License-Identifier: MIT
// The AppContainer spec builder: golden files, container naming, capabilities per network mode,
// the ACL plan, job limits and the errors for plans Windows cannot carry.
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import type { SandboxPlan, WritableRoot } from '../../lib/backend/types.js';
import {
  buildAppContainerSpec,
  buildContainerName,
  buildNativeWindowsSpec,
  CAPABILITY_SIDS,
} from '../../lib/backend/windows/spec.js';

const FIXTURES = new URL('../../../test/fixtures/windows/', import.meta.url);
const UPDATE = process.env.ZERO_SANDBOX_UPDATE_GOLDEN === '1';
const WS = 'C:\\Users\\dev\\project';
const TMP = 'C:\\Users\\dev\\AppData\\Local\\Temp\\zero-sandbox-42';

function writeRoot(root: string): WritableRoot {
  return { root, readOnlySubpaths: [`${root}\\.git\\hooks`, `${root}\\.git\\config`], protectedNames: ['.zero', '.agents'] };
}

function plan(overrides: Partial<SandboxPlan> = {}): SandboxPlan {
  return {
    argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/c', 'echo hi'],
    cwd: WS,
    env: { Path: 'C:\\Windows\\System32', SystemRoot: 'C:\\Windows', ZERO_SANDBOXED: '1', COMSPEC: 'C:\\Windows\\System32\\cmd.exe' },
    network: 'deny',
    workspace: WS,
    writeRoots: [writeRoot(WS)],
    readRoots: ['C:\\'],
    denyRead: [],
    denyWrite: [],
    blockUnixSockets: true,
    limits: {},
    ...overrides,
  };
}

const CASES: Record<string, SandboxPlan> = {
  'workspace-network-deny': plan(),
  'deny-lists-network-allow': plan({
    network: 'allow',
    argv: ['C:\\Program Files\\nodejs\\node.exe', '-e', 'console.log("hi there")'],
    writeRoots: [writeRoot(WS), writeRoot('D:\\shared\\lib')],
    readRoots: ['C:\\', 'D:\\tools'],
    denyRead: ['C:\\Users\\dev\\.ssh\\id_ed25519', `${WS}\\config\\secrets\\prod.key`],
    denyWrite: [`${WS}\\secret.txt`, `${WS}\\SECRET.TXT`],
    limits: { memoryBytes: 1073741824, processes: 64 },
  }),
};

for (const [name, p] of Object.entries(CASES)) {
  test(`golden: ${name}`, () => {
    const spec = buildAppContainerSpec(p, { tmpDir: TMP });
    const url = new URL(`${name}.json`, FIXTURES);
    const text = `${JSON.stringify({ spec, native: buildNativeWindowsSpec(spec) }, null, 2)}\n`;
    if (UPDATE) writeFileSync(url, text);
    assert.fixture(text, readFileSync(url, 'utf8'));
  });
}

test('container name: stable, case-insensitive, distinct per workspace, valid for CreateAppContainerProfile', () => {
  const a = buildContainerName(WS);
  assert.is(a, buildContainerName('c:\\users\\DEV\\Project'));
  assert.is.not(a, buildContainerName('C:\\Users\\dev\\other'));
  assert.ok(a.length <= 64);
  assert.match(a, /^[A-Za-z0-9._-]+$/);
  assert.match(a, /^zero-sandbox\.[0-9a-f]{32}$/);
});

test('attack: narrowing allowWrite or allowRead gets a new container SID, so the ACEs of the wider policy grant nothing', () => {
  const wide = buildAppContainerSpec(plan({ writeRoots: [writeRoot(WS), writeRoot('D:\\shared\\lib')], readRoots: ['C:\\', 'D:\\tools'] }), { tmpDir: TMP });
  const narrowWrite = buildAppContainerSpec(plan({ readRoots: ['C:\\', 'D:\\tools'] }), { tmpDir: TMP });
  const narrowRead = buildAppContainerSpec(plan({ writeRoots: [writeRoot(WS), writeRoot('D:\\shared\\lib')], readRoots: ['C:\\'] }), { tmpDir: TMP });
  assert.is.not(narrowWrite.containerName, wide.containerName);
  assert.is.not(narrowRead.containerName, wide.containerName);
  assert.is.not(narrowRead.containerName, narrowWrite.containerName);
  // One policy keeps one container across runs, whatever its private temp dir and spelling.
  const again = buildAppContainerSpec(plan({ writeRoots: [writeRoot('c:\\users\\DEV\\project'), writeRoot('d:\\SHARED\\lib')], readRoots: ['C:\\', 'D:\\TOOLS'] }), { tmpDir: `${TMP}-other` });
  assert.is(again.containerName, wide.containerName);
  // A write grant and a read grant of one path are different policies.
  assert.is.not(buildContainerName(WS, ['allow-read:D:\\x']), buildContainerName(WS, ['allow-write:D:\\x']));
});

test('capabilities: none for network deny, internetClient and privateNetworkClientServer for allow', () => {
  const deny = buildAppContainerSpec(plan(), { tmpDir: TMP });
  assert.equal(deny.capabilities, []);
  assert.equal(deny.capabilitySids, []);
  const allow = buildAppContainerSpec(plan({ network: 'allow' }), { tmpDir: TMP });
  assert.equal(allow.capabilitySids, [CAPABILITY_SIDS.internetClient, CAPABILITY_SIDS.privateNetworkClientServer]);
  assert.equal(allow.capabilitySids, ['S-1-15-3-1', 'S-1-15-3-3']);
});

test('ACL plan: allow-write per write root and temp, deny-write for protected paths, deny-read for denyRead', () => {
  const spec = buildAppContainerSpec(CASES['deny-lists-network-allow']!, { tmpDir: TMP });
  const has = (kind: string, path: string, ifMissing: string): boolean =>
    spec.aclPlan.some((e) => e.kind === kind && e.path === path && e.ifMissing === ifMissing);
  assert.ok(has('allow-write', WS, 'fail'));
  assert.ok(has('allow-write', 'D:\\shared\\lib', 'fail'));
  assert.ok(has('allow-write', TMP, 'fail'));
  assert.ok(has('allow-read', 'D:\\tools', 'fail'));
  for (const root of [WS, 'D:\\shared\\lib']) {
    for (const sub of ['.git\\hooks', '.git\\config', '.zero', '.agents']) assert.ok(has('deny-write', `${root}\\${sub}`, 'skip'));
  }
  assert.ok(has('deny-read', 'C:\\Users\\dev\\.ssh\\id_ed25519', 'fail'));
  // UNC read roots work; a share root, like a drive root, is never ACL'd.
  const unc = buildAppContainerSpec(plan({ readRoots: ['\\\\srv\\share\\', '\\\\srv\\share\\tools'] }), { tmpDir: TMP });
  assert.equal(unc.aclPlan.filter((e) => e.kind === 'allow-read').map((e) => e.path), ['\\\\srv\\share\\tools']);
  // A volume root is never ACL'd (it would rewrite every ACL on the drive).
  assert.not.ok(spec.aclPlan.some((e) => e.path === 'C:\\'));
  // Attack: renaming a parent cannot carry a denied or protected path out of its ACE.
  for (const dir of [`${WS}\\.git`, `${WS}\\config`, `${WS}\\config\\secrets`, 'D:\\shared\\lib\\.git']) {
    assert.ok(has('deny-delete', dir, 'skip'), dir);
  }
  assert.not.ok(spec.aclPlan.some((e) => e.kind === 'deny-delete' && e.path.toLowerCase() === WS.toLowerCase()));
  assert.not.ok(spec.aclPlan.some((e) => e.kind === 'deny-delete' && e.path.startsWith('C:\\Users\\dev\\.ssh')));
  // Case-insensitive de-duplication keeps the first spelling.
  assert.is(spec.aclPlan.filter((e) => e.path.toLowerCase() === `${WS}\\secret.txt`.toLowerCase()).length, 1);
  // Allows come before every deny.
  const firstDeny = spec.aclPlan.findIndex((e) => e.kind.startsWith('deny'));
  assert.ok(spec.aclPlan.slice(firstDeny).every((e) => e.kind.startsWith('deny')));
  const native = buildNativeWindowsSpec(spec);
  assert.is(native.commandLine, spec.commandLine);
  assert.is(native.jobMemoryBytes, 1073741824);
  assert.is(native.aclKinds.length, native.aclPaths.length);
  assert.is(native.aclKinds[native.aclPaths.indexOf(`${WS}\\.zero`)], 'deny-write?');
});

test('attack: a volume root as a write root (C:\\, a share root, the temp dir) is refused, not granted drive-wide', () => {
  for (const [overrides, tmpDir, field] of [
    [{ writeRoots: [writeRoot('C:\\')] }, TMP, 'writeRoots[0].root'],
    [{ writeRoots: [writeRoot(WS), writeRoot('\\\\srv\\share\\')] }, TMP, 'writeRoots[1].root'],
    [{}, 'D:\\', 'tmpDir'],
  ] as Array<[Partial<SandboxPlan>, string, string]>) {
    try {
      buildAppContainerSpec(plan(overrides), { tmpDir });
      assert.unreachable(`accepted ${field}`);
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, new RegExp(`${field.replace(/[[\]]/g, '\\$&')} .* is a volume root`));
    }
  }
});

test('job limits and the environment block', () => {
  const spec = buildAppContainerSpec(CASES['deny-lists-network-allow']!, { tmpDir: TMP });
  assert.equal(spec.job, { killOnClose: true, memoryBytes: 1073741824, processLimit: 64 });
  assert.equal(buildAppContainerSpec(plan(), { tmpDir: TMP }).job, { killOnClose: true, memoryBytes: 0, processLimit: 0 });
  assert.equal(buildAppContainerSpec(plan(), { tmpDir: TMP }).env.map((e) => e.split('=')[0]),
    ['COMSPEC', 'Path', 'SystemRoot', 'ZERO_SANDBOXED']);
});

test('fails closed on limits a job object cannot enforce, naming the limit', () => {
  for (const limits of [{ cpuSeconds: 5 }, { fileSizeBytes: 10 }, { openFiles: 20 }]) {
    try {
      buildAppContainerSpec(plan({ limits }), { tmpDir: TMP });
      assert.unreachable();
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'sandbox_unavailable');
      assert.ok((error as SandboxError).message.includes(Object.keys(limits)[0]!));
    }
  }
});

test('invalid plans fail with invalid_argument naming the field', () => {
  const cases: Array<[Partial<SandboxPlan>, string, RegExp]> = [
    [{ denyRead: ['relative\\x'] }, TMP, /denyRead\[0\] .* is not an absolute drive-letter or UNC path/],
    [{ denyWrite: ['C:/Users/x'] }, TMP, /denyWrite\[0\] .* is not normalised/],
    [{ denyWrite: ['C:\\a\\..\\b'] }, TMP, /denyWrite\[0\] .* contains \. or \.\. components/],
    [{ readRoots: ['\\\\?\\C:\\x'] }, TMP, /readRoots\[0\]/],
    [{ cwd: '/home/x' }, TMP, /cwd "\/home\/x"/],
    [{}, 'tmp', /tmpDir "tmp"/],
    [{ writeRoots: [{ root: WS, readOnlySubpaths: ['C:\\other\\.git\\hooks'], protectedNames: [] }] }, TMP,
      /writeRoots\[0\]\.readOnlySubpaths\[0\] .* is not inside its root/],
    [{ writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: ['a\\b'] }] }, TMP, /protectedNames\[0\]/],
    [{ env: { Path: 'x', PATH: 'y' } }, TMP, /"PATH" is set twice with different case/],
    [{ limits: { memoryBytes: -1 } }, TMP, /limits\.memoryBytes must be a positive integer/],
    [{ network: 'maybe' as never }, TMP, /network "maybe"/],
    [{ argv: ['cmd.exe', '/c', 'dir'] }, TMP, /argv\[0\] "cmd\.exe" is not an absolute drive-letter or UNC path/],
    [{ argv: [] }, TMP, /argv\[0\] "" is not an absolute/],
  ];
  for (const [overrides, tmpDir, message] of cases) {
    try {
      buildAppContainerSpec(plan(overrides), { tmpDir });
      assert.unreachable(JSON.stringify(overrides));
    } catch (error) {
      assert.instance(error, SandboxError, JSON.stringify(overrides));
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, message);
    }
  }
});

test.run();
