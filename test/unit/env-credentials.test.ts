// The environment scrub and the credential baseline, pure and checked on every OS.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildCredentialBaseline, isSshPublicEntry } from '../../lib/credentials.js';
import { BoundedMemo } from '../../lib/bounded-memo.js';
import { buildSandboxEnv, isSensitiveEnv, isSensitiveEnvName } from '../../lib/env.js';
import { checkOptions, normalizeCommand, normalizeNetwork, validateOptions } from '../../lib/sandbox/options.js';

test('sensitive names: the Go Zero CLI list, provider keys and the suffix patterns, case-insensitively', () => {
  for (const name of ['OPENAI_API_KEY', 'anthropic_api_key', 'GH_TOKEN', 'AWS_SESSION_TOKEN', 'X_SECRET', 'DB_PASSWORD', 'ZERO_OAUTH_GITHUB_CLIENT_SECRET', 'SSH_AUTH_SOCK', 'COHERE_API_KEY']) {
    assert.ok(isSensitiveEnvName(name), name);
  }
  for (const name of ['PATH', 'HOME', 'AWS_PROFILE', 'TOKENIZERS_PARALLELISM', 'NODE_OPTIONS']) assert.not.ok(isSensitiveEnvName(name), name);
});

test('the sandbox env drops secrets, keeps the rest, sets defaults, temp and markers over stale ones', () => {
  const env = buildSandboxEnv(
    { OPENAI_API_KEY: 'sk', KEEP: '1', ZERO_SANDBOXED: '0', ZERO_SANDBOX_BACKEND: 'x', NPM_TOKEN: 'npm' },
    { backend: 'linux-native', network: 'deny', pass: ['npm_token'], tmpDir: '/tmp' },
  );
  assert.equal(env, {
    KEEP: '1', NPM_TOKEN: 'npm', ZERO_SANDBOXED: '1', ZERO_SANDBOX_BACKEND: 'linux-native', ZERO_SANDBOX_NETWORK: 'deny',
    PATH: '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin', TERM: 'dumb', TMPDIR: '/tmp', TMP: '/tmp', TEMP: '/tmp',
  });
});

test('a value verdict follows the value: a variable that turns into a secret is scrubbed at the next build, and kept again after', () => {
  const build = (value: string) => {
    const scrubbed: string[] = [];
    const env = buildSandboxEnv({ BUILD_LABEL: value }, { backend: 'linux-native', network: 'deny', scrubbed });
    return { kept: env.BUILD_LABEL, scrubbed };
  };
  assert.equal(build('nightly'), { kept: 'nightly', scrubbed: [] });
  // The same text as a new string (as process.env hands out on every read) answers the same.
  assert.equal(build(['night', 'ly'].join('')), { kept: 'nightly', scrubbed: [] });
  const token = `ghp_${'a1B2'.repeat(6)}`;
  assert.equal(build(token), { kept: undefined, scrubbed: ['BUILD_LABEL'] });
  assert.equal(build('nightly'), { kept: 'nightly', scrubbed: [] });
  assert.ok(isSensitiveEnv('OTHER_LABEL', token));
  assert.not.ok(isSensitiveEnv('OTHER_LABEL', 'plain'));
});

test('bounded memo: find and keep; past the limit the oldest entry goes, keeping a known key drops none', () => {
  const memo = new BoundedMemo<number>(2);
  assert.is(memo.find('a'), undefined);
  assert.is(memo.keep('a', 1), 1);
  memo.keep('b', 2);
  memo.keep('a', 3); // known key: replaced, nothing dropped
  assert.is(memo.find('a'), 3);
  assert.is(memo.find('b'), 2);
  memo.keep('c', 4); // over the limit: the oldest ('a', first kept) goes
  assert.is(memo.find('a'), undefined);
  assert.is(memo.get('b', () => 9), 2);
  assert.is(memo.get('d', () => 5), 5);
  assert.is(memo.find('b'), undefined);
});

test('credential baseline: the Go Zero CLI list, overrides used literally, SSH private keys only', () => {
  const lists: Record<string, string[]> = {
    '/h/.ssh': ['id_rsa', 'id_rsa.pub', 'known_hosts', 'config', 'deploy_key'],
    '/h/.config/zero': ['sandbox-grants.json', 'plugins', 'commands', 'oauth-tokens.json'],
  };
  const paths = buildCredentialBaseline({ env: { KUBECONFIG: '/k1:/k2', DOCKER_CONFIG: '/d' }, home: '/h', list: (dir) => lists[dir] });
  for (const expected of ['/h/.aws', '/h/.azure', '/h/.git-credentials', '/h/.config/git/credentials', '/h/.npmrc', '/h/.netrc', '/k1', '/k2', '/d/config.json', '/h/.config/gh/hosts.yml', '/h/.config/gcloud', '/h/.config/zero/sandbox-grants.json', '/h/.config/zero/oauth-tokens.json', '/h/.ssh/id_rsa', '/h/.ssh/deploy_key', '/h/.cargo/credentials.toml', '/h/.pypirc', '/h/.gem/credentials', '/h/.kube', '/h/.gnupg/private-keys-v1.d', '/h/.password-store', '/h/.bash_history', '/h/.config/google-chrome']) {
    assert.ok(paths.includes(expected), expected);
  }
  for (const absent of ['/h/Library/Keychains', '/h/.ssh/id_rsa.pub', '/h/.ssh/known_hosts', '/h/.ssh/config', '/h/.config/zero/plugins', '/h/.config/zero/commands']) {
    assert.not.ok(paths.includes(absent), absent);
  }
  assert.ok(isSshPublicEntry('id_ed25519.pub'));
  assert.not.ok(isSshPublicEntry('id_ed25519'));
});

test("credential baseline: Zero's token stores bring the siblings their secrets pass through", () => {
  const list = () => undefined;
  const env = { ZERO_OAUTH_TOKENS_PATH: '/s/tokens.json', ZERO_MCP_OAUTH_TOKENS_PATH: '/s/mcp.json' };
  const paths = buildCredentialBaseline({ env, home: '/h', list });
  const store = ['', '.lockfile', '.secret', '.secret.lock', '.tmp', '.secret.tmp', '.publish', '.secret.publish'];
  for (const suffix of store) assert.ok(paths.includes(`/s/tokens.json${suffix}`), suffix);
  for (const path of ['/s/mcp.json', '/s/mcp.json.migrated']) assert.ok(paths.includes(path), path);
  assert.not.ok(paths.includes('/s/mcp.json.secret'));
  // The keyring keeps the tokens elsewhere and writes no sibling: the named path stays denied.
  const keyring = buildCredentialBaseline({ env: { ...env, ZERO_OAUTH_STORAGE: 'keyring' }, home: '/h', list });
  assert.ok(keyring.includes('/s/tokens.json'));
  for (const suffix of store.slice(1)) assert.not.ok(keyring.includes(`/s/tokens.json${suffix}`), suffix);
  assert.ok(keyring.includes('/s/mcp.json.migrated'));
});

test('options: network fails closed, commands are normalized, bad options name themselves', () => {
  assert.is(normalizeNetwork('allow'), 'allow');
  assert.is(normalizeNetwork(' ALLOW '), 'allow');
  for (const value of ['scoped', 'proxy', '', undefined, 1]) assert.is(normalizeNetwork(value), 'deny');
  assert.equal(normalizeCommand('echo hi'), ['/bin/sh', '-c', 'echo hi']);
  assert.equal(normalizeCommand(['ls', '-la']), ['ls', '-la']);
  assert.throws(() => normalizeCommand(''), /empty/);
  assert.throws(() => normalizeCommand(['a\0b']), /NUL/);
  assert.throws(() => validateOptions('run', { allowWrite: 'x' as unknown as string[] }), /options.allowWrite/);
  assert.throws(() => validateOptions('run', { timeoutMs: -1 }), /options.timeoutMs/);
  assert.throws(() => validateOptions('run', { limits: { bogus: 1 } as never }), /options.limits.bogus/);
  assert.equal(checkOptions({ limits: { cpuSeconds: 2 } }).limits, { cpuSeconds: 2 });
});

test.run();
