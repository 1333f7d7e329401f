// SPDX-License-Identifier: MIT
// What the Linux preparation remembers across calls is only pure computation: each memoized
// result equals a fresh computation, and no caller can change what the next one gets.
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildSeccompProgram, buildSeccompWords, encodeSeccompProgram, type SeccompOptions } from '../../lib/backend/linux/seccomp.js';
import type { LinuxNativeSpec } from '../../lib/backend/linux/spec.js';
import { buildCredentialBaseline } from '../../lib/credentials.js';
import { SENSITIVE_ENV_NAMES, buildSandboxEnv, isSensitiveEnvName } from '../../lib/env.js';
import { buildPrewarmKey, prewarmKeyCounts } from '../../lib/sandbox/prewarm.js';
import { deepFreeze } from '../../lib/sandbox/watched-memo.js';
import { buildRuntimeLayout } from '../../lib/sandbox/runtime-state.js';

const ALL_OPTIONS: SeccompOptions[] = [];
for (const arch of ['x86_64', 'aarch64'] as const) {
  for (const network of ['deny', 'allow'] as const) {
    for (const blockUnixSockets of [true, false]) ALL_OPTIONS.push({ arch, network, blockUnixSockets });
  }
}

test('seccomp: the remembered program equals a fresh build for every option set', () => {
  for (const options of ALL_OPTIONS) {
    const fresh = encodeSeccompProgram(buildSeccompProgram(options));
    assert.equal(Array.from(buildSeccompWords(options)), fresh, JSON.stringify(options));
    assert.equal(Array.from(buildSeccompWords(options)), fresh, `${JSON.stringify(options)}, second time`);
  }
  const deny = buildSeccompWords({ arch: 'x86_64', network: 'deny', blockUnixSockets: true });
  const allow = buildSeccompWords({ arch: 'x86_64', network: 'allow', blockUnixSockets: false });
  assert.not.equal(Array.from(deny), Array.from(allow), 'options that differ give different programs');
});

test('seccomp: a caller that overwrites its copy does not change the next one', () => {
  const options: SeccompOptions = { arch: 'x86_64', network: 'deny', blockUnixSockets: true };
  const mine = buildSeccompWords(options);
  mine.fill(0n);
  assert.equal(Array.from(buildSeccompWords(options)), encodeSeccompProgram(buildSeccompProgram(options)));
});

test('seccomp: invalid options still fail closed, and are not remembered', () => {
  const bad = { arch: 'mips', network: 'deny', blockUnixSockets: true } as unknown as SeccompOptions;
  for (let i = 0; i < 2; i++) {
    try {
      buildSeccompWords(bad);
      assert.unreachable('a filter for an unknown architecture');
    } catch (error) {
      assert.is((error as { code?: string }).code, 'sandbox_unavailable');
    }
  }
});

function fakeSpec(seccomp: BigUint64Array, extra: Partial<LinuxNativeSpec['linux']> = {}): LinuxNativeSpec {
  return {
    argv: ['/bin/true'], env: ['A=1'], cwd: '/w', stdio: ['pipe', 'pipe', 'pipe'],
    linux: {
      initPath: '/pkg/init', newNetwork: true, mounts: [{ kind: 'attach', path: '/w', slot: 0 }],
      landlockAbi: 6, landlockHandledFs: 0x7fff, landlockScoped: 3,
      landlockRules: [{ path: '/w', access: 7, afterMounts: false }],
      seccomp, rlimits: [{ resource: 7, soft: 64, hard: 64 }], ...extra,
    },
  };
}

/** The key as it was first written: one JSON.stringify over everything but the limits. */
function plainKey(spec: LinuxNativeSpec): string {
  const { rlimits: _limits, cgroupProcsFd: _cgroup, seccomp, ...rest } = spec.linux;
  return JSON.stringify({ ...rest, seccomp: Array.from(seccomp, (word) => word.toString(16)) });
}

test('prewarm key: the same text as one JSON.stringify, for every program and twice', () => {
  for (const options of ALL_OPTIONS) {
    const spec = fakeSpec(buildSeccompWords(options));
    assert.is(buildPrewarmKey(spec), plainKey(spec));
    assert.is(buildPrewarmKey(spec), plainKey(spec));
  }
  const withFd = fakeSpec(buildSeccompWords(ALL_OPTIONS[0] as SeccompOptions), { cgroupProcsFd: 9 });
  assert.is(buildPrewarmKey(withFd), plainKey(withFd));
  assert.is(buildPrewarmKey(withFd), buildPrewarmKey(fakeSpec(buildSeccompWords(ALL_OPTIONS[0] as SeccompOptions))), "the run's pids cgroup is not part of the key");
  assert.ok(JSON.parse(buildPrewarmKey(withFd)) !== null, 'valid JSON');
});

test("prewarm key: a pids cgroup's cap is part of it (each prewarmed sandbox joins one with that cap)", () => {
  const spec = fakeSpec(buildSeccompWords(ALL_OPTIONS[0] as SeccompOptions));
  const keys = [buildPrewarmKey(spec), buildPrewarmKey(spec, 64), buildPrewarmKey(spec, 65)];
  assert.is(new Set(keys).size, 3);
  assert.is(JSON.parse(keys[1] as string).pidsCgroup, 64);
  assert.is(buildPrewarmKey(spec, 64), keys[1]);
});

test('prewarm key: a program that differs in one word gives another key', () => {
  const words = buildSeccompWords({ arch: 'x86_64', network: 'deny', blockUnixSockets: true });
  const before = buildPrewarmKey(fakeSpec(words));
  const changed = words.slice();
  changed[changed.length - 1] = 0n;
  assert.is.not(buildPrewarmKey(fakeSpec(changed)), before);
  assert.is(buildPrewarmKey(fakeSpec(changed)), plainKey(fakeSpec(changed)));
  assert.is(buildPrewarmKey(fakeSpec(words)), before);
});

test("prewarm key: a frozen sandbox's key is made once, and again when its seccomp words change in place", () => {
  const words = buildSeccompWords({ arch: 'x86_64', network: 'deny', blockUnixSockets: true });
  const spec = fakeSpec(words.slice());
  spec.linux = deepFreeze(spec.linux);
  const built = prewarmKeyCounts.built;
  const first = buildPrewarmKey(spec);
  assert.is(buildPrewarmKey(spec), first);
  assert.is(buildPrewarmKey(spec), plainKey(spec));
  assert.is(prewarmKeyCounts.built, built + 1, 'made once for the same frozen sandbox');
  assert.is.not(buildPrewarmKey(spec, 64), first, 'another cap, another key');
  // The words are a typed array (not frozen): a change in place is a new key.
  spec.linux.seccomp[spec.linux.seccomp.length - 1] = 0n;
  assert.is.not(buildPrewarmKey(spec), first);
  assert.is(buildPrewarmKey(spec), plainKey(spec));
  // A sandbox that is not frozen may change: its key is made on every call.
  const open = fakeSpec(words.slice());
  const before = prewarmKeyCounts.built;
  buildPrewarmKey(open);
  open.linux.mounts.push({ kind: 'attach', path: '/v', slot: 1 });
  assert.is(buildPrewarmKey(open), plainKey(open));
  assert.is(prewarmKeyCounts.built, before + 2);
});

test('env: remembered verdicts match the rules, call after call', () => {
  const names = [...SENSITIVE_ENV_NAMES, 'PATH', 'HOME', 'MY_TOKEN', 'my_api_key', 'ZERO_OAUTH_X_CLIENT_SECRET', 'TOKEN', 'GITHUB_TOKENS'];
  // Every name here but PATH and HOME is a secret: the fixed list, the suffixes, and the name
  // patterns (TOKEN alone, TOKENS).
  const expected = (name: string) => name !== 'PATH' && name !== 'HOME';
  for (let round = 0; round < 2; round++) {
    for (const name of names) assert.is(isSensitiveEnvName(name), expected(name), `${name} (round ${round})`);
  }
  const source = { PATH: '/bin', MY_TOKEN: 't', Deploy_Token: 'd', HOME: '/h' };
  const first = buildSandboxEnv(source, { backend: 'linux-native', network: 'deny', pass: ['DEPLOY_TOKEN'] });
  assert.equal(Object.keys(first), ['PATH', 'Deploy_Token', 'HOME', 'TERM', 'ZERO_SANDBOXED', 'ZERO_SANDBOX_BACKEND', 'ZERO_SANDBOX_NETWORK']);
  const second = buildSandboxEnv(source, { backend: 'linux-native', network: 'deny' });
  assert.not.ok('Deploy_Token' in second, 'a pass of one call does not carry over to the next');
});

test('credential baseline: the remembered part follows every variable, the working directory and the listings', () => {
  const listings = new Map<string, string[]>([['/h/.ssh', ['id_rsa', 'id_rsa.pub']]]);
  const list = (dir: string) => listings.get(dir);
  const env = { HOME: '/h', KUBECONFIG: 'rel/kube:/abs/kube', NETRC: '/n/netrc' };
  const first = buildCredentialBaseline({ env, list });
  assert.ok(first.includes(resolve('rel/kube')) && first.includes('/abs/kube') && first.includes('/n/netrc') && first.includes('/h/.ssh/id_rsa'));
  first.length = 0; // the caller's copy
  assert.equal(buildCredentialBaseline({ env, list }), buildCredentialBaseline({ env: { ...env }, list }), 'same values, same list');
  assert.ok(buildCredentialBaseline({ env, list }).includes('/h/.ssh/id_rsa'), 'a changed copy does not leak');
  const other = buildCredentialBaseline({ env: { ...env, NETRC: '/m/netrc' }, list });
  assert.ok(other.includes('/m/netrc') && !other.includes('/n/netrc'), 'a changed variable is seen');
  listings.set('/h/.ssh', ['id_ed25519']);
  listings.set('/h/.config/zero', ['grants.json', 'plugins']);
  const relisted = buildCredentialBaseline({ env, list });
  assert.ok(relisted.includes('/h/.ssh/id_ed25519') && !relisted.includes('/h/.ssh/id_rsa'), 'directories are listed on every call');
  assert.ok(relisted.includes('/h/.config/zero/grants.json') && !relisted.includes('/h/.config/zero/plugins'));
  const cwd = process.cwd();
  try {
    process.chdir('/');
    assert.ok(buildCredentialBaseline({ env, list }).includes('/rel/kube'), 'a relative override follows the working directory');
  } finally {
    process.chdir(cwd);
  }
  assert.ok(buildCredentialBaseline({ env, list, home: '/other' }).includes('/other/.aws'), 'an explicit home is part of the key');
});

test('runtime layout: remembered per (workspace, cache dir), each caller gets its own object', () => {
  const a = buildRuntimeLayout('/w/one', '/c');
  a.root = '/tampered';
  const b = buildRuntimeLayout('/w/one', '/c');
  assert.is(b.root, `/c/zero/runtime/v1/${b.key}`);
  assert.is.not(buildRuntimeLayout('/w/two', '/c').key, b.key);
  assert.is(buildRuntimeLayout('/w/one', '/d').base, '/d/zero/runtime/v1');
  const fallback = buildRuntimeLayout('/w', '/w/.cache', '/t1');
  assert.ok(fallback.fallback && fallback.base.startsWith('/t1/'));
  assert.ok(buildRuntimeLayout('/w', '/w/.cache', '/t2').base.startsWith('/t2/'), 'the temp fallback is not remembered');
});

test.run();
