// SPDX-License-Identifier: MIT
// Grant scopes: deriving a request's scope from its arguments, resolving it, and choosing the
// covering grant.
import { posix, sep, win32 } from 'node:path';

import { cleanJoin, isCleanAbsolute, isWithin } from '../../path-within.js';
import type { Grant } from '../schema.js';

/** A request or grant scope: kind '' is tool-wide. */
export interface DerivedScope {
  /** The scope value: a path (raw or absolute) or a lower-case host; '' when tool-wide. */
  raw: string;
  /** file, dir, host, or '' for tool-wide. */
  kind: '' | 'file' | 'dir' | 'host';
}

const SCOPE_KEYS: ReadonlyArray<readonly [string, 'file' | 'dir']> = [
  ['path', 'file'],
  ['file', 'file'],
  ['directory', 'dir'],
  ['dir', 'dir'],
  ['cwd', 'dir'],
  ['workdir', 'dir'],
];

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Lower-cases a host and strips brackets, port and a trailing dot. '' when it is not a host. */
export function normalizeHost(input: string): string {
  let host = input.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end === -1 ? host.slice(1) : host.slice(1, end);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1 && host.indexOf(':') === colon) host = host.slice(0, colon);
  }
  while (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

function urlHost(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return '';
    return normalizeHost(url.hostname);
  } catch {
    return '';
  }
}

function bareHost(value: string): string {
  const end = value.search(/[/?#]/);
  const authority = end === -1 ? value : value.slice(0, end);
  const match = /^([^:]+)(?::(\d+))?$/.exec(authority);
  if (match === null) return '';
  const host = (match[1] as string).toLowerCase();
  if (host === 'localhost' || IPV4.test(host) || host.includes('.')) return normalizeHost(host);
  return '';
}

/** The scope a request would be granted at (before resolution). */
export function deriveScope(toolName: string, args: Record<string, unknown> | undefined): DerivedScope {
  const a = args ?? {};
  if (toolName === 'browser_open' || toolName === 'web_fetch') {
    const url = typeof a.url === 'string' ? a.url.trim() : '';
    if (url === '') return { raw: '', kind: '' };
    let host = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? urlHost(url) : '';
    if (host === '' && toolName === 'browser_open' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) host = bareHost(url);
    return host === '' ? { raw: '', kind: '' } : { raw: host, kind: 'host' };
  }
  for (const [key, kind] of SCOPE_KEYS) {
    const value = a[key];
    const raw = typeof value === 'string' ? value.trim() : '';
    // The workspace itself ('.', './', 'a/..'): no scope. A path without a dot cannot normalize to one.
    if (raw === '' || (raw.includes('.') && posix.normalize(raw).replace(/\/+$/, '') === '.')) continue;
    return { raw, kind };
  }
  return { raw: '', kind: '' };
}

/** Path API for a platform. */
export function pathApi(platform: string): typeof posix {
  return platform === 'win32' || platform === 'windows' ? win32 : posix;
}

/** Makes a file/dir scope absolute against the workspace root; '' stays ''. */
// process.platform defaults here: scopes are paths, compared and resolved with the host OS's path rules.
export function resolveScopeAbs(scope: string, workspaceRoot: string, platform: string = process.platform): string {
  if (scope === '') return '';
  const api = pathApi(platform);
  if (api.isAbsolute(scope)) return api === posix && sep === posix.sep && isCleanAbsolute(scope) ? scope : api.normalize(scope);
  const base = workspaceRoot === '' ? process.cwd() : workspaceRoot;
  return (api === posix ? cleanJoin(base, scope) : undefined) ?? api.resolve(base, scope);
}

/** Resolves a derived scope to the form grants store. */
export function resolveScope(scope: DerivedScope, workspaceRoot: string, platform: string = process.platform): DerivedScope {
  if (scope.kind === '' || scope.raw === '') return { raw: '', kind: '' };
  if (scope.kind === 'host') return { raw: normalizeHost(scope.raw), kind: 'host' };
  return { raw: resolveScopeAbs(scope.raw, workspaceRoot, platform), kind: scope.kind };
}

/** Whether a grant covers a resolved request scope ('' = tool-wide request). */
export function grantCovers(grant: Pick<Grant, 'scope' | 'scopeKind'>, requestScope: string, platform: string = process.platform): boolean {
  const scope = grant.scope ?? '';
  const kind = grant.scopeKind ?? '';
  if (kind === '' || scope === '') return true;
  if (requestScope === '') return false;
  if (kind === 'host') return normalizeHost(scope) === normalizeHost(requestScope);
  const api = pathApi(platform);
  // Two clean absolute POSIX paths: relative() would resolve both again only to say whether one
  // holds the other (a grant lookup runs for every request the engine decides).
  if (api === posix && sep === posix.sep && isCleanAbsolute(scope) && isCleanAbsolute(requestScope)) {
    return kind === 'file' ? scope === requestScope : isWithin(scope, requestScope);
  }
  const fold = api === win32 ? (p: string) => p.toLowerCase() : (p: string) => p;
  const rel = api.relative(fold(api.normalize(scope)), fold(api.normalize(requestScope)));
  if (kind === 'file') return rel === '';
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + api.sep) && !api.isAbsolute(rel));
}

function specificity(grant: Grant): number {
  const kind = grant.scopeKind ?? '';
  if (kind === 'file' || kind === 'host') return 2;
  return kind === 'dir' ? 1 : 0;
}

/** Among covering grants a deny wins; else the most specific allow (kind, scope length, newest). */
export function selectGrant(grants: readonly Grant[], requestScope: string, platform: string = process.platform): Grant | undefined {
  let best: Grant | undefined;
  for (const grant of grants) {
    if (!grantCovers(grant, requestScope, platform)) continue;
    if (grant.decision === 'deny') return grant;
    if (best === undefined || compareAllow(grant, best) > 0) best = grant;
  }
  return best;
}

function compareAllow(a: Grant, b: Grant): number {
  const bySpec = specificity(a) - specificity(b);
  if (bySpec !== 0) return bySpec;
  const byLength = (a.scope ?? '').length - (b.scope ?? '').length;
  if (byLength !== 0) return byLength;
  return a.approvedAt < b.approvedAt ? -1 : a.approvedAt > b.approvedAt ? 1 : 0;
}
