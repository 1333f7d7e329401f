// SPDX-License-Identifier: MIT
// Path primitives: containment, home expansion, root-aware symlink normalization and single-root
// validation with symlink-traversal detection.
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';

import { childOf, cleanJoin, isWithin, normalized } from '../../path-within.js';

/** Outcome of validating one path against one root. */
export interface PathCheck {
  /** null when the path is inside the root. */
  code: 'outside_workspace' | 'symlink_traversal' | null;
  reason: string;
}

const OK: PathCheck = { code: null, reason: '' };

// Within one evaluation the same prefixes are looked up many times (every root, the classifier's
// write-scope check, the engine's path check); a memo scoped to that one call answers repeats.
// Outside withFsMemo nothing is cached, so later calls always see the filesystem as it is.
let statMemo: Map<string, Stats | NodeJS.ErrnoException | typeof MISSING_STAT> | undefined;
const MISSING_STAT = Object.freeze({ missing: true });
let realMemo: Map<string, string | undefined> | undefined;

/** Runs `fn` with lstat/realpath results memoized for its duration only. */
export function withFsMemo<T>(fn: () => T): T {
  if (statMemo !== undefined) return fn();
  statMemo = new Map();
  realMemo = new Map();
  try {
    return fn();
  } finally {
    statMemo = undefined;
    realMemo = undefined;
  }
}

const MISSING = Symbol('missing');

/** lstat that returns MISSING for ENOENT/ENOTDIR instead of throwing (exceptions are slow). */
function lstatMemo(path: string): Stats | typeof MISSING {
  const hit = statMemo?.get(path);
  if (hit !== undefined) {
    if (hit === MISSING_STAT) return MISSING;
    if (hit instanceof Error) throw hit;
    return hit as Stats;
  }
  let stat: Stats | undefined;
  try {
    stat = lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTDIR') {
      statMemo?.set(path, error as NodeJS.ErrnoException);
      throw error;
    }
  }
  const result = stat ?? MISSING;
  if (result !== MISSING) statMemo?.set(path, result);
  else statMemo?.set(path, MISSING_STAT);
  return result;
}

export { isWithin };

/** Expands a leading `~` or `~/` to the home directory. */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/** realpath, or undefined when it cannot be resolved. */
export function tryRealpath(path: string): string | undefined {
  if (realMemo?.has(path)) return realMemo.get(path);
  let real: string | undefined;
  try {
    real = realpathSync.native(path);
  } catch {
    real = undefined;
  }
  realMemo?.set(path, real);
  return real;
}

/** realpath when possible, else the absolute clean path. */
export function resolveBestEffort(path: string): string {
  const abs = resolve(path);
  return tryRealpath(abs) ?? abs;
}

// The walks below build a path per component onto a clean absolute one (the root, a realpath
// target, or one built so): childOf by concatenation on POSIX, join elsewhere.
const POSIX = sep === '/';

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
    const next = childOf(current, parts[i] as string, POSIX);
    let isLink = false;
    try {
      const stat = lstatMemo(next);
      if (stat === MISSING) return join(next, ...parts.slice(i + 1));
      isLink = stat.isSymbolicLink();
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
  const abs = normalizePrefixForRoot(isAbsolute(path) ? normalized(path) : (cleanJoin(root, path) ?? join(root, path)), root);
  // Both are absolute and normalized, so containment is a prefix test (cheaper than relative()).
  if (!isWithin(root, abs)) return { code: 'outside_workspace', reason: `${path} is outside the workspace` };
  let rel = abs.slice(root.endsWith(sep) ? root.length : root.length + 1);
  if (rel.endsWith(sep)) rel = rel.slice(0, -1);
  if (rel === '') return OK;
  let current = root;
  for (const segment of rel.split(sep)) {
    current = childOf(current, segment, POSIX);
    let stat;
    try {
      stat = lstatMemo(current);
    } catch (error) {
      return { code: 'outside_workspace', reason: `${path}: ${(error as Error).message}` };
    }
    if (stat === MISSING) return OK;
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
