// SPDX-License-Identifier: MIT
// Protected paths that do not exist when a command starts (.zero, .agents, or .git/hooks and
// .git/config of an existing repository) cannot be made read-only without creating something on
// the host. Instead they are noted before the run, and anything the command created there is
// removed (without following links) and reported when it ends, so nothing persists to run later.
import { lstatSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

import type { WritableRoot } from '../backend/types.js';
import { HostFacts } from '../host-facts.js';

/** Looked up afresh: this runs when the command has ended. */
function existsNow(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
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
