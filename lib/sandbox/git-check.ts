// SPDX-License-Identifier: MIT
// After a run, once every process of the sandbox is gone: what the command left that host git
// would run. Paths noted before the run (git-guard.ts) that it created or swapped are removed.
// Repositories that host git now enters without being asked and that were not there before (a
// `.git` at the write root or an ancestor inside a write root, a gitlink added to an index, a new
// submodule git dir or linked-worktree admin dir) are accepted as git itself writes them: config
// keys from a safe list only (git-config.ts), hooks directories holding only `*.sample` files,
// no commondir redirect, no `.git` file at the top. Anything else is removed and reported.
// Every look and removal goes through beneath.ts: no link followed, nothing thrown.
import { basename, dirname, join, resolve, sep } from 'node:path';

import { DirectorySet } from '../path-within.js';
import { fromBytes, inspect, inspectManyWatched, inspectPast, listDir, Lookahead, readSmall, removeEntry, replaceFile, scanRepositories, type EntryInfo, type EntryKind } from './beneath.js';
import { riskyConfigChange, riskyEntriesAdded, unsafeConfigKeys } from './git-config.js';
import { MAX_CONFIG_BYTES, MAX_GIT_DIRS, MAX_LISTED, MAX_SCANNED_DIRS, gitFileTarget, isGitDirLike, readPointer, type GitGuard } from './git-guard.js';
import { readGitlinks } from './git-index.js';
import { childOf, parentOf, ScannedRoots } from './scanned-roots.js';
import { NESTED_CONFIG_SCAN } from '../protected-names.js';

/** One thing a command left that would have made host git run code; it has been removed. */
export interface ProtectedPathViolation {
  path: string;
  reason: string;
  /** Set when this was done for an earlier run killed before its check: that run's write roots. */
  interruptedRun?: string[];
}

const MAX_NEW_DEPTH = 6;
/** Repositories looked at after a run, at most (before it, more than MAX_GIT_DIRS is refused). */
export const MAX_NEW_REPOS = MAX_GIT_DIRS * 4;
/** Entries of one worktrees/ or modules/ directory checked after a run, at most. */
const MAX_CHECKED = MAX_LISTED * 64;
const TOO_DEEP = `nested deeper than the after-run check follows (${MAX_NEW_DEPTH} levels)`;

/** New hooks are never kept, whoever wrote them (git's templates, husky, the command). */
const NEW_HOOKS = 'new git hooks are never kept, host git would run them; install hooks outside the sandbox (for husky: run `npx husky` or `npm install` on the host)';

class Checker {
  readonly violations: ProtectedPathViolation[] = [];
  /** The agent and editor config entries the scan after the run found (see NESTED_CONFIG_SCAN). */
  readonly named: string[] = [];
  readonly #checked = new Set<string>();

  /**
   * The paths a pass of the check asks about first, looked at in one batch; dropped as soon as the
   * check changes anything (see Lookahead).
   */
  ahead: Lookahead | undefined;

  /**
   * The write roots and the directories that had no .git, as sets (a thousand roots ask often),
   * made when first asked (a check that finds its watch set quiet asks about few paths).
   */
  #rootSet: DirectorySet | undefined;
  #noGitSet: ReadonlySet<string> | undefined;

  constructor(readonly guard: GitGuard) {}

  get #roots(): DirectorySet {
    return (this.#rootSet ??= new DirectorySet(this.guard.roots));
  }

  get #noGit(): ReadonlySet<string> {
    return (this.#noGitSet ??= new Set(this.guard.noGit));
  }

  /** Whether `path` is a write root or lies inside one. */
  inOrIsRoot(path: string): boolean {
    return this.#roots.holds(path);
  }

  #look(path: string): ReturnType<typeof inspect> {
    return this.ahead?.take(path) ?? inspect(path);
  }

  #inRoots(path: string): boolean {
    return this.#roots.holderAbove(path) !== undefined;
  }

  remove(path: string, reason: string): void {
    if (!this.#inRoots(path)) return;
    this.ahead?.drop();
    let removed = removeEntry(path);
    if (!removed) {
      // The walk stopped at a link on the way (host git would follow it): that link goes instead.
      const link = this.#linkOnPath(path);
      if (link !== undefined) {
        removed = removeEntry(link);
        if (removed) path = link;
      }
    }
    this.violations.push({ path: fromBytes(path), reason: removed ? reason : `${reason}; it could not be removed` });
  }

  /** A late check of a changed config: keep it (nothing was added), remove it, or put it back (undefined). */
  #late(before: string, now: string): 'keep' | 'remove' | undefined {
    const added = riskyEntriesAdded(before, now);
    if (added !== undefined && added.length === 0) return 'keep';
    const removed = riskyEntriesAdded(now, before);
    return removed === undefined || removed.length > 0 ? 'remove' : undefined;
  }

  /** The first symlink on `path` below its write root, if any. */
  #linkOnPath(path: string): string | undefined {
    const root = this.#roots.holderOf(path);
    if (root === undefined) return undefined;
    let prefix = root;
    for (const part of path.slice(root.length + 1).split(sep)) {
      prefix = join(prefix, part);
      const kind = inspect(prefix).kind;
      if (kind === 'link') return prefix;
      if (kind !== 'dir') return undefined;
    }
    return undefined;
  }

  /**
   * Paths watched because they were missing: one directly in a root of `unchanged` (root-tops.ts)
   * is missing still, without a look.
   */
  watched(unchanged: ReadonlySet<string> = new Set(), quiet = false): void {
    // Asked once per path (a thousand nested roots watch two names each).
    const ask: Array<[string, string]> = [];
    for (const entry of quiet ? contentWatched(this.guard.watched) : this.guard.watched) {
      const [path, before] = entry;
      if (unchanged.size > 0 && before.startsWith('missing:') && unchanged.has(parentOf(path))) continue;
      ask.push(entry);
    }
    this.ahead = new Lookahead(ask.map(([path]) => path));
    for (const [path, before] of ask) {
      const info = this.#look(path);
      if (info.kind === 'missing' || `${info.kind}:${info.stamp}` === before) continue;
      this.remove(path, this.#watchedReason(path, before.startsWith('missing:')));
    }
    this.ahead = undefined;
  }

  /** Indexes changed since before the run: their new gitlinks are repositories host git enters. */
  indexes(): void {
    for (const [worktree, stamp] of this.guard.indexStamps) {
      const gitDir = inspect(join(worktree, '.git')).kind === 'dir' ? join(worktree, '.git') : gitFileTarget(worktree);
      if (gitDir === undefined || inspect(join(gitDir, 'index')).stamp === stamp) continue;
      this.newGitlinks(worktree, gitDir, 0);
    }
  }

  /** Existing configs git writes: a change that could make host git run anything is undone. */
  configs(): void {
    for (const [path, before] of this.guard.configs) {
      const info = inspect(path);
      if (`${info.kind}:${info.stamp}` === before.state || (info.kind === 'missing' && before.bytes === undefined)) continue;
      const text = info.kind === 'file' ? readSmall(path, MAX_CONFIG_BYTES)?.toString('latin1') : undefined;
      const changed = text === undefined ? ['<not a readable regular file>'] : riskyConfigChange(before.bytes?.toString('latin1'), text);
      if (changed.length === 0) continue;
      // A killed run's check runs later: the user may have changed the config since. Only what was
      // added can be the command's, and what was taken out since must not be put back.
      const late = this.guard.missedCheck === true && text !== undefined && before.bytes !== undefined ? this.#late(before.bytes.toString('latin1'), text) : undefined;
      if (late === 'keep') continue;
      const keys = changed.slice(0, 8).map(fromBytes).join(', ');
      const why = `a git config change that could make host git run programs or read other files (${keys}); make that change outside the sandbox`;
      if (before.bytes === undefined) {
        this.remove(path, `${why}; the new config was removed`);
        continue;
      }
      if (late === 'remove') this.remove(path, `${why}; the config from before the killed run would put back program-running entries removed since, so it was removed`);
      else if (this.#inRoots(path) && replaceFile(path, before.bytes)) this.violations.push({ path: fromBytes(path), reason: `${why}; the config is as it was before the run` });
      else this.remove(path, `${why}; it could not be restored, so it was removed`);
    }
  }

  /**
   * Repositories the command created anywhere else in the workspace (a clone two levels down, a
   * bare one): host git runs their config and hooks as soon as someone works in them, so they are
   * held to what git itself writes too. A `.git` file leading into another git dir (a linked
   * worktree, a submodule) is that git dir's admin or module dir, checked with it.
   */
  elsewhere(): void {
    // A root nested in one already scanned was walked with it: each directory looked at once.
    const scanned = new ScannedRoots();
    for (const root of this.guard.scanRoots) {
      if (scanned.covers(root)) continue;
      const scan = scanRepositories(root, MAX_SCANNED_DIRS, MAX_NEW_REPOS, NESTED_CONFIG_SCAN);
      scanned.add(root, scan.gitDirs);
      this.named.push(...scan.named);
      for (const dir of scan.worktrees) {
        if (this.guard.worktrees.has(dir) || this.#noGit.has(dir)) continue;
        const target = inspect(join(dir, '.git')).kind === 'file' ? gitFileTarget(dir) : undefined;
        if (target !== undefined && dirname(target).split(sep).some((part) => part === 'worktrees' || part === 'modules')) continue;
        this.newWorktree(dir, false, 0);
      }
      for (const gitDir of scan.gitDirs) if (!this.guard.gitDirs.has(gitDir)) this.newGitDir(gitDir, 0);
      if (scan.incomplete) {
        this.violations.push({ path: fromBytes(root), reason: `more than ${MAX_NEW_REPOS} repositories, ${MAX_SCANNED_DIRS} directories or ${NESTED_CONFIG_SCAN.max} agent or editor config entries to look at after the run: those beyond them were not checked; keep fewer in the workspace` });
      }
    }
  }

  /** Why a watched path was removed, and what to do instead. */
  #watchedReason(path: string, created: boolean): string {
    const what = created ? 'created' : 'replaced';
    if (this.guard.hookPaths.has(path)) return `${NEW_HOOKS} (${what} a hooks directory)`;
    const name = basename(path);
    if (name === '.zero' || name === '.agents') return `${what} the agent's own configuration directory, which a sandboxed command may not write; create or change it outside the sandbox`;
    return `${what} a file or directory host git reads (config, hooks or a pointer to another git dir); make that change outside the sandbox`;
  }

  /** A worktree root that has a `.git` now and had none (or was not entered) before. */
  newWorktree(dir: string, top: boolean, depth: number, dotGit = join(dir, '.git')): void {
    const kind = this.#look(dotGit).kind;
    if (kind === 'missing') return;
    if (kind === 'error' && this.#linkOnPath(dotGit) === undefined) return; // unreadable for git too
    if (kind === 'dir') {
      this.newGitDir(dotGit, depth);
      this.newGitlinks(dir, dotGit, depth);
      return;
    }
    if (kind !== 'file' || top) {
      this.remove(dotGit, top ? 'a .git pointer file here would point host git at a git dir of the command\'s choosing' : 'not a git directory or .git file');
      return;
    }
    const target = gitFileTarget(dir);
    if (target === undefined) return; // not a pointer git follows
    if (this.#inRoots(target) && !this.guard.gitDirs.has(target)) this.newGitDir(target, depth);
  }

  newGitlinks(worktree: string, gitDir: string, depth: number): void {
    for (const link of readGitlinks(gitDir)) {
      const sub = join(worktree, link);
      if (this.guard.worktrees.has(sub) || !this.#inRoots(join(sub, '.git'))) continue;
      // Fail closed: a repository nested deeper than the check follows is not kept.
      if (depth + 1 > MAX_NEW_DEPTH) {
        if (inspect(join(sub, '.git')).kind !== 'missing') this.remove(join(sub, '.git'), TOO_DEEP);
        continue;
      }
      this.newWorktree(sub, false, depth + 1);
    }
  }

  /** Entries of a worktrees/ or modules/ directory; one too large to check is removed whole. */
  #entries(dir: string): Array<[string, EntryKind]> {
    const entries = listDir(dir, MAX_CHECKED + 1) ?? [];
    if (entries.length <= MAX_CHECKED) return entries;
    this.remove(dir, `more than ${MAX_CHECKED} entries to check`);
    return [];
  }

  /** A git dir that did not exist before the run (or was never guarded): as git itself writes one. */
  newGitDir(gitDir: string, depth: number): void {
    if (this.#checked.has(gitDir)) return;
    this.#checked.add(gitDir);
    if (depth > MAX_NEW_DEPTH) {
      this.remove(gitDir, TOO_DEEP);
      return;
    }
    const kind = inspect(gitDir).kind;
    if (kind === 'missing') return;
    if (kind !== 'dir') {
      this.remove(gitDir, 'a git dir reached through a link or not a directory');
      return;
    }
    this.config(join(gitDir, 'config'));
    this.config(join(gitDir, 'config.worktree'));
    this.hooks(join(gitDir, 'hooks'));
    if (inspect(join(gitDir, 'commondir')).kind !== 'missing') {
      this.remove(join(gitDir, 'commondir'), 'a commondir in a new repository points host git at another config and hooks');
    }
    this.adminDirs(gitDir);
    this.modules(join(gitDir, 'modules'), depth);
  }

  /** Linked-worktree admin dirs: commondir must lead back to this git dir; no config or hooks of their own. */
  adminDirs(gitDir: string): void {
    for (const [name, kind] of this.#entries(join(gitDir, 'worktrees'))) {
      const admin = join(gitDir, 'worktrees', name);
      if (this.guard.gitDirs.has(admin) || this.#checked.has(admin)) continue;
      this.#checked.add(admin);
      if (kind !== 'dir') continue;
      const common = readPointer(join(admin, 'commondir'));
      if (common === undefined || resolve(admin, common) !== gitDir) {
        this.remove(admin, 'a worktree admin dir whose commondir does not lead back to its repository');
        continue;
      }
      for (const own of ['config', 'hooks']) {
        if (inspect(join(admin, own)).kind !== 'missing') this.remove(join(admin, own), 'git never writes this in a worktree admin dir');
      }
      this.config(join(admin, 'config.worktree'));
    }
  }

  modules(dir: string, depth: number): void {
    if (depth > MAX_NEW_DEPTH) {
      if ((listDir(dir, 1) ?? []).length > 0) this.remove(dir, TOO_DEEP);
      return;
    }
    for (const [name, kind] of this.#entries(dir)) {
      if (kind !== 'dir') continue;
      const path = join(dir, name);
      if (isGitDirLike(path)) {
        if (!this.guard.gitDirs.has(path)) this.newGitDir(path, depth + 1);
      } else {
        this.modules(path, depth + 1);
      }
    }
  }

  config(path: string): void {
    const info = inspect(path);
    if (info.kind === 'missing') return;
    const text = info.kind === 'file' ? readSmall(path, MAX_CONFIG_BYTES)?.toString('latin1') : undefined;
    if (text === undefined) {
      this.remove(path, 'a git config that is not a readable regular file');
      return;
    }
    const unsafe = unsafeConfigKeys(text);
    if (unsafe.length > 0) this.remove(path, `a git config with keys that run programs or redirect git: ${[...new Set(unsafe)].slice(0, 8).map(fromBytes).join(', ')}`);
  }

  /** New hooks are never kept: only git's own `*.sample` files may stay. */
  hooks(path: string): void {
    const info = inspect(path);
    if (info.kind === 'missing') return;
    const entries = info.kind === 'dir' ? listDir(path, MAX_LISTED + 1) : undefined;
    if (entries === undefined || entries.length > MAX_LISTED) {
      this.remove(path, 'a hooks directory host git would run from');
      return;
    }
    for (const [name, kind] of entries) {
      if (kind === 'file' && name.endsWith('.sample')) continue;
      this.remove(join(path, name), NEW_HOOKS);
    }
  }
}

/** Watched paths whose state a directory event does not show (an existing file's stamp moves with its content): per map, once. */
const contentOnly = new WeakMap<ReadonlyMap<string, string>, Array<[string, string]>>();

function contentWatched(watched: ReadonlyMap<string, string>): Array<[string, string]> {
  let out = contentOnly.get(watched);
  if (out === undefined) {
    out = [...watched].filter(([, state]) => !state.startsWith('missing:') && !state.startsWith('link:') && !state.startsWith('dir:'));
    contentOnly.set(watched, out);
  }
  return out;
}

/**
 * Checks and cleans up after a run: call only once every process of the sandbox is gone (a live
 * one could change what was checked). Returns what was removed, with the reason; the agent and
 * editor config entries its scan found are added to `named` (for checkToolConfigs). `unchanged`:
 * the settled roots whose stamp is as before the run (see GitGuard.settled); `known`: paths the
 * caller looked at after the run, taken while this check has changed nothing; `quiet`: no
 * directory the look before the run looked in changed since (protected.ts). Never throws.
 */
export function checkGitAfterRun(guard: GitGuard, named?: string[], unchanged: ReadonlySet<string> = new Set(), known: ReadonlyMap<string, EntryInfo> = new Map(), quiet = false): ProtectedPathViolation[] {
  const c = new Checker(guard);
  try {
    c.watched(unchanged, quiet);
    c.configs();
    if (quiet) {
      // No directory the look before the run looked in changed (protected.ts): no .git was made
      // where there was none, no worktree admin or module dir was added. Indexes (content) and
      // the rest of the workspace are looked at as always.
      c.indexes();
      c.elsewhere();
      named?.push(...c.named);
      return c.violations;
    }
    // A directory in noGit had no .git before the run; one at the top of an unchanged root has none now.
    const noGit = guard.noGit.filter((dir) => !unchanged.has(dir));
    // What the caller looked at once the sandbox was gone holds while this check changed nothing.
    const past = c.violations.length === 0 ? known : new Map<string, EntryInfo>();
    const dotGits = noGit.map((dir) => childOf(dir, '.git'));
    c.ahead = new Lookahead(dotGits, (paths) => inspectPast(past, paths, inspectManyWatched));
    noGit.forEach((dir, i) => c.newWorktree(dir, true, 0, dotGits[i]));
    c.ahead = undefined;
    c.indexes();
    for (const gitDir of guard.gitDirs) {
      if (!c.inOrIsRoot(gitDir)) continue;
      c.adminDirs(gitDir);
      c.modules(join(gitDir, 'modules'), 0);
    }
    c.elsewhere();
  } catch (error) {
    c.violations.push({ path: '', reason: `the protected-path check failed: ${error instanceof Error ? error.message : String(error)}` });
  }
  named?.push(...c.named);
  return c.violations;
}
