// SPDX-License-Identifier: MIT
// The user's npm config without its secrets. ~/.npmrc is masked inside the sandbox (credential
// baseline), which would also drop its registry and scope mappings: npm would then fetch
// `@company/pkg` from the public registry (dependency confusion). A sanitized copy in the managed
// state keeps every setting except credentials, so private packages fail with 401 instead.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, renameSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

import { isSensitiveEnvName } from '../env.js';
import { SandboxError } from '../errors.js';
import type { HostFacts } from '../host-facts.js';
import { removeEntry, replaceFile, toBytes } from './beneath.js';
import { buildOwnerName, currentHolder } from './runtime-lease.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Key fragments that mark a credential (`_auth`, `//host/:_authToken`, `_password`, certs, ...). */
const SECRET_KEY = /(auth|password|passwd|token|username|email|cert|key|otp|secret)/i;
/** A URL with user info (`https://user:pass@proxy`). */
const URL_WITH_USERINFO = /[a-z][a-z0-9+.-]*:\/\/[^/\s@]*@/i;

/** The user's npm config file, as npm finds it (`npm_config_userconfig`, else `~/.npmrc`). */
export function buildHostNpmrcPath(env: Env, home: string = env.HOME ?? homedir()): string {
  for (const name of ['npm_config_userconfig', 'NPM_CONFIG_USERCONFIG']) {
    const value = env[name];
    if (value !== undefined && isAbsolute(value)) return value;
  }
  return join(home, '.npmrc');
}

/**
 * A key or value as npm's ini reader decodes it: trimmed; a quoted one unquoted (single quotes
 * dropped, then JSON-decoded, so `"_auth\u0054oken"` is `_authToken`); an unquoted one cut at the
 * first unescaped `;` or `#`, with `\;`, `\#` and `\\` unescaped.
 */
export function decodeIniPart(raw: string): string {
  let text = raw.trim();
  const quoted = text.length > 1 && ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'")));
  if (quoted) {
    if (text.startsWith("'")) text = text.slice(1, -1);
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'string' ? parsed : String(parsed);
    } catch {
      return text;
    }
  }
  let out = '';
  let escaped = false;
  for (const c of text) {
    if (escaped) {
      out += '\\;#'.includes(c) ? c : `\\${c}`;
      escaped = false;
    } else if (c === ';' || c === '#') break;
    else if (c === '\\') escaped = true;
    else out += c;
  }
  if (escaped) out += '\\';
  return out.trim();
}

/** `${NAME}` references npm expands in keys and values. */
const ENV_REFERENCE = /\$\{([^}]*)\}/g;

function referencesSecret(text: string): boolean {
  for (const match of text.matchAll(ENV_REFERENCE)) if (isSensitiveEnvName(match[1] as string)) return true;
  return false;
}

/**
 * The npmrc text without credentials, read line by line exactly as npm's ini reader splits and
 * decodes it (any run of CR and LF ends a line; keys and values may be quoted or escaped). Drops
 * every setting whose decoded key names a secret, whose key is built from a `${VAR}` reference
 * (it could resolve to anything), whose value references a secret variable, or that continues
 * onto further lines; strips user info from URLs; keeps comments, sections and everything else
 * (registries, scope mappings, proxies, behaviour flags). Lines are rejoined with LF.
 */
export function buildSanitizedNpmrc(text: string): { text: string; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  // A section whose name carries a secret is dropped with its settings (dropping only the header
  // would move them to the top level).
  let skipping = false;
  for (const line of text.split(/[\r\n]+/)) {
    const section = /^\[([^\]]*)\]\s*$/.exec(line);
    if (section !== null) {
      const name = decodeIniPart(section[1] as string);
      skipping = SECRET_KEY.test(name) || SECRET_KEY.test(section[1] as string) || name.includes('${');
      if (skipping) dropped.push(`[${name}]`);
      else kept.push(line);
      continue;
    }
    if (line === '' || /^\s*[;#]/.test(line) || /^\s*$/.test(line)) {
      kept.push(line);
      continue;
    }
    if (skipping) continue;
    const match = /^([^=]+)(=(.*))?$/.exec(line);
    if (match === null) {
      dropped.push('(unparsed line)'); // npm skips it too
      continue;
    }
    const rawKey = match[1] as string;
    const key = decodeIniPart(rawKey);
    const value = match[2] === undefined ? '' : decodeIniPart(match[3] as string);
    const rawValue = (match[3] ?? '').trim();
    if (SECRET_KEY.test(key) || SECRET_KEY.test(rawKey) || key.includes('${') || referencesSecret(value) || rawValue.endsWith('\\')) {
      dropped.push(key);
    } else if (URL_WITH_USERINFO.test(value)) {
      // Keep the registry or proxy (so npm does not fall back to the public one), minus the login.
      const stripped = value.replace(/(:\/\/)[^/\s@]*@/g, '$1');
      kept.push(`${rawKey.trim()}=${/[;#"'\\]|^\s|\s$/.test(stripped) ? JSON.stringify(stripped) : stripped}`);
      dropped.push(`${key} (user info)`);
    } else kept.push(line);
  }
  return { text: kept.join('\n'), dropped };
}

/**
 * Writes the sanitized copy of the user's npmrc to `target` (outside every write root, its path
 * symlink-resolved) when the user has one that is newer than the copy; returns `target`, or
 * undefined when there is none. `facts` (this call's, see host-facts.ts) answer the look-up of the
 * user's file when given. Nothing at `target` or the temp name beside it is followed: the copy is
 * a new file made through the descriptor walk (no link on the way, O_EXCL) and renamed over
 * whatever is there; a FIFO or device as the user's file is not read (it could block forever).
 */
export function writeSanitizedNpmrc(env: Env, target: string, facts?: HostFacts): string | undefined {
  const source = buildHostNpmrcPath(env);
  let sourceMtime: number;
  try {
    const st = facts === undefined ? statSync(source) : facts.stat(source);
    if (st === undefined) return undefined;
    sourceMtime = st.mtimeMs;
  } catch {
    return undefined;
  }
  try {
    const copy = lstatSync(target, { throwIfNoEntry: false });
    if (copy?.isFile() === true && copy.mtimeMs >= sourceMtime) return target;
  } catch {
    // no copy yet
  }
  const text = readRegularFile(source);
  if (text === undefined) return undefined; // unreadable to us too: npm inside sees no user config, as before
  // One per thread: two worker threads of a process may refresh the copy at once.
  const temp = toBytes(`${target}.${buildOwnerName(currentHolder())}.tmp`);
  // Without the copy npm inside would fall back to the public registry for private scopes.
  const fail = (why: string) => {
    removeEntry(temp);
    return new SandboxError('spawn_failed', `cannot write the sanitized copy of ${source} at ${target}: ${why}`, { path: target });
  };
  if (!replaceFile(temp, Buffer.from(buildSanitizedNpmrc(text).text, 'utf8'), 0o600)) throw fail('a new file cannot be made there without following a link');
  try {
    renameSync(Buffer.from(temp, 'latin1'), target); // rename(2) replaces a link at target, never follows it
  } catch (error) {
    throw fail((error as Error).message);
  }
  return target;
}

/** The text of `path` when it is a regular file (links to one are the user's own and followed). */
function readRegularFile(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    if (!fstatSync(fd).isFile()) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
