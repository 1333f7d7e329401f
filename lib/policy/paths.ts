// SPDX-License-Identifier: MIT
// Path primitives: containment, home expansion, root-aware symlink normalization and single-root
// validation with symlink-traversal detection (reference §5.2).
import { lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';

/** Outcome of validating one path against one root. */
export interface PathCheck {
  /** null when the path is inside the root. */
  code: 'outside_workspace' | 'symlink_traversal' | null;
  reason: string;
}

const OK: PathCheck = { code: null, reason: '' };

/** True when `child` equals `parent` or lies beneath it (both absolute and clean). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  const base = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(base);
}

/** Expands a leading `~` or `~/` to the home directory. */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/** realpath, or undefined when it cannot be resolved. */
export function tryRealpath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** realpath when possible, else the absolute clean path. */
export function resolveBestEffort(path: string): string {
  const abs = resolve(path);
  return tryRealpath(abs) ?? abs;
}

/**
 * Resolves symlinks in the part of `abs` that lies outside `root` (macOS `/var` → `/private/var`,
 * an aliased workspace) and keeps the in-root components verbatim, so in-root symlinks are still
 * seen by the traversal walk. `root` must be realpath-resolved.
 */
export function normalizePrefixForRoot(abs: string, root: string): string {
  if (isWithin(root, abs)) return abs;
  const parts = abs.split(sep).filter((part) => part !== '');
  let current: string = sep;
  for (let i = 0; i < parts.length; i++) {
    if (isWithin(root, current)) return join(current, ...parts.slice(i));
    const next = join(current, parts[i] as string);
    let isLink = false;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      return join(next, ...parts.slice(i + 1));
    }
    if (isLink) {
      const target = tryRealpath(next);
      if (target === undefined) return join(next, ...parts.slice(i + 1));
      current = target;
    } else {
      current = next;
    }
  }
  return current;
}

/**
 * Validates `path` against one root: relative paths are joined to the root; a lexical escape is
 * `outside_workspace`; every existing in-root symlink is resolved and must stay inside the root,
 * else `symlink_traversal`. Missing tails are allowed. `root` must be realpath-resolved.
 */
export function validateUnderRoot(root: string, path: string): PathCheck {
  const abs = normalizePrefixForRoot(isAbsolute(path) ? normalize(path) : join(root, path), root);
  const rel = relative(root, abs);
  if (rel === '') return OK;
  if (rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel)) {
    return { code: 'outside_workspace', reason: `${path} is outside the workspace` };
  }
  let current = root;
  for (const segment of rel.split(sep)) {
    current = join(current, segment);
    let stat;
    try {
      stat = lstatSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return OK;
      return { code: 'outside_workspace', reason: `${path}: ${(error as Error).message}` };
    }
    if (!stat.isSymbolicLink()) continue;
    const target = tryRealpath(current);
    if (target === undefined) {
      return { code: 'symlink_traversal', reason: `${path} must not traverse symlink ${segment} (its target cannot be resolved)` };
    }
    if (!isWithin(root, target)) {
      return { code: 'symlink_traversal', reason: `${path} must not traverse symlink ${segment}` };
    }
    current = target;
  }
  return OK;
}

/** A path cleaned the way grant scopes are: `.` means "no path". */
export function cleanRelative(path: string): string {
  const cleaned = normalize(path);
  return cleaned === '.' + sep ? '.' : cleaned.endsWith(sep) && cleaned.length > 1 ? cleaned.slice(0, -1) : cleaned;
}
