// SPDX-License-Identifier: MIT
// The look at a run's write roots before it starts, for its protected-path notes: the repositories
// host git would run code from (git-guard.ts), the agent and editor configs, the stamps of roots
// nested in another; kept across runs while nothing it rests on changed (guard-memo.ts). And the
// plan's write roots with the read-only paths that look found added (protected.ts notes the rest).
import { dirname, join } from 'node:path';

import type { SandboxPlan, WritableRoot } from '../backend/types.js';
import { DirectorySet } from '../path-within.js';
import { SandboxError } from '../errors.js';
import { inspectManyWatched, Lookahead, toBytes, type EntryInfo } from './beneath.js';
import { discoverGit, type GitGuard } from './git-guard.js';
import { childOf, cleanPosix, parentOf } from './scanned-roots.js';
import { noteToolConfigsFound, type ToolConfigGuard } from './tool-configs.js';
import { toolConfigPathFilter } from './tool-config-paths.js';
import { lookKept, type QuietSince } from './guard-memo.js';
import { TopLooks } from './root-tops.js';

/** The `.git` in the parent of a root (the repository look asks it next). */
export function besideGit(root: string): string {
  const clean = cleanPosix(root);
  return childOf(parentOf(root, clean), '.git', clean);
}

/**
 * What is at each of `roots` (byte strings) that lies inside another of them, and the `.git`
 * beside each (in its parent, which the repository look asks next), in one batch: a walk per
 * parent directory.
 */
function nestedRootStamps(roots: readonly string[]): { stamps: Map<string, EntryInfo>; beside: Map<string, EntryInfo> } {
  // A root inside another: one of its ancestors is a root (asked through the set, per level).
  const all = new DirectorySet(roots);
  const nested = roots.filter((root) => all.holderAbove(root) !== undefined);
  const beside = [...new Set(nested.map(besideGit))];
  const found = inspectManyWatched([...nested, ...beside]);
  return {
    stamps: new Map(nested.map((root, i) => [root, found[i] as EntryInfo])),
    beside: new Map(beside.map((path, i) => [path, found[nested.length + i] as EntryInfo])),
  };
}

/**
 * What the look before the run found, for the rest of the notes (noteRest): the repositories'
 * guard, the nested roots' stamps and the agent and editor configs (before the notes of this
 * process's runs in flight are taken over them). Kept across runs (guard-memo.ts): never changed
 * once made. `quiet`: the watch set that shows whether anything it depends on changed since.
 */
export interface Scanned {
  git: GitGuard;
  stamps: Map<string, EntryInfo>;
  tools: ToolConfigGuard;
  quiet?: QuietSince;
}

/** The look before a run, kept across runs for the same write roots while nothing it depends on changed (guard-memo.ts). */
export function scanNoted(plan: SandboxPlan, user: WritableRoot[]): Scanned {
  const look = (): Scanned => {
    const { git, stamps } = scanRepositoriesNoted(plan, user);
    return { git, stamps, tools: noteToolConfigsFound(user.map((w) => w.root), git.named, git.namesCovered, stamps) };
  };
  // process.platform: only Linux has the watch sets the kept look rests on.
  if (process.platform !== 'linux') return look();
  // A look that was refused (truncated) is made again by every run.
  const { value, quiet } = lookKept({ writeRoots: plan.writeRoots, user }, look, (v) => !v.git.truncated);
  if (value.git.truncated) quiet?.release();
  return quiet === undefined ? value : { ...value, quiet };
}

function scanRepositoriesNoted(plan: SandboxPlan, user: WritableRoot[]): { git: GitGuard; stamps: Map<string, EntryInfo> } {
  // A git dir the command creates itself is checked as new after the run (git init must work):
  // only paths whose directory exists now are watched as they are.
  // The agent and editor configs have a check of their own (tool-configs.ts), with its reasons.
  const notToolPaths = toolConfigPathFilter(user.map((w) => w.root));
  const gitPaths = user.map((w) => notToolPaths(w.root, w.readOnlySubpaths));
  // The stamps of the roots nested in another, taken before the scan (see noteToolConfigs) and
  // before any look at their top (see root-tops.ts).
  const { stamps, beside } = process.platform === 'linux' ? nestedRootStamps(user.map((w) => toBytes(w.root))) : { stamps: new Map<string, EntryInfo>(), beside: undefined };
  const tops = new TopLooks(stamps, beside);
  // Each directory looked at once (a root's .git/hooks and .git/config share theirs), all of them
  // in one batch (a walk per root rather than per directory).
  const ahead = new Lookahead(gitPaths.flatMap((paths) => paths.map((path) => toBytes(dirname(path)))), (paths) => tops.inspect(paths));
  const kinds = new Map<string, string>();
  const isDir = (dir: string) => {
    let kind = kinds.get(dir);
    if (kind === undefined) kinds.set(dir, (kind = ahead.take(toBytes(dir)).kind));
    return kind === 'dir';
  };
  const named: string[] = [];
  user.forEach((w, i) => {
    const clean = cleanPosix(w.root);
    for (const name of w.protectedNames) named.push(childOf(w.root, name, clean));
    for (const path of gitPaths[i] as string[]) if (isDir(dirname(path))) named.push(path);
  });
  const git = discoverGit(user.map((w) => w.root), plan.writeRoots.map((w) => w.root), process.env, named, tops);
  // Fail closed: a repository, hooks directory or config left unlooked-at would be unguarded.
  if (git.truncated) {
    throw new SandboxError('protected_path', `refusing to run: the git protections could not look at everything host git could run from (${git.truncatedAt ?? 'a limit was reached'}); run in a workspace with fewer repositories, or move the extra ones out of it`, { layer: 'git-guard', ...(git.truncatedAt ? { path: git.truncatedAt.replace(/: .*$/, '') } : {}) });
  }
  return { git, stamps };
}

/** guardedRoots' answers by the plan's write roots, while its look and the tool configs' read-only paths are the same objects (a kept look). */
const guardedRootsMade = new WeakMap<readonly WritableRoot[], { git: GitGuard; toolsReadOnly: readonly string[]; writeRoots: WritableRoot[] }>();

/** The plan's write roots with the read-only paths the look found added, and the configs git writes left writable. */
export function guardedRoots(planRoots: readonly WritableRoot[], git: GitGuard, toolsReadOnly: readonly string[]): WritableRoot[] {
  const made = guardedRootsMade.get(planRoots);
  if (made !== undefined && made.git === git && made.toolsReadOnly === toolsReadOnly) return made.writeRoots;
  // Each path goes to the innermost write root holding it (the mount plan pins from there): its
  // ancestors asked against the roots, whatever their number.
  const holders = git.readOnly.length + toolsReadOnly.length === 0 ? undefined : new DirectorySet(planRoots.map((w) => w.root));
  const extra = new Map<string, string[]>();
  for (const paths of holders === undefined ? [] : [git.readOnly, toolsReadOnly]) {
    for (const path of paths) {
      const owner = holders?.holderOf(path);
      if (owner === undefined) continue;
      const theirs = extra.get(owner);
      if (theirs === undefined) extra.set(owner, [path]);
      else theirs.push(path);
    }
  }
  const writeRoots = planRoots.map((w) => {
    const theirs = extra.get(w.root);
    let more: string[] = [];
    if (theirs !== undefined) {
      const named = new Set([...w.readOnlySubpaths, ...w.protectedNames.map((name) => join(w.root, name))]);
      more = theirs.filter((path) => !named.has(path));
    }
    // Configs git writes are compared after the run instead (git-guard.ts): writable during it.
    const kept = git.configs.size === 0 ? w.readOnlySubpaths : w.readOnlySubpaths.filter((path) => !git.configs.has(toBytes(path)));
    return more.length === 0 && kept.length === w.readOnlySubpaths.length ? w : Object.freeze({ ...w, readOnlySubpaths: Object.freeze([...kept, ...more]) as string[] });
  });
  // Frozen: handed out again while the look is kept, the same list of the same roots, which the
  // spec memo then compares by identity (spec-memo.ts).
  Object.freeze(writeRoots);
  guardedRootsMade.set(planRoots, { git, toolsReadOnly, writeRoots });
  return writeRoots;
}
