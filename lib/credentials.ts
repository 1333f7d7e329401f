// SPDX-License-Identifier: MIT
// The credential deny-read baseline: the reference's list (cloud, registry, forge and cluster
// credentials, git credential stores, Zero's own config dir) plus SSH private keys.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import { BoundedMemo } from './bounded-memo.js';

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

export interface CredentialSource {
  env: Readonly<Record<string, string | undefined>>;
  home?: string;
  /** Lists a directory (names only), or undefined when it does not exist. Injected for tests. */
  list(dir: string): string[] | undefined;
}

function fromEnv(env: CredentialSource['env'], name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** The variables the baseline reads. */
const CREDENTIAL_ENV_NAMES = [
  'HOME', 'XDG_CONFIG_HOME', 'CARGO_HOME', 'GOOGLE_APPLICATION_CREDENTIALS', 'NPM_CONFIG_USERCONFIG',
  'npm_config_userconfig', 'NETRC', 'KUBECONFIG', 'DOCKER_CONFIG', 'GH_CONFIG_DIR', 'CLOUDSDK_CONFIG',
  'ZERO_OAUTH_TOKENS_PATH', 'ZERO_MCP_OAUTH_TOKENS_PATH',
] as const;

/** The part of the baseline that follows from the environment alone (no directory listing). */
interface BaselineShape {
  /** Candidates before Zero's config dir entries. */
  fixed: string[];
  /** Zero's config dirs, whose entries are candidates. */
  zeroDirs: string[];
  /** Token files named by variables. */
  tokens: string[];
  /** ~/.ssh, whose private entries are candidates. */
  ssh: string;
}

// Shapes by the values they were built from (a pure function of them); a few environments per process.
const shapes = new BoundedMemo<BaselineShape>(32);

function buildBaselineShape(env: CredentialSource['env'], givenHome: string | undefined): BaselineShape {
  const home = givenHome ?? fromEnv(env, 'HOME') ?? homedir();
  const config = fromEnv(env, 'XDG_CONFIG_HOME') ?? join(home, '.config');
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(p));
  const out: string[] = [
    join(home, '.aws'),
    join(home, '.azure'),
    join(home, '.git-credentials'),
    join(config, 'git', 'credentials'),
    join(home, '.config', 'git', 'credentials'),
  ];
  // Pure credential stores of other package registries (their config files stay readable).
  const cargo = abs(fromEnv(env, 'CARGO_HOME') ?? join(home, '.cargo'));
  out.push(join(cargo, 'credentials'), join(cargo, 'credentials.toml'), join(home, '.pypirc'), join(home, '.gem', 'credentials'));
  const gac = fromEnv(env, 'GOOGLE_APPLICATION_CREDENTIALS');
  if (gac !== undefined) out.push(abs(gac));
  out.push(abs(fromEnv(env, 'NPM_CONFIG_USERCONFIG') ?? fromEnv(env, 'npm_config_userconfig') ?? join(home, '.npmrc')));
  out.push(abs(fromEnv(env, 'NETRC') ?? join(home, '.netrc')));
  const kube = fromEnv(env, 'KUBECONFIG');
  if (kube !== undefined) {
    for (const entry of kube.split(':')) if (entry !== '') out.push(abs(entry));
  } else {
    out.push(join(home, '.kube', 'config'));
  }
  out.push(join(abs(fromEnv(env, 'DOCKER_CONFIG') ?? join(home, '.docker')), 'config.json'));
  out.push(join(abs(fromEnv(env, 'GH_CONFIG_DIR') ?? join(config, 'gh')), 'hosts.yml'));
  const gcloud = fromEnv(env, 'CLOUDSDK_CONFIG');
  if (gcloud !== undefined) out.push(abs(gcloud));
  else out.push(join(config, 'gcloud'), join(home, '.config', 'gcloud'));
  const tokens: string[] = [];
  for (const name of ['ZERO_OAUTH_TOKENS_PATH', 'ZERO_MCP_OAUTH_TOKENS_PATH']) {
    const path = fromEnv(env, name);
    if (path !== undefined) tokens.push(abs(path));
  }
  return { fixed: out, zeroDirs: [...new Set([join(config, 'zero'), join(home, '.config', 'zero')])], tokens, ssh: join(home, '.ssh') };
}

/**
 * Candidate paths to deny reading, in a stable order. Override variables are used literally
 * (made absolute); missing paths are filtered later by whoever can see the filesystem. The
 * directories are listed on every call; what follows from the environment alone is remembered by
 * the values it was built from.
 */
export function buildCredentialBaseline(source: CredentialSource): string[] {
  const env = source.env;
  const values = CREDENTIAL_ENV_NAMES.map((name) => env[name]);
  // Relative overrides resolve against the working directory; without HOME, the account's home.
  const fallbackHome = source.home === undefined && fromEnv(env, 'HOME') === undefined ? homedir() : '';
  const key = JSON.stringify([source.home ?? null, fallbackHome, process.cwd(), values]);
  const shape = shapes.get(key, () => buildBaselineShape(env, source.home));
  const out = [...shape.fixed];
  // Zero's own config dir (grants, tokens) except the carve-outs the reference re-allows.
  for (const zeroDir of shape.zeroDirs) {
    const entries = source.list(zeroDir);
    if (entries === undefined) continue;
    for (const name of entries) {
      if (name === 'plugins' || name === 'specialists' || name === 'commands') continue;
      out.push(join(zeroDir, name));
    }
  }
  out.push(...shape.tokens);
  for (const name of source.list(shape.ssh) ?? []) if (!isSshPublicEntry(name)) out.push(join(shape.ssh, name));
  return [...new Set(out)];
}
