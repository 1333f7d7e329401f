// SPDX-License-Identifier: MIT
// The DenyRead/AllowRead/DenyWrite/AllowWrite lists: resolved once, matched as
// subtrees after resolving the requested path's prefix outside each list root.
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, parse, relative, resolve, sep } from 'node:path';

import { expandHome, isWithin, normalizePrefixForRoot, tryRealpath, validateUnderRoot } from './paths.js';

/** Resolved, existing list entries. */
export interface PathLists {
  /** Paths that must not be read. */
  denyRead: string[];
  /**
   * denyRead entries that did not exist when the lists were built (absolute, `~` expanded): the
   * sandbox keeps them unreadable should they appear (a run's read tree leaves them out).
   */
  denyReadMissing?: string[];
  /** Carve-outs inside denyRead entries. */
  allowRead: string[];
  /** Paths that must not be written. */
  denyWrite: string[];
  /** Extra directories writes may go to (existing, never `/`). */
  allowWrite: string[];
}

/** The raw list fields of a policy. */
export interface PathListInput {
  /** Raw denyRead entries. */
  denyRead?: readonly string[] | undefined;
  /** Raw allowRead entries. */
  allowRead?: readonly string[] | undefined;
  /** Raw denyWrite entries. */
  denyWrite?: readonly string[] | undefined;
  /** Raw allowWrite entries. */
  allowWrite?: readonly string[] | undefined;
}

function resolveEntries(entries: readonly string[] | undefined, base: string, home: string, dirsOnly: boolean, missing?: string[]): string[] {
  const out: string[] = [];
  for (const entry of entries ?? []) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const expanded = expandHome(trimmed, home);
    const absolute = isAbsolute(expanded) ? expanded : resolve(base, expanded);
    const real = tryRealpath(absolute);
    if (real === undefined) {
      // Not a list entry (nothing to match a request against), but noted for the sandbox.
      if (missing !== undefined && !missing.includes(absolute)) missing.push(absolute);
      continue;
    }
    if (dirsOnly) {
      if (parse(real).root === real) continue;
      try {
        if (!statSync(real).isDirectory()) continue;
      } catch {
        continue;
      }
    }
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/** Builds the lists: `~` expanded, relative entries anchored at `base`, symlinks resolved, missing dropped. */
export function buildPathLists(input: PathListInput, base: string, home: string = homedir()): PathLists {
  const denyReadMissing: string[] = [];
  return {
    denyRead: resolveEntries(input.denyRead, base, home, false, denyReadMissing),
    denyReadMissing,
    allowRead: resolveEntries(input.allowRead, base, home, false),
    denyWrite: resolveEntries(input.denyWrite, base, home, false),
    allowWrite: resolveEntries(input.allowWrite, base, home, true),
  };
}

/** Whether any entry exists. */
export function pathListsActive(lists: PathLists): boolean {
  return lists.denyRead.length + lists.allowRead.length + lists.denyWrite.length + lists.allowWrite.length > 0;
}

function under(entry: string, abs: string): boolean {
  return isWithin(entry, normalizePrefixForRoot(abs, entry));
}

/** Denied when under a DenyRead entry and not under an AllowRead entry nested in that same entry. */
export function isReadDenied(lists: PathLists, abs: string): boolean {
  for (const deny of lists.denyRead) {
    if (!under(deny, abs)) continue;
    const carved = lists.allowRead.some((allow) => isWithin(deny, allow) && under(allow, abs));
    if (!carved) return true;
  }
  return false;
}

/** Denied when under a DenyWrite entry. */
export function isWriteDenied(lists: PathLists, abs: string): boolean {
  return lists.denyWrite.some((deny) => under(deny, abs));
}

/** Whether an absolute path validates (with symlink checks) under an AllowWrite root. */
export function allowWriteCovers(lists: PathLists, abs: string): boolean {
  return lists.allowWrite.some((root) => validateUnderRoot(root, abs).code === null);
}

/**
 * Whether a search should skip a directory: it is read-denied and no AllowRead carve-out lies
 * inside it (a denied directory with a re-included subtree must still be descended).
 */
export function isDirExcluded(lists: PathLists, absDir: string): boolean {
  if (!isReadDenied(lists, absDir)) return false;
  return !lists.allowRead.some((allow) => under(absDir, allow) || isWithin(normalizePrefixForRoot(absDir, allow), allow));
}

/** ripgrep `--glob !rel --glob !rel/**` pairs for DenyRead entries inside the workspace. */
export function buildReadExclusionGlobs(lists: PathLists, workspaceRoot: string): string[] {
  const globs: string[] = [];
  if (workspaceRoot === '') return globs;
  for (const deny of lists.denyRead) {
    if (deny === workspaceRoot || !isWithin(workspaceRoot, deny)) continue;
    const rel = relative(workspaceRoot, deny).split(sep).join('/');
    globs.push('--glob', `!${rel}`, '--glob', `!${rel}/**`);
  }
  return globs;
}
