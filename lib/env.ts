// SPDX-License-Identifier: MIT
// The sandboxed command's environment: the caller's (or the given) variables minus every secret,
// plus the sandbox markers. Applied on every path, escalated runs included.
import { BoundedMemo } from './bounded-memo.js';

/** Exact names removed from every sandboxed environment (compared case-insensitively). */
export const SENSITIVE_ENV_NAMES: readonly string[] = [
  // The Go Zero CLI's list: a variable it keeps out of a sandbox stays out of ours too.
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

/** Name suffixes that mark a secret, compared in upper case. */
export const SENSITIVE_ENV_SUFFIXES: readonly string[] = ['_API_KEY', '_TOKEN', '_SECRET', '_PASSWORD', '_CLIENT_SECRET'];

/**
 * Name patterns that mark a secret whatever the value, matched against the upper-cased name.
 * TOKEN is not matched when a letter other than S follows (TOKENIZERS_PARALLELISM is a setting);
 * `_PWD` catches MYSQL_PWD while PWD and OLDPWD (directories) stay; `_PAT` must end a segment
 * (GITHUB_PAT, not LD_LIBRARY_PATH).
 */
export const SENSITIVE_ENV_NAME_PATTERNS: readonly RegExp[] = [
  /TOKEN(?![A-RT-Z])/, /SECRET/, /PASSWORD/, /PASSWD/, /PASSPHRASE/, /_PWD(?![A-Z])/, /API_?KEY/, /PRIVATE_?KEY/,
  /CREDENTIAL/, /_PAT(?![A-Z0-9])/, /(^|_)PASS$/, /^NPM_CONFIG_.*AUTH/, /COOKIE/, /WEBHOOK/, /(^|_)DSN$/,
];

/**
 * Name patterns that mark a secret only when the value looks like one (long, no blanks, not a
 * path, letters with digits or symbols): AUTH (XAUTHORITY and GIT_AUTHOR_* are paths and names)
 * and names ending in _KEY (a signing, master or license key, but also a key *name*).
 */
const SECRET_IF_VALUE_LOOKS = [/AUTH(?!OR)/, /_KEY$/];

/**
 * Values that are secrets whatever the name: URLs with a password, well-known token shapes
 * (GitHub, GitLab, Slack, OpenAI/Anthropic, Stripe, npm, PyPI, Hugging Face, Google, SendGrid,
 * AWS access key ids, DigitalOcean, Vault, Shopify, Databricks, Linear, Atlassian, Sentry, age),
 * PEM private keys, JWTs, connection strings with a password, webhook URLs whose path is the
 * secret (Slack, Discord), URLs whose user part is a 32-hex key (Sentry DSNs) and HTTP
 * Authorization values (Bearer/Basic/token followed by the credential).
 */
export const SECRET_VALUE = new RegExp(
  [
    String.raw`[a-z][a-z0-9+.-]*://[^\s/:@]*:[^\s/@]+@`,
    String.raw`(?:^|[^A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{8,}|sk-[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|AIza[A-Za-z0-9_-]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|(?:AKIA|ASIA)[A-Z0-9]{16})`,
    String.raw`-----BEGIN [A-Z ]*PRIVATE KEY`,
    String.raw`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.`,
    String.raw`(?:^|;)\s*(?:password|pwd)\s*=`,
    String.raw`(?:^|[^A-Za-z0-9])(?:xapp-[0-9]-[A-Za-z0-9-]{8,}|gl(?:ptt|dt|rt|oas)-[A-Za-z0-9_-]{16,}|do[opr]_v1_[a-f0-9]{32,}|hv[sb]\.[A-Za-z0-9_-]{20,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{20,}|dapi[a-f0-9]{32}|lin_api_[A-Za-z0-9]{20,}|ATATT3[A-Za-z0-9_=-]{20,}|sntr[yu]s_[A-Za-z0-9_=+/-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|AGE-SECRET-KEY-1[A-Z0-9]{20,})`,
    String.raw`hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/\d+/`,
    String.raw`://[0-9a-f]{32}(?::[0-9a-f]*)?@`,
    String.raw`^(?:Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{12,}\s*$`,
  ].join('|'),
  'i',
);

const EXACT = new Set(SENSITIVE_ENV_NAMES.map((name) => name.toUpperCase()));
const OAUTH_CLIENT_SECRET = /^ZERO_OAUTH_.*_CLIENT_SECRET$/;

// Verdicts by name: a pure function of the name, and an environment holds the same few names
// call after call. Bounded, so a caller inventing names cannot grow it without limit. Looked up
// with find/keep, not get: every run asks once per variable, and a closure per question was
// most of what a run's environment scrub allocated.
const verdicts = new BoundedMemo<boolean>(4096);
const valueChecked = new BoundedMemo<boolean>(4096);
// The verdict on the value a name last had: an environment passes the same values call after
// call, and the value patterns cost far more than a look-up. Kept per name with the value it was
// given for and compared by content (a variable read again is a new string of the same text), so
// a question allocates nothing; a name whose value changes is judged again. Bounded like the others.
const valueVerdicts = new BoundedMemo<{ value: string; sensitive: boolean }>(4096);

function judgeEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (EXACT.has(upper)) return true;
  if (OAUTH_CLIENT_SECRET.test(upper)) return true;
  if (SENSITIVE_ENV_SUFFIXES.some((suffix) => upper.endsWith(suffix))) return true;
  return SENSITIVE_ENV_NAME_PATTERNS.some((pattern) => pattern.test(upper));
}

/** True when a variable of this name must not cross into the sandbox, whatever its value. */
export function isSensitiveEnvName(name: string): boolean {
  return verdicts.find(name) ?? verdicts.keep(name, judgeEnvName(name));
}

/** A value that looks like a secret: 12+ characters, no blanks, not a path, mixed character classes. */
function looksSecret(value: string): boolean {
  if (value.length < 12 || /\s/.test(value) || value.startsWith('/') || value.startsWith('~')) return false;
  return /[0-9]/.test(value) ? /[A-Za-z]/.test(value) : /[A-Za-z]/.test(value) && /[^A-Za-z]/.test(value);
}

/** True when this variable must not cross into the sandbox, judged by its name and its value. */
export function isSensitiveEnv(name: string, value: string): boolean {
  if (isSensitiveEnvName(name)) return true;
  const last = valueVerdicts.find(name);
  if (last !== undefined && last.value === value) return last.sensitive;
  return valueVerdicts.keep(name, { value, sensitive: judgeValue(name, value) }).sensitive;
}

function judgeValue(name: string, value: string): boolean {
  const upper = name.toUpperCase();
  const named = valueChecked.find(upper) ?? valueChecked.keep(upper, SECRET_IF_VALUE_LOOKS.some((pattern) => pattern.test(upper)));
  if (named && looksSecret(value)) return true;
  return SECRET_VALUE.test(value);
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
  /** Receives the name of every variable scrubbed (never its value), in the source's order. */
  scrubbed?: string[];
}

/** Scrubs secrets (by name, then by value), then sets PATH/TERM defaults, temp variables, overrides and the markers. */
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
    const passed = pass?.has(name.toUpperCase()) === true;
    if (!passed && isSensitiveEnvName(name)) {
      options.scrubbed?.push(name); // a secret's value is never even read
      continue;
    }
    const value = source[name];
    if (value === undefined || value.includes('\0')) continue;
    if (!passed && isSensitiveEnv(name, value)) {
      options.scrubbed?.push(name);
      continue;
    }
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
