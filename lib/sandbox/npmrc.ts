// SPDX-License-Identifier: MIT
// The user's npm config without its secrets. ~/.npmrc is masked inside the sandbox (credential
// baseline), which would also drop its registry and scope mappings: npm would then fetch
// `@company/pkg` from the public registry (dependency confusion). A sanitized copy in the managed
// state keeps every setting except credentials, so private packages fail with 401 instead.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

import type { HostFacts } from '../host-facts.js';

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
 * The npmrc text without credentials: drops every setting whose key names a secret or that
 * continues onto further lines, strips user info from URLs, and keeps comments, sections and
 * everything else (registries, scope mappings, proxies, behaviour flags).
 */
export function buildSanitizedNpmrc(text: string): { text: string; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';') || /^\[.*\]$/.test(trimmed)) {
      kept.push(line);
      continue;
    }
    const eq = trimmed.indexOf('=');
    const key = (eq === -1 ? trimmed : trimmed.slice(0, eq)).trim();
    const value = eq === -1 ? '' : trimmed.slice(eq + 1).trim();
    if (SECRET_KEY.test(key) || value.endsWith('\\')) dropped.push(key);
    else if (URL_WITH_USERINFO.test(value)) {
      // Keep the registry or proxy (so npm does not fall back to the public one), minus the login.
      kept.push(`${key}=${value.replace(/(:\/\/)[^/\s@]*@/g, '$1')}`);
      dropped.push(`${key} (user info)`);
    } else kept.push(line);
  }
  return { text: kept.join('\n'), dropped };
}

/**
 * Writes the sanitized copy of the user's npmrc to `target` (outside every write root) when the
 * user has one that is newer than the copy; returns `target`, or undefined when there is none.
 * `facts` (this call's, see host-facts.ts) answer the look-up of the user's file when given.
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
    if (statSync(target).mtimeMs >= sourceMtime) return target;
  } catch {
    // no copy yet
  }
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch {
    return undefined; // unreadable to us too: npm inside sees no user config, as before
  }
  const temp = `${target}.${process.pid}.tmp`;
  writeFileSync(temp, buildSanitizedNpmrc(text).text, { mode: 0o600 });
  renameSync(temp, target);
  return target;
}
