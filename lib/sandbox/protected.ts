// SPDX-License-Identifier: MIT
// Protected paths that do not exist when a command starts (.zero, .agents, or .git/hooks and
// .git/config of an existing repository) cannot be made read-only without creating something on
// the host. Instead they are noted before the run, and anything the command created there is
// removed (without following links) and reported when it ends, so nothing persists to run later.
import { lstatSync, readlinkSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import type { WritableRoot } from '../backend/types.js';
import { HostFacts } from '../host-facts.js';

/** Looked up afresh: this runs when the command has ended. */
function existsNow(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}

/** How many links of a chain are followed to find where a dangling protected link points. */
const MAX_LINK_HOPS = 8;

/**
 * Where a dangling symlink at a protected path (planted on the host, e.g. by a checkout) points:
 * the missing path a command could create to fill `.zero` through the link. Undefined when `path`
 * is not a dangling link.
 */
function danglingTarget(path: string, facts: HostFacts): string | undefined {
  let current = path;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    let st;
    try {
      st = facts.lstat(current);
    } catch {
      return undefined;
    }
    if (st === undefined) return current === path ? undefined : current;
    if (!st.isSymbolicLink()) return undefined; // it resolves: the spec makes it read-only
    try {
      current = resolve(dirname(current), readlinkSync(current));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The protected paths that are absent now and would matter if created. `facts` are this call's,
 * shared with the plan and the spec (see host-facts.ts); by default every path is looked up afresh.
 */
export function missingProtectedPaths(roots: readonly WritableRoot[], facts: HostFacts = new HostFacts()): string[] {
  const out: string[] = [];
  const exists = (path: string) => facts.lstat(path) !== undefined;
  for (const root of roots) {
    for (const name of root.protectedNames) {
      const path = join(root.root, name);
      if (!exists(path)) out.push(path);
      else {
        // A dangling link there: what the command creates where it points becomes .zero/.agents.
        const target = danglingTarget(path, facts);
        if (target !== undefined) out.push(target);
      }
    }
    // A repository the command creates itself is its own; only git dirs that exist are guarded.
    const gitDirs = new Set<string>();
    for (const sub of root.readOnlySubpaths) {
      if (!/\/(hooks|config)$/.test(sub)) continue;
      const dir = dirname(sub);
      if (!facts.lstat(dir)?.isDirectory()) continue;
      gitDirs.add(dir);
      if (!exists(sub)) out.push(sub);
    }
    // A planted commondir would point git at a config and hooks dir of the command's choosing.
    for (const dir of gitDirs) {
      const commondir = join(dir, 'commondir');
      if (!exists(commondir)) out.push(commondir);
    }
  }
  return out;
}

/** Removes whichever of `paths` now exist; returns those it removed. */
export function removeCreatedProtectedPaths(paths: readonly string[]): string[] {
  const removed: string[] = [];
  for (const path of paths) {
    if (!existsNow(path)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}
