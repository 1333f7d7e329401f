// SPDX-License-Identifier: MIT
// request_permissions overlays: normalizing a requested profile, widening file
// paths to directory roots, and the turn/session overlays that widen the effective policy.
import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

import { SandboxError } from '../../errors.js';
import { tryRealpath } from '../paths/paths.js';
import type { RequestPermissionProfile } from '../schema.js';
import { normalizeExtraRoot } from '../paths/scope.js';

/** A normalized request: absolute, de-duplicated paths. */
export interface NormalizedPermissions {
  /** Shell network access requested. */
  network: boolean;
  /** Paths (or, once widened, directories) to read. */
  read: string[];
  /** Paths (or, once widened, directories) to write. */
  write: string[];
  /** Paths to deny reading. */
  denyRead: string[];
}

/** One applied overlay. */
export interface PermissionOverlay {
  /** Widens the network to allow. */
  network: boolean;
  /** Added to policy.allowRead. */
  allowRead: string[];
  /** Added to policy.allowWrite. */
  allowWrite: string[];
  /** Added to policy.denyRead. */
  denyRead: string[];
}

function entryPath(path: unknown): string | undefined {
  if (typeof path === 'string') return path;
  if (typeof path === 'object' && path !== null) {
    const record = path as Record<string, unknown>;
    const kind = record.kind ?? record.type;
    if (kind !== undefined && kind !== 'path') return undefined;
    return typeof record.path === 'string' ? record.path : undefined;
  }
  return undefined;
}

/** Normalizes a requested profile against `base`; throws invalid_argument when it asks for nothing. */
export function normalizeRequestPermissions(profile: RequestPermissionProfile, base: string): NormalizedPermissions {
  const out: NormalizedPermissions = { network: profile.network?.enabled === true, read: [], write: [], denyRead: [] };
  const add = (list: string[], raw: string | undefined) => {
    const trimmed = raw?.trim() ?? '';
    if (trimmed === '') return;
    const abs = isAbsolute(trimmed) ? resolve(trimmed) : resolve(base === '' ? process.cwd() : base, trimmed);
    const real = tryRealpath(abs) ?? abs;
    if (!list.includes(real)) list.push(real);
  };
  // Policy files written for the Go Zero CLI spell these file_system/deny_read, so that spelling is
  // read; the camelCase spelling is accepted too.
  const fs = profile.file_system ?? profile.fileSystem;
  for (const p of fs?.read ?? []) add(out.read, p);
  for (const p of fs?.write ?? []) add(out.write, p);
  for (const p of fs?.deny_read ?? fs?.denyRead ?? []) add(out.denyRead, p);
  for (const entry of fs?.entries ?? []) {
    const path = entryPath(entry.path);
    if (path === undefined) continue;
    if (entry.access === 'read') add(out.read, path);
    else if (entry.access === 'write') add(out.write, path);
    else add(out.denyRead, path);
  }
  if (!out.network && out.read.length + out.write.length + out.denyRead.length === 0) {
    throw new SandboxError('invalid_argument', 'request_permissions requires at least one permission');
  }
  return out;
}

/** The root a path is granted at: itself when it is an existing directory, else its parent. */
export function widenToRoot(path: string): string {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    isDir = false;
  }
  return normalizeExtraRoot(isDir ? path : dirname(path), 'requested path root');
}

/** Widens read/write paths to existing, non-root directories; deny_read passes through. */
export function buildGrantProfile(normalized: NormalizedPermissions): NormalizedPermissions {
  const widen = (list: string[]) => [...new Set(list.map(widenToRoot))];
  return { network: normalized.network, read: widen(normalized.read), write: widen(normalized.write), denyRead: [...normalized.denyRead] };
}

/** Base policy plus every session overlay, then every turn overlay (network → allow, list unions). */
export function buildOverlaidLists<T extends { network: 'allow' | 'deny'; allowRead?: string[] | undefined; allowWrite?: string[] | undefined; denyRead?: string[] | undefined }>(
  base: T,
  overlays: Iterable<PermissionOverlay>,
): T {
  const out = { ...base };
  for (const overlay of overlays) {
    if (overlay.network) out.network = 'allow';
    if (overlay.allowRead.length > 0) out.allowRead = union(out.allowRead, overlay.allowRead);
    if (overlay.allowWrite.length > 0) out.allowWrite = union(out.allowWrite, overlay.allowWrite);
    if (overlay.denyRead.length > 0) out.denyRead = union(out.denyRead, overlay.denyRead);
  }
  return out;
}

function union(a: string[] | undefined, b: string[]): string[] {
  return [...new Set([...(a ?? []), ...b])];
}
