// SPDX-License-Identifier: MIT
// The one secret redaction of every output path: stream-json and json events, tool results,
// grant reasons stored on disk. Secret-named keys and secret-looking strings, one pattern list.

/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Normalized key names (lower case, letters and digits only) that always hold a secret. */
const SECRET_KEYS = new Set(['token', 'password', 'passwd', 'secret', 'apikey', 'authorization', 'credentials', 'privatekey', 'clientsecret', 'sessiontoken']);

/** Normalized key suffixes that mark a secret (`OPENAI_API_KEY`, `githubAccessToken`, `db_password`). */
const SECRET_SUFFIXES = ['apikey', 'clientsecret', 'accesstoken', 'refreshtoken', 'idtoken', 'authtoken', 'privatekey', 'password', 'secretkey', 'secretaccesskey', 'sessiontoken'];

/**
 * String patterns, applied in order: `sk-` keys of 16+ characters, `api_key=`/`api-key:`
 * assignments of 12+ (quoted or not, the quotes kept; the value runs to the next space or quote,
 * so a value with `,` or `;` in it is hidden whole), `Bearer` tokens of 16+ (any case). Shorter
 * values are left alone so ordinary words that merely start with `sk-` survive.
 */
const SECRET_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(api[_-]?key["']?\s*[=:]\s*)(["']?)[^\s"']{12,}\2/gi, `$1$2${REDACTED}$2`],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/gi, `$1${REDACTED}`],
];

/** Whether a key name denotes a secret (compared case- and separator-insensitively). */
export function isSecretKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (normalized === '') return false;
  return SECRET_KEYS.has(normalized) || SECRET_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}

/** Returns `text` with `sk-…` keys, `api_key=…` assignments and `Bearer …` tokens replaced. */
export function redactString(text: string): string {
  let result = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

/** redactString, and how many secrets it replaced. */
export function redactCounted(text: string): { text: string; count: number } {
  let result = text;
  let count = 0;
  for (const [pattern, replacement] of SECRET_PATTERNS) {
    count += result.match(pattern)?.length ?? 0;
    result = result.replace(pattern, replacement);
  }
  return { text: result, count };
}

/**
 * Deep copy of `value` with secret-named keys replaced by `[REDACTED]` (whatever their value) and
 * every string scrubbed with redactString. Arrays and plain objects are walked; other values are
 * returned as they are.
 */
export function redactValue<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map(walk);
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = isSecretKey(key) && item !== undefined && item !== null && item !== '' ? REDACTED : walk(item);
    }
    return copy;
  }
  return value;
}
