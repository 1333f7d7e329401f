// SPDX-License-Identifier: MIT
// The sandboxed command's environment: the caller's (or the given) variables minus every secret,
// plus the sandbox markers. Applied on every path, escalated runs included (decisions.md rule 2).
import { BoundedMemo } from './bounded-memo.js';

/** Exact names removed from every sandboxed environment (compared case-insensitively). */
export const SENSITIVE_ENV_NAMES: readonly string[] = [
  // The reference's list.
  'COHERE_API_KEY', 'PERPLEXITY_API_KEY', 'ANYSCALE_API_KEY', 'AZURE_OPENAI_API_KEY',
  'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'GITLAB_TOKEN', 'GH_TOKEN',
  'ZERO_WEBSEARCH_API_KEY', 'ZERO_DAEMON_REMOTE_TOKEN', 'ZERO_DAEMON_REMOTE_TOKEN_FILE',
  // Model providers.
  'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'MISTRAL_API_KEY',
  'GROQ_API_KEY', 'DEEPSEEK_API_KEY', 'OPENROUTER_API_KEY', 'XAI_API_KEY', 'TOGETHER_API_KEY',
  'FIREWORKS_API_KEY', 'CEREBRAS_API_KEY', 'AZURE_API_KEY', 'HUGGINGFACE_API_KEY', 'REPLICATE_API_TOKEN',
  'VOYAGE_API_KEY', 'NVIDIA_API_KEY', 'OLLAMA_API_KEY', 'MOONSHOT_API_KEY', 'DASHSCOPE_API_KEY',
  // Forges, registries, clouds.
  'GITHUB_TOKEN', 'NPM_TOKEN', 'HF_TOKEN', 'CARGO_REGISTRY_TOKEN', 'PYPI_TOKEN', 'TWINE_PASSWORD',
  'DOCKER_PASSWORD', 'AZURE_CLIENT_SECRET', 'GOOGLE_APPLICATION_CREDENTIALS_JSON',
  'DIGITALOCEAN_ACCESS_TOKEN', 'CLOUDFLARE_API_TOKEN', 'HEROKU_API_KEY', 'VERCEL_TOKEN',
  // Agent sockets: a path that lends signing power.
  'SSH_AUTH_SOCK',
];

/** Name suffixes that mark a secret (decisions.md rule 2), compared in upper case. */
export const SENSITIVE_ENV_SUFFIXES: readonly string[] = ['_API_KEY', '_TOKEN', '_SECRET', '_PASSWORD', '_CLIENT_SECRET'];

const EXACT = new Set(SENSITIVE_ENV_NAMES.map((name) => name.toUpperCase()));
const OAUTH_CLIENT_SECRET = /^ZERO_OAUTH_.*_CLIENT_SECRET$/;

// Verdicts by name: a pure function of the name, and an environment holds the same few names
// call after call. Bounded, so a caller inventing names cannot grow it without limit.
const verdicts = new BoundedMemo<boolean>(4096);

function judgeEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (EXACT.has(upper)) return true;
  if (OAUTH_CLIENT_SECRET.test(upper)) return true;
  return SENSITIVE_ENV_SUFFIXES.some((suffix) => upper.endsWith(suffix));
}

/** True when a variable of this name must not cross into the sandbox. */
export function isSensitiveEnvName(name: string): boolean {
  return verdicts.get(name, () => judgeEnvName(name));
}

export const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin';
export const MARKER_SANDBOXED = 'ZERO_SANDBOXED';
export const MARKER_BACKEND = 'ZERO_SANDBOX_BACKEND';
export const MARKER_NETWORK = 'ZERO_SANDBOX_NETWORK';

export interface SandboxEnvOptions {
  backend: string;
  network: 'deny' | 'allow';
  /** Variables to let through on purpose (config `sandbox.env.pass`). */
  pass?: readonly string[];
  /** The temp directory inside the sandbox, exported as TMPDIR/TMP/TEMP. */
  tmpDir?: string;
  /** Extra variables the runtime sets (managed caches), applied after scrubbing. */
  overrides?: Readonly<Record<string, string>>;
}

/** Scrubs secrets, then sets PATH/TERM defaults, temp variables, overrides and the markers. */
export function buildSandboxEnv(
  source: Readonly<Record<string, string | undefined>>,
  options: SandboxEnvOptions,
): Record<string, string> {
  const passList = options.pass ?? [];
  const pass = passList.length === 0 ? undefined : new Set(passList.map((name) => name.toUpperCase()));
  const env: Record<string, string> = {};
  // Names first, then one read each: process.env answers every access with a lookup.
  for (const name of Object.keys(source)) {
    if (name === '' || name.includes('=')) continue;
    if (isSensitiveEnvName(name) && !pass?.has(name.toUpperCase())) continue;
    const value = source[name]; // a secret's value is never even read
    if (value === undefined || value.includes('\0')) continue;
    env[name] = value;
  }
  if (env.PATH === undefined || env.PATH === '') env.PATH = DEFAULT_PATH;
  if (env.TERM === undefined || env.TERM === '') env.TERM = 'dumb';
  if (options.tmpDir !== undefined) {
    env.TMPDIR = options.tmpDir;
    env.TMP = options.tmpDir;
    env.TEMP = options.tmpDir;
  }
  for (const [name, value] of Object.entries(options.overrides ?? {})) env[name] = value;
  env[MARKER_SANDBOXED] = '1';
  env[MARKER_BACKEND] = options.backend;
  env[MARKER_NETWORK] = options.network;
  return env;
}

/** The same environment as `KEY=value` strings, the form execve takes. */
export function envToList(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([name, value]) => `${name}=${value}`);
}
