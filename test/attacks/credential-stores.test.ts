// Attack: a sandboxed command reads the credential stores a developer's home directory holds
// (cloud, forge, registry, cluster, password-manager and agent credentials, private keys,
// shell and database histories, browser profiles, keyrings), including stores outside the old
// fixed baseline and kube configs other than ~/.kube/config. Fix: one credential table
// (lib/credentials.ts) shared by every backend, masked on Linux. The host copy of every store is
// checked to be unchanged afterwards.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { stateNotesBase } from '../../lib/sandbox/run-notes.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const SECRET = 'TOPSECRET-STORE-7731';

/** Files a developer's home holds, relative to it. More than the table names one by one. */
export const STORE_FILES = [
  '.aws/credentials', '.aws/sso/cache/token.json', '.azure/msal_token_cache.json', '.config/gcloud/application_default_credentials.json',
  '.docker/config.json', '.git-credentials', '.config/git/credentials', '.config/gh/hosts.yml', '.config/hub',
  '.local/share/keyrings/login.keyring', '.mozilla/firefox/p.default/cookies.sqlite',
  '.config/google-chrome/Default/Cookies', '.config/chromium/Default/Login Data',
  '.bash_history', '.zsh_history', '.python_history', '.psql_history', '.mysql_history', '.node_repl_history',
  '.local/share/fish/fish_history', '.m2/settings.xml', '.gradle/gradle.properties', '.cargo/credentials.toml',
  '.cargo/credentials', '.pypirc', '.gem/credentials', '.config/op/config', '.kube/config', '.kube/prod-cluster.yaml',
  '.kube/cache/discovery/token', '.gnupg/private-keys-v1.d/ABCDEF.key', '.password-store/email.gpg', '.vault-token',
  '.terraform.d/credentials.tfrc.json', '.claude/.credentials.json', '.codex/auth.json', '.pgpass', '.my.cnf',
  '.yarnrc.yml', '.npmrc', '.netrc', '.ssh/id_ed25519', '.ssh/id_ecdsa_sk', '.ssh/work_key', '.config/zero/oauth-tokens.json',
  '.config/glab-cli/config.yml', '.config/configstore/firebase-tools.json', '.kaggle/kaggle.json', '.huggingface/token',
  '.cache/huggingface/token', '.pulumi/credentials.json', '.oci/config', '.config/doctl/config.yaml', '.s3cfg', '.boto',
  '.config/rclone/rclone.conf', '.databrickscfg', '.composer/auth.json', '.config/github-copilot/hosts.json',
  '.gemini/oauth_creds.json', '.terraformrc', '.fly/config.yml', '.m2/settings-security.xml',
  '.aliyun/config.json', '.bluemix/config.json', '.config/openstack/clouds.yaml', '.config/scw/config.yaml',
  '.config/linode-cli', '.mc/config.json', '.saml2aws', '.tsh/keys/proxy/user', '.local/share/com.vercel.cli/auth.json',
  '.config/netlify/config.json', '.netlify/config.json', '.railway/config.json', '.supabase/access-token',
  '.config/ngrok/ngrok.yml', '.ngrok2/ngrok.yml', '.config/stripe/config.toml', '.snowflake/connections.toml',
  '.snowsql/config', '.dbt/profiles.yml', '.docker/key.pem', '.docker/contexts/tls/ctx/docker/key.pem',
  '.config/containers/auth.json', '.config/helm/registry/config.json', '.yarnrc', '.pki/nssdb/key4.db',
  '.config/Bitwarden CLI/data.json', '.authinfo', '.authinfo.gpg', '.ash_history', '.dbshell',
  '.mongodb/mongosh/mongosh_repl_history', '.local/share/atuin/history.db', '.thunderbird/p.default/logins.json',
  '.config/Slack/Cookies', '.config/discord/Local Storage/leveldb/000003.log',
  '.config/gcloud/credentials.db', '.config/gcloud/access_tokens.db', '.azure/accessTokens.json', '.kube/config.d/dev',
  '.ssh/id_rsa', '.ssh/deploy-key.pem',
];

/** Files that must stay readable: what the tools need that holds no secret. */
const PUBLIC_FILES = ['.ssh/id_ed25519.pub', '.ssh/known_hosts', '.ssh/config', '.gitconfig', '.config/zero/commands/hello.md', '.cargo/config.toml', '.gnupg/pubring.kbx'];

export function plantHome(base: string): string {
  const home = join(base, 'home');
  for (const rel of [...STORE_FILES, ...PUBLIC_FILES]) {
    mkdirSync(join(home, rel, '..'), { recursive: true });
    writeFileSync(join(home, rel), STORE_FILES.includes(rel) ? `${SECRET} ${rel}\n` : `public ${rel}\n`);
  }
  return home;
}

sandboxTest('no credential store in a developer home can be read; the public files next to them can', async () => {
  const t = makeTree();
  try {
    const home = plantHome(t.base);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
    const script = [
      'for f in "$@"; do cat "$HOME/$f" 2>/dev/null; head -c 64 "$HOME/$f" 2>/dev/null; done',
      'find "$HOME" -type f -exec cat {} + 2>/dev/null',
      'tar -C "$HOME" -cf - . 2>/dev/null | strings 2>/dev/null | grep TOPSECRET',
    ].join('; ');
    const r = await runSandboxed(['/bin/sh', '-c', script, 'sh', ...STORE_FILES], { workspace: t.ws, env });
    assert.not.match(r.stdout, /TOPSECRET/, r.stdout.split('\n').filter((line) => line.includes('TOPSECRET')).join('\n'));
    for (const rel of PUBLIC_FILES) assert.ok(r.stdout.includes(`public ${rel}`), `${rel} stays readable`);
    // The host's copies are untouched.
    for (const rel of STORE_FILES) assert.is(readFileSync(join(home, rel), 'utf8'), `${SECRET} ${rel}\n`, rel);
  } finally {
    t.cleanup();
  }
});

sandboxTest('an explicit allowRead of one store opts that store out, and only it', async () => {
  const t = makeTree();
  try {
    const home = plantHome(t.base);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
    const script = 'cat "$HOME/.aws/credentials" "$HOME/.netrc" "$HOME/.ssh/id_rsa" 2>/dev/null; echo done';
    const r = await runSandboxed(['/bin/sh', '-c', script], { workspace: t.ws, env, allowRead: [join(home, '.aws')] });
    assert.match(r.stdout, `${SECRET} .aws/credentials`);
    assert.match(r.stdout, /done/);
    assert.is(r.stdout.split('TOPSECRET').length, 2, r.stdout);
  } finally {
    t.cleanup();
  }
});

sandboxTest("Zero's token stores named by variables: the key beside the tokens, the locks and the publication directories stay unreadable", async () => {
  const t = makeTree();
  try {
    const dir = join(t.base, 'stores');
    const tokens = join(dir, 'tokens.json');
    const siblings = ['', '.secret', '.lockfile', '.secret.lock', '.tmp', '.secret.tmp'];
    mkdirSync(join(dir, 'tokens.json.publish'), { recursive: true });
    mkdirSync(join(dir, 'tokens.json.secret.publish'), { recursive: true });
    for (const suffix of siblings) writeFileSync(tokens + suffix, `${SECRET} tokens.json${suffix}\n`);
    writeFileSync(join(dir, 'tokens.json.publish', 'tmp-1'), `${SECRET} publishing\n`);
    writeFileSync(join(dir, 'tokens.json.secret.publish', 'tmp-2'), `${SECRET} publishing the key\n`);
    writeFileSync(join(dir, 'mcp.json.migrated'), `${SECRET} migrated\n`);
    writeFileSync(join(dir, 'unrelated.txt'), 'public unrelated\n');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.outside, ZERO_OAUTH_TOKENS_PATH: tokens, ZERO_MCP_OAUTH_TOKENS_PATH: join(dir, 'mcp.json') };
    const r = await runSandboxed(['/bin/sh', '-c', 'find "$1" -type f -exec cat {} + 2>/dev/null; cat "$1"/*.publish/* 2>/dev/null; echo done', 'sh', dir], { workspace: t.ws, env });
    assert.match(r.stdout, /public unrelated/);
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /TOPSECRET/, r.stdout);
  } finally {
    t.cleanup();
  }
});

sandboxTest("the protected-path notes of other runs (kept in the account's home without a usable /dev/shm) cannot be read", async () => {
  // They hold copies of other workspaces' protected configs (an .mcp.json with a token, say).
  const base = stateNotesBase();
  if (base === undefined) return; // no home in the account database: no such place exists
  const created = !existsSync(base);
  const dir = join(base, `run-notes-zs-test-${process.pid}`);
  const t = makeTree();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'n.1-2.3.4'), `${SECRET} noted .mcp.json\n`);
    const r = await runSandboxed(['/bin/sh', '-c', 'cat "$1"/* 2>&1; ls -A "$1" 2>&1; echo done', 'sh', dir], { workspace: t.ws });
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /TOPSECRET/, r.stdout);
    assert.is(readFileSync(join(dir, 'n.1-2.3.4'), 'utf8'), `${SECRET} noted .mcp.json\n`, 'the host copy is untouched');
  } finally {
    t.cleanup();
    rmSync(created ? base : dir, { recursive: true, force: true });
  }
});

test.run();
