// Credentials in the deny-read baseline (the Go Zero CLI's list plus SSH private keys) and
// --deny-read paths cannot be read, also through a symlink in the workspace; sensitive
// environment variables do not cross into the sandbox, while the sandbox markers do.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, rejection, sandboxTest, sh } from '../helpers/sandbox.js';

const SECRET = 'TOPSECRET-VALUE-42';

function fakeHome(base: string): string {
  const home = join(base, 'home');
  const files: Record<string, string> = {
    '.aws/credentials': SECRET,
    '.azure/accessTokens.json': SECRET,
    '.git-credentials': SECRET,
    '.config/git/credentials': SECRET,
    '.npmrc': SECRET,
    '.netrc': SECRET,
    '.kube/config': SECRET,
    '.docker/config.json': SECRET,
    '.config/gh/hosts.yml': SECRET,
    '.config/gcloud/credentials.db': SECRET,
    '.config/zero/sandbox-grants.json': SECRET,
    '.ssh/id_ed25519': SECRET,
    '.ssh/id_rsa': SECRET,
    '.ssh/id_ed25519.pub': 'public-key',
    '.ssh/known_hosts': 'known-hosts',
    '.ssh/config': 'ssh-config',
    '.config/zero/commands/hello.md': 'carve-out',
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(home, rel, '..'), { recursive: true });
    writeFileSync(join(home, rel), content);
  }
  return home;
}

sandboxTest('the credential baseline and SSH private keys cannot be read; public SSH files can', async () => {
  const t = makeTree();
  try {
    const home = fakeHome(t.base);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    const r = await runSandboxed(['/bin/sh', '-c', [
      // A hidden file may read as empty (Linux shows an empty file in its place): content leaks.
      'for f in .aws/credentials .azure/accessTokens.json .git-credentials .config/git/credentials .npmrc .netrc .kube/config .docker/config.json .config/gh/hosts.yml .config/gcloud/credentials.db .config/zero/sandbox-grants.json .ssh/id_ed25519 .ssh/id_rsa; do c=$(cat "$HOME/$f" 2>/dev/null) && [ -n "$c" ] && echo "LEAK $f"; done',
      'ls "$HOME/.aws" 2>&1 | grep -q credentials && echo "LISTED .aws"',
      'cat "$HOME/.ssh/id_ed25519.pub" "$HOME/.ssh/known_hosts" "$HOME/.ssh/config"',
      'cat "$HOME/.config/zero/commands/hello.md"',
    ].join('; ')], { workspace: t.ws, env });
    assert.not.match(r.stdout, /TOPSECRET|LEAK|LISTED/, r.stdout);
    assert.match(r.stdout, /public-key/);
    assert.match(r.stdout, /known-hosts/);
    assert.match(r.stdout, /ssh-config/);
    assert.match(r.stdout, /carve-out/);
    if (process.platform === 'linux') {
      // Every hidden file the loop opened is reported, by path (the kernel saw the open).
      const read = new Set(r.denials.filter((d) => d.capability.kind === 'filesystem_read').map((d) => d.capability.scope));
      for (const f of ['.git-credentials', '.netrc', '.ssh/id_ed25519', '.ssh/id_rsa', '.aws/credentials']) assert.ok(read.has(join(home, f)), `${f}: ${JSON.stringify([...read])}`);
      assert.not.ok(read.has(join(home, '.ssh/id_ed25519.pub')), 'a readable file is not reported');
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('--deny-read paths cannot be read, directly or through a symlink planted in the workspace', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'secret.txt'), SECRET);
    mkdirSync(join(t.outside, 'vault'));
    writeFileSync(join(t.outside, 'vault', 'key'), SECRET);
    writeFileSync(join(t.ws, '.env'), SECRET);
    symlinkSync(join(t.outside, 'secret.txt'), join(t.ws, 'host-link'));
    const r = await sh(t, [
      `cat ${t.outside}/secret.txt`, `cat ${t.outside}/vault/key`, 'cat .env', 'cat host-link',
      `ln -s ${t.outside}/vault inner-link; cat inner-link/key`, `cat /proc/self/root${t.outside}/secret.txt`,
      `cp ${t.outside}/secret.txt copy; cat copy`, 'echo done',
    ].join('; '), { denyRead: [join(t.outside, 'secret.txt'), join(t.outside, 'vault'), join(t.ws, '.env')] });
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /TOPSECRET/, r.stdout);
    // Each hidden file read (directly, through the planted links or by cp) is reported by path.
    const read = new Set(r.denials.filter((d) => d.capability.kind === 'filesystem_read').map((d) => d.capability.scope));
    for (const path of [join(t.outside, 'secret.txt'), join(t.outside, 'vault', 'key'), join(t.ws, '.env')]) assert.ok(read.has(path), `${path}: ${JSON.stringify([...read])}`);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a --deny-read path that does not exist is refused with a clear error', async () => {
  const t = makeTree();
  try {
    const error = await rejection(sh(t, 'true', { denyRead: [join(t.outside, 'missing')] }));
    assert.is(error.code, 'invalid_argument');
    assert.match(error.message, /denyRead .*missing does not exist/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('sensitive environment variables are not visible inside; the sandbox markers are', async () => {
  const t = makeTree();
  try {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET, GH_TOKEN: SECRET, GITHUB_TOKEN: SECRET,
      AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: SECRET, NPM_TOKEN: SECRET, HF_TOKEN: SECRET,
      COHERE_API_KEY: SECRET, GITLAB_TOKEN: SECRET, MY_SERVICE_PASSWORD: SECRET, SOME_CLIENT_SECRET: SECRET,
      custom_api_key: SECRET, ZERO_OAUTH_GOOGLE_CLIENT_SECRET: SECRET, ZERO_DAEMON_REMOTE_TOKEN: SECRET,
      KEEP_ME: 'visible', ZERO_SANDBOXED: '0', ZERO_SANDBOX_NETWORK: 'allow',
    };
    const r = await sh(t, 'env; cat /proc/self/environ | tr "\\0" "\\n"', { env });
    assert.not.match(r.stdout, /TOPSECRET/, r.stdout);
    assert.match(r.stdout, /^KEEP_ME=visible$/m);
    assert.match(r.stdout, /^ZERO_SANDBOXED=1$/m);
    assert.match(r.stdout, /^ZERO_SANDBOX_BACKEND=linux-native$/m);
    assert.match(r.stdout, /^ZERO_SANDBOX_NETWORK=deny$/m);
    const passed = await sh(t, 'echo "$NPM_TOKEN"', { env: { PATH: env.PATH, NPM_TOKEN: 'deliberate' }, envPass: ['NPM_TOKEN'] });
    assert.is(passed.stdout, 'deliberate\n', 'envPass lets a named variable through on purpose');
  } finally {
    t.cleanup();
  }
});

test.run();
