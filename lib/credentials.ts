// SPDX-License-Identifier: MIT
// The credential deny-read list: one table of the credential stores developers have (cloud,
// registry, forge, cluster and password-manager credentials, private keys, shell and database
// histories, browser profiles and keyrings), shared by every backend. Linux masks and withholds
// Landlock read grants for them, the macOS profile denies them, the Windows spec denies them, and
// `policy --json` reports the table. Paths are templates expanded against the environment.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import { BoundedMemo } from './bounded-memo.js';

/** The operating systems a store applies on. */
export type CredentialOs = 'linux' | 'darwin' | 'win32';

/**
 * One credential store. `path` starts with `~/` (the home directory) or `$<base>/`, `$<base>`
 * being one of CREDENTIAL_BASES (a directory an environment variable can move). `os` limits it
 * to the systems where the path exists; absent means every system.
 */
export interface CredentialStore {
  path: string;
  holds: string;
  os?: readonly CredentialOs[];
}

/** Directories an environment variable can move: the variable, and where it defaults to. */
export const CREDENTIAL_BASES: Readonly<Record<string, { variable: string; fallback: string; alsoFallback?: boolean }>> = {
  // XDG directories: both the variable's and the default are listed (tools disagree on honouring it).
  config: { variable: 'XDG_CONFIG_HOME', fallback: '~/.config', alsoFallback: true },
  data: { variable: 'XDG_DATA_HOME', fallback: '~/.local/share', alsoFallback: true },
  cargo: { variable: 'CARGO_HOME', fallback: '~/.cargo' },
  docker: { variable: 'DOCKER_CONFIG', fallback: '~/.docker' },
  gh: { variable: 'GH_CONFIG_DIR', fallback: '$config/gh' },
  gcloud: { variable: 'CLOUDSDK_CONFIG', fallback: '$config/gcloud' },
  gnupg: { variable: 'GNUPGHOME', fallback: '~/.gnupg' },
  azure: { variable: 'AZURE_CONFIG_DIR', fallback: '~/.azure' },
  passwordStore: { variable: 'PASSWORD_STORE_DIR', fallback: '~/.password-store' },
  npmrc: { variable: 'NPM_CONFIG_USERCONFIG', fallback: '~/.npmrc' },
  netrc: { variable: 'NETRC', fallback: '~/.netrc' },
  appdata: { variable: 'APPDATA', fallback: '~/AppData/Roaming' },
  localappdata: { variable: 'LOCALAPPDATA', fallback: '~/AppData/Local' },
};

const MAC: readonly CredentialOs[] = ['darwin'];
const WIN: readonly CredentialOs[] = ['win32'];
const UNIX: readonly CredentialOs[] = ['linux', 'darwin'];

/** Every credential store, in a stable order. */
export const CREDENTIAL_STORES: readonly CredentialStore[] = [
  // Clouds.
  { path: '~/.aws', holds: 'AWS CLI credentials and SSO tokens' },
  { path: '$azure', holds: 'Azure CLI tokens' },
  { path: '$gcloud', holds: 'Google Cloud SDK credentials' },
  { path: '~/.oci', holds: 'Oracle Cloud API keys' },
  { path: '$config/doctl', holds: 'DigitalOcean tokens' },
  { path: '$config/hcloud', holds: 'Hetzner Cloud tokens' },
  { path: '~/.boto', holds: 'Google Cloud Storage / boto keys' },
  { path: '~/.s3cfg', holds: 's3cmd keys' },
  { path: '$config/rclone/rclone.conf', holds: 'rclone remotes with keys' },
  { path: '~/.pulumi/credentials.json', holds: 'Pulumi tokens' },
  { path: '~/.terraform.d/credentials.tfrc.json', holds: 'Terraform Cloud tokens' },
  { path: '~/.terraformrc', holds: 'Terraform CLI credentials blocks' },
  { path: '~/.vault-token', holds: 'HashiCorp Vault token' },
  { path: '~/.databrickscfg', holds: 'Databricks tokens' },
  { path: '~/.fly', holds: 'Fly.io tokens' },
  { path: '~/.cloudflared', holds: 'Cloudflare tunnel credentials' },
  { path: '$config/.wrangler', holds: 'Cloudflare Wrangler tokens' },
  { path: '~/.kube', holds: 'Kubernetes configs and caches (every kubeconfig there)' },
  { path: '~/.aliyun', holds: 'Alibaba Cloud keys' },
  { path: '~/.bluemix', holds: 'IBM Cloud tokens' },
  { path: '$config/openstack/clouds.yaml', holds: 'OpenStack passwords' },
  { path: '$config/scw', holds: 'Scaleway keys' },
  { path: '$config/linode-cli', holds: 'Linode tokens' },
  { path: '~/.mc/config.json', holds: 'MinIO client keys' },
  { path: '~/.saml2aws', holds: 'saml2aws logins' },
  { path: '~/.tsh', holds: 'Teleport certificates and keys' },
  { path: '$data/com.vercel.cli', holds: 'Vercel tokens' },
  { path: '$config/netlify', holds: 'Netlify tokens' },
  { path: '~/.netlify/config.json', holds: 'Netlify tokens (legacy)' },
  { path: '~/.railway', holds: 'Railway tokens' },
  { path: '~/.supabase/access-token', holds: 'Supabase token' },
  { path: '$config/ngrok/ngrok.yml', holds: 'ngrok authtoken' },
  { path: '~/.ngrok2/ngrok.yml', holds: 'ngrok authtoken (legacy)' },
  { path: '$config/stripe/config.toml', holds: 'Stripe CLI keys' },
  { path: '~/.snowflake/connections.toml', holds: 'Snowflake passwords' },
  { path: '~/.snowsql/config', holds: 'SnowSQL passwords' },
  { path: '~/.dbt/profiles.yml', holds: 'dbt database passwords' },
  // Forges, registries, package managers.
  { path: '~/.git-credentials', holds: 'git credential store' },
  { path: '$config/git/credentials', holds: 'git credential store (XDG)' },
  { path: '$gh/hosts.yml', holds: 'GitHub CLI tokens' },
  { path: '$config/hub', holds: 'hub tokens' },
  { path: '$config/glab-cli', holds: 'GitLab CLI tokens' },
  { path: '$config/github-copilot', holds: 'GitHub Copilot tokens' },
  { path: '$npmrc', holds: 'npm tokens (a sanitized copy is given instead)' },
  { path: '~/.yarnrc.yml', holds: 'Yarn npmAuthToken' },
  { path: '$netrc', holds: 'machine logins' },
  { path: '$docker/config.json', holds: 'container registry logins' },
  { path: '~/.dockercfg', holds: 'container registry logins (legacy)' },
  { path: '$docker/key.pem', holds: 'Docker TLS client key' },
  { path: '$docker/contexts/tls', holds: 'Docker context TLS keys' },
  { path: '$config/containers/auth.json', holds: 'Podman / Skopeo registry logins' },
  { path: '$config/helm/registry', holds: 'Helm registry logins' },
  { path: '~/.yarnrc', holds: 'Yarn 1 registry tokens' },
  { path: '$cargo/credentials', holds: 'crates.io token' },
  { path: '$cargo/credentials.toml', holds: 'crates.io token' },
  { path: '~/.pypirc', holds: 'PyPI tokens' },
  { path: '~/.gem/credentials', holds: 'RubyGems API key' },
  { path: '~/.m2/settings.xml', holds: 'Maven server passwords' },
  { path: '~/.m2/settings-security.xml', holds: 'Maven master password' },
  { path: '~/.gradle/gradle.properties', holds: 'Gradle publishing credentials' },
  { path: '~/.composer/auth.json', holds: 'Composer tokens' },
  { path: '$config/composer/auth.json', holds: 'Composer tokens (XDG)' },
  { path: '$config/configstore', holds: 'tokens of CLIs built on configstore (Firebase, ...)' },
  { path: '~/.kaggle', holds: 'Kaggle API key' },
  { path: '~/.huggingface/token', holds: 'Hugging Face token' },
  { path: '~/.cache/huggingface/token', holds: 'Hugging Face token' },
  { path: '~/.circleci/cli.yml', holds: 'CircleCI token' },
  { path: '~/.sentryclirc', holds: 'Sentry token' },
  // Coding agents.
  { path: '~/.claude/.credentials.json', holds: 'Claude Code credentials' },
  { path: '~/.codex/auth.json', holds: 'Codex credentials' },
  { path: '~/.gemini/oauth_creds.json', holds: 'Gemini CLI credentials' },
  // Keys, password managers, keyrings.
  { path: '$gnupg/private-keys-v1.d', holds: 'GnuPG private keys' },
  { path: '$gnupg/secring.gpg', holds: 'GnuPG private keys (legacy)' },
  { path: '$passwordStore', holds: 'pass password store' },
  { path: '$config/op', holds: '1Password CLI sessions' },
  { path: '~/.op', holds: '1Password CLI sessions (legacy)' },
  { path: '$data/keyrings', holds: 'GNOME keyrings' },
  { path: '$data/kwalletd', holds: 'KDE wallets' },
  { path: '~/.pki/nssdb', holds: 'NSS client certificates and keys' },
  { path: '$config/Bitwarden CLI', holds: 'Bitwarden CLI vault' },
  { path: '~/.authinfo', holds: 'Emacs auth-source logins' },
  { path: '~/.authinfo.gpg', holds: 'Emacs auth-source logins (encrypted)' },
  { path: '~/.pgpass', holds: 'PostgreSQL passwords' },
  { path: '~/.my.cnf', holds: 'MySQL passwords' },
  // Histories: secrets typed on command lines and in database shells.
  { path: '~/.bash_history', holds: 'bash history' },
  { path: '~/.zsh_history', holds: 'zsh history' },
  { path: '~/.zhistory', holds: 'zsh history' },
  { path: '~/.zsh_sessions', holds: 'zsh session histories', os: MAC },
  { path: '~/.history', holds: 'shell history' },
  { path: '~/.sh_history', holds: 'shell history' },
  { path: '$data/fish/fish_history', holds: 'fish history' },
  { path: '~/.python_history', holds: 'Python REPL history' },
  { path: '~/.node_repl_history', holds: 'Node REPL history' },
  { path: '~/.psql_history', holds: 'psql history' },
  { path: '~/.mysql_history', holds: 'mysql history' },
  { path: '~/.sqlite_history', holds: 'sqlite history' },
  { path: '~/.rediscli_history', holds: 'redis-cli history' },
  { path: '~/.irb_history', holds: 'irb history' },
  { path: '~/.lesshst', holds: 'less search history' },
  { path: '~/.ash_history', holds: 'ash history' },
  { path: '~/.dbshell', holds: 'mongo shell history' },
  { path: '~/.mongodb/mongosh', holds: 'mongosh history' },
  { path: '$data/atuin', holds: 'atuin shell history' },
  { path: '$appdata/Microsoft/Windows/PowerShell/PSReadLine', holds: 'PowerShell history', os: WIN },
  // Browser profiles (cookies, saved passwords).
  { path: '~/.mozilla', holds: 'Firefox profiles', os: UNIX },
  { path: '$config/google-chrome', holds: 'Chrome profiles', os: ['linux'] },
  { path: '$config/chromium', holds: 'Chromium profiles', os: ['linux'] },
  { path: '$config/BraveSoftware', holds: 'Brave profiles', os: ['linux'] },
  { path: '$config/microsoft-edge', holds: 'Edge profiles', os: ['linux'] },
  { path: '$config/vivaldi', holds: 'Vivaldi profiles', os: ['linux'] },
  { path: '$config/opera', holds: 'Opera profiles', os: ['linux'] },
  { path: '~/snap/firefox', holds: 'Firefox (snap) profiles', os: ['linux'] },
  { path: '~/snap/chromium', holds: 'Chromium (snap) profiles', os: ['linux'] },
  { path: '~/.thunderbird', holds: 'Thunderbird profiles (mail passwords)', os: ['linux'] },
  { path: '$config/Slack', holds: 'Slack desktop cookies and tokens', os: ['linux'] },
  { path: '$config/discord', holds: 'Discord tokens', os: ['linux'] },
  { path: '~/Library/Application Support/Google/Chrome', holds: 'Chrome profiles', os: MAC },
  { path: '~/Library/Application Support/Firefox', holds: 'Firefox profiles', os: MAC },
  { path: '~/Library/Application Support/BraveSoftware', holds: 'Brave profiles', os: MAC },
  { path: '~/Library/Application Support/Microsoft Edge', holds: 'Edge profiles', os: MAC },
  { path: '~/Library/Cookies', holds: 'Safari and system cookies', os: MAC },
  { path: '~/Library/Safari', holds: 'Safari data', os: MAC },
  { path: '~/Library/Keychains', holds: 'login keychains', os: MAC },
  { path: '$localappdata/Google/Chrome/User Data', holds: 'Chrome profiles', os: WIN },
  { path: '$localappdata/Microsoft/Edge/User Data', holds: 'Edge profiles', os: WIN },
  { path: '$localappdata/BraveSoftware', holds: 'Brave profiles', os: WIN },
  { path: '$appdata/Mozilla', holds: 'Firefox profiles', os: WIN },
  { path: '$appdata/gcloud', holds: 'Google Cloud SDK credentials', os: WIN },
  { path: '$appdata/GitHub CLI/hosts.yml', holds: 'GitHub CLI tokens', os: WIN },
];

/**
 * The names beside Zero's OAuth token store that hold or pass through its secrets: the lock, the
 * encryption key and its lock, the temporary files older versions left, and the directories each
 * writes its next contents through before the rename. With ZERO_OAUTH_STORAGE=keyring the store
 * writes none of them, and only the named path is denied.
 */
const OAUTH_STORE_SIBLINGS = ['.lockfile', '.secret', '.secret.lock', '.tmp', '.secret.tmp', '.publish', '.secret.publish'];

/**
 * Variables that name a credential file or directory (a list for KUBECONFIG): what they name is
 * denied as well, whatever the table says, and with it the siblings a store keeps beside it
 * (`siblings`: suffixes appended to the named path).
 */
export const CREDENTIAL_ENV_FILES: readonly {
  variable: string;
  holds: string;
  list?: boolean;
  siblings?: readonly string[];
  /** A variable and value under which the store writes no siblings (its tokens live elsewhere). */
  noSiblingsWhen?: readonly [variable: string, value: string];
}[] = [
  { variable: 'GOOGLE_APPLICATION_CREDENTIALS', holds: 'Google service account key' },
  { variable: 'KUBECONFIG', holds: 'Kubernetes configs', list: true },
  { variable: 'AWS_SHARED_CREDENTIALS_FILE', holds: 'AWS credentials' },
  { variable: 'PGPASSFILE', holds: 'PostgreSQL passwords' },
  { variable: 'TF_CLI_CONFIG_FILE', holds: 'Terraform CLI credentials' },
  { variable: 'HISTFILE', holds: 'shell history' },
  { variable: 'ZERO_OAUTH_TOKENS_PATH', holds: "Zero's OAuth tokens", siblings: OAUTH_STORE_SIBLINGS, noSiblingsWhen: ['ZERO_OAUTH_STORAGE', 'keyring'] },
  // The legacy store's migration leaves the tokens in a backup beside it.
  { variable: 'ZERO_MCP_OAUTH_TOKENS_PATH', holds: "Zero's MCP OAuth tokens", siblings: ['.migrated'] },
];

/**
 * Directories denied entry by entry, except names a predicate keeps readable: ~/.ssh (public keys,
 * known_hosts and client config stay readable) and Zero's own config directory (its plugins,
 * specialists and commands stay readable). An entry created there later is denied too.
 */
export const CREDENTIAL_GUARDED_DIRS: readonly { path: string; holds: string; keeps: string }[] = [
  { path: '~/.ssh', holds: 'SSH private keys', keeps: 'known_hosts, known_hosts.old, config, authorized_keys, *.pub' },
  { path: '$config/zero', holds: "Zero's grants and tokens", keeps: 'plugins, specialists, commands' },
];

/**
 * Host files only root may read. The sandbox of a root caller runs as uid 0 mapped to the host's
 * root (no capabilities, but the owner's permission bits still apply), so these are denied to
 * it: password hashes, sudo rules, SSH host private keys, and /root unless it is the caller's own
 * home (whose credential stores the table above covers) or holds a write root.
 */
export const ROOT_ONLY_FILES: readonly string[] = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d', '/etc/security/opasswd'];

/** SSH host private keys in /etc/ssh (`ssh_host_*_key`; the `.pub` halves stay readable). */
export function isSshHostPrivateKey(name: string): boolean {
  return /^ssh_host_.*_key$/.test(name);
}

/**
 * The root-only candidates for a root caller: ROOT_ONLY_FILES, the SSH host private keys, and
 * /root unless `home` is /root or a write root lies inside it.
 */
export function buildRootOnlyCandidates(home: string | undefined, writeRoots: readonly string[], list: (dir: string) => string[] | undefined): string[] {
  const out = [...ROOT_ONLY_FILES];
  for (const name of list('/etc/ssh') ?? []) if (isSshHostPrivateKey(name)) out.push(`/etc/ssh/${name}`);
  if (home !== '/root' && !writeRoots.some((root) => root === '/root' || root.startsWith('/root/'))) out.push('/root');
  return out;
}

/** Files directly in ~/.ssh that stay readable: host keys, client config and public keys. */
export function isSshPublicEntry(name: string): boolean {
  return (
    name === 'known_hosts' ||
    name === 'known_hosts.old' ||
    name === 'config' ||
    name === 'authorized_keys' ||
    name.endsWith('.pub')
  );
}

function isZeroCarveOut(name: string): boolean {
  return name === 'plugins' || name === 'specialists' || name === 'commands';
}

export interface CredentialSource {
  env: Readonly<Record<string, string | undefined>>;
  home?: string;
  /** Lists a directory (names only), or undefined when it does not exist. Injected for tests. */
  list(dir: string): string[] | undefined;
  /** The system whose stores apply (default: this one). */
  platform?: string;
}

function fromEnv(env: CredentialSource['env'], name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** The variables the list reads. */
const CREDENTIAL_ENV_NAMES = [
  'HOME', 'npm_config_userconfig',
  ...Object.values(CREDENTIAL_BASES).map((base) => base.variable),
  ...CREDENTIAL_ENV_FILES.flatMap((entry) => (entry.noSiblingsWhen === undefined ? [entry.variable] : [entry.variable, entry.noSiblingsWhen[0]])),
];

/** A guarded directory, expanded: its path and which entry names stay readable. */
export interface GuardedDir {
  dir: string;
  keeps(name: string): boolean;
}

/** The part of the list that follows from the environment alone (no directory listing). */
export interface CredentialShape {
  /** Every store's path (absolute, made absolute literally; existence not checked). */
  paths: string[];
  guarded: GuardedDir[];
}

// Shapes by the values they were built from (a pure function of them); a few environments per process.
const shapes = new BoundedMemo<CredentialShape>(32);

function buildShape(env: CredentialSource['env'], givenHome: string | undefined, platform: string): CredentialShape {
  const home = givenHome ?? fromEnv(env, 'HOME') ?? homedir();
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(p));
  const bases = new Map<string, string[]>();
  // Expands one template to its directories (a base may stand for two).
  const expand = (template: string): string[] => {
    if (template === '~') return [home];
    if (template.startsWith('~/')) return [join(home, template.slice(2))];
    const match = /^\$([A-Za-z]+)(\/.*)?$/.exec(template);
    if (match === null) throw new Error(`credential template ${template} starts with neither ~/ nor $base`);
    const rest = match[2] === undefined ? '' : match[2].slice(1);
    return baseDirs(match[1] as string).map((dir) => (rest === '' ? dir : join(dir, rest)));
  };
  const baseDirs = (name: string): string[] => {
    const known = bases.get(name);
    if (known !== undefined) return known;
    const base = CREDENTIAL_BASES[name];
    if (base === undefined) throw new Error(`credential template base $${name} is not defined`);
    let value = fromEnv(env, base.variable);
    if (name === 'npmrc') value ??= fromEnv(env, 'npm_config_userconfig');
    const dirs = value === undefined ? expand(base.fallback) : [abs(value), ...(base.alsoFallback === true ? expand(base.fallback) : [])];
    const unique = [...new Set(dirs)];
    bases.set(name, unique);
    return unique;
  };
  const paths: string[] = [];
  for (const store of CREDENTIAL_STORES) {
    if (store.os !== undefined && !store.os.includes(platform as CredentialOs)) continue;
    paths.push(...expand(store.path));
  }
  for (const entry of CREDENTIAL_ENV_FILES) {
    const value = fromEnv(env, entry.variable);
    if (value === undefined) continue;
    const items = entry.list === true ? value.split(platform === 'win32' ? ';' : ':') : [value];
    const off = entry.noSiblingsWhen !== undefined && fromEnv(env, entry.noSiblingsWhen[0])?.trim() === entry.noSiblingsWhen[1];
    const siblings = off ? [] : (entry.siblings ?? []);
    for (const item of items) {
      if (item === '') continue;
      const path = abs(item);
      paths.push(path, ...siblings.map((suffix) => path + suffix));
    }
  }
  const guarded: GuardedDir[] = [
    ...expand('~/.ssh').map((dir) => ({ dir, keeps: isSshPublicEntry })),
    ...expand('$config/zero').map((dir) => ({ dir, keeps: isZeroCarveOut })),
  ];
  return { paths: [...new Set(paths)], guarded };
}

/** The environment-derived part of the list, remembered by the values it was built from. */
// process.platform default: where tools keep credentials differs per OS (~/Library, %APPDATA%, ~/.config).
export function buildCredentialShape(env: CredentialSource['env'], home?: string, platform: string = process.platform): CredentialShape {
  const values = CREDENTIAL_ENV_NAMES.map((name) => env[name]);
  // Relative overrides resolve against the working directory; without HOME, the account's home.
  const fallbackHome = home === undefined && fromEnv(env, 'HOME') === undefined ? homedir() : '';
  const key = JSON.stringify([home ?? null, fallbackHome, process.cwd(), platform, values]);
  return shapes.get(key, () => buildShape(env, home, platform));
}

/**
 * Candidate paths to deny reading, in a stable order: every store's path, files named by
 * variables, and the entries of the guarded directories that are not kept readable. Override
 * variables are used literally (made absolute); missing paths are filtered later by whoever can
 * see the filesystem. The guarded directories are listed on every call.
 */
export function buildCredentialBaseline(source: CredentialSource): string[] {
  const shape = buildCredentialShape(source.env, source.home, source.platform);
  const out = [...shape.paths];
  for (const { dir, keeps } of shape.guarded) {
    for (const name of source.list(dir) ?? []) if (!keeps(name)) out.push(join(dir, name));
  }
  return [...new Set(out)];
}

/** The table as `policy --json` reports it. */
export function buildCredentialListJson(): Record<string, unknown> {
  return {
    stores: CREDENTIAL_STORES.map((store) => ({ ...store })),
    bases: Object.fromEntries(Object.entries(CREDENTIAL_BASES).map(([name, base]) => [name, { ...base }])),
    namedByVariables: CREDENTIAL_ENV_FILES.map((entry) => ({ ...entry })),
    guardedDirs: CREDENTIAL_GUARDED_DIRS.map((entry) => ({ ...entry })),
  };
}
