// SPDX-License-Identifier: MIT
// Before a run: every file through which host git could be made to run code later, for the
// repositories a write root is, belongs to or contains. Existing ones become read-only mounts;
// missing ones (and links) are noted with their state, so that what the command creates or swaps
// there is removed after the run (git-check.ts). Nothing is created on the host.
//
// Covered, for each repository host git enters without being asked (the write root's own, the one
// it lies in, and every populated gitlink of their indexes, recursively): its git dir's config,
// config.worktree, hooks, commondir and objects/info/alternates, the same in its common dir, every
// submodule git dir under modules/ and every linked-worktree admin dir under worktrees/
// (commondir, gitdir, config, config.worktree, hooks), the `.git` file of a linked checkout, and
// what these configs (and the user's global and system config) point into a write root:
// core.hooksPath targets (husky's `.husky/_` with `.husky`), include.path / includeIf files, and
// scripts named by keys that run programs (core.fsmonitor, diff.external, filter drivers, ...).
// Cost is bounded: small files and a few directory listings, plus one pass over each index.
import { readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

import { isWithin } from '../path-within.js';
import { fromBytes, inspect, listDir, Lookahead, readSmall, scanRepositories, toBytes, type EntryKind } from './beneath.js';
import { parseGitConfig, type ConfigEntry } from './git-config.js';
import { readOutsideConfig } from './outside-config.js';
import { noteOutside, recording } from './look-record.js';
import { readGitlinks } from './git-index.js';
import { childOf, cleanPosix, parentOf, ScannedRoots } from './scanned-roots.js';
import { NESTED_CONFIG_SCAN } from '../protected-names.js';
import type { TopLooks } from './root-tops.js';

/** Git dirs (each with its worktrees, modules and gitlinks) looked at per run, at most. */
export const MAX_GIT_DIRS = 256;
/** Directories of a workspace walked to find the repositories it holds, at most. */
export const MAX_SCANNED_DIRS = 2_000_000;
/** Entries of a worktrees/ or modules/ directory looked at, at most. */
export const MAX_LISTED = 1024;
/** Largest config or pointer file read (git's own are a few KB). */
export const MAX_CONFIG_BYTES = 1 << 20;
const MAX_INCLUDE_DEPTH = 8;
const MAX_MODULE_DEPTH = 6;

/** Names inside a git dir that decide what it runs or where it reads its config. */
export const GIT_DIR_GUARDED = ['config', 'config.worktree', 'hooks', 'commondir', 'objects/info/alternates'];
/** The same for a linked worktree's admin dir, which git in that worktree (maybe outside) uses. */
export const ADMIN_DIR_GUARDED = ['commondir', 'gitdir', 'config', 'config.worktree', 'hooks'];

/** What was found before the run; paths are byte strings (see beneath.ts). */
export interface GitGuard {
  /** Existing paths inside write roots to mount read-only (plan paths, UTF-8). */
  readOnly: string[];
  /** Paths inside write roots that were missing or links: their state (kind:stamp) before the run. */
  watched: Map<string, string>;
  /**
   * Configs git itself writes (`config`, `config.worktree`) of repositories that exist: writable
   * during the run (`git remote add`, `git branch -u` work), compared after it with their content
   * before (undefined when missing) and restored when a change could make host git run anything.
   */
  configs: Map<string, { bytes: Buffer | undefined; state: string }>;
  /** Which guarded paths are hooks directories (for the reason given when one is removed). */
  hookPaths: Set<string>;
  /** Write roots (all of them), byte strings. */
  roots: string[];
  /** Git dirs and worktrees guarded before the run. */
  gitDirs: Set<string>;
  worktrees: Set<string>;
  /** Index stamp per guarded worktree: an unchanged index has no new gitlinks. */
  indexStamps: Map<string, string>;
  /** The roots scanned for repositories (the workspace and extra write roots, outer ones first), byte strings. */
  scanRoots: string[];
  /** Directories whose `.git` was absent: one created there is a new repository host git enters. */
  noGit: string[];
  /**
   * Scan roots the scan of an outer one walked, with the agent and editor config entries of their
   * top reported by it (no `.git`, git dir or skipped directory such as node_modules between them).
   */
  namesCovered?: string[];
  /**
   * Nested write roots (byte strings) whose stamp before the run was settled, with that stamp: at
   * the top of one still so stamped after the run, a name missing before is missing (root-tops.ts).
   */
  settled?: Array<[string, string]>;
  /** Set when the check runs for a run whose process was killed (missed-checks.ts): its notes may be old. */
  missedCheck?: boolean;
  /** Agent and editor config entries the scan found below the top of the write roots and in workspace files (see NESTED_CONFIG_SCAN). */
  named: string[];
  /** Set when a limit was reached or the look failed: something may be unguarded, so the run is refused. */
  truncated: boolean;
  /** The first place a limit was reached (for the refusal). */
  truncatedAt?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** A config file's entries (byte strings), or undefined. Inside write roots: no link followed. */
function readConfig(path: string, roots: readonly string[], memo?: Map<string, ConfigEntry[] | undefined>): ConfigEntry[] | undefined {
  if (memo?.has(path)) return memo.get(path);
  const entries = readConfigOnce(path, roots);
  memo?.set(path, entries);
  return entries;
}

function readConfigOnce(path: string, roots: readonly string[]): ConfigEntry[] | undefined {
  if (!roots.some((root) => isWithin(root, path))) {
    if (!recording()) return readOutsideConfig(path);
    // For the guard's memo (guard-memo.ts): the file as found before and after the read.
    const before = outsideState(path);
    const entries = readOutsideConfig(path);
    noteOutside(path, before);
    noteOutside(path, outsideState(path));
    return entries;
  }
  const text = readSmall(path, MAX_CONFIG_BYTES)?.toString('latin1');
  return text === undefined ? undefined : parseGitConfig(text);
}


/** How long after its last change a file outside the write roots is not trusted to show a further change. */
const OUTSIDE_RACY_NS = 2_000_000_000n;

/**
 * A file outside every write root as a pass of the guard found it (guard-memo.ts compares it on
 * a later run): its stamp (dev, inode, size, mtime, ctime) and where its links lead, `none` when
 * it is missing; undefined when it changed less than OUTSIDE_RACY_NS ago (a later change could
 * land on the same clock tick and keep the stamp) or cannot be looked at. Only the host writes there.
 */
export function outsideState(path: string): string | undefined {
  try {
    const name = Buffer.from(path, 'latin1');
    const st = statSync(name, { bigint: true, throwIfNoEntry: false });
    if (st === undefined) return 'none';
    const settled = BigInt(Date.now()) * 1_000_000n - OUTSIDE_RACY_NS;
    if (st.mtimeNs >= settled || st.ctimeNs >= settled) return undefined;
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}>${realpathSync(name, { encoding: 'buffer' }).toString('latin1')}`;
  } catch {
    return undefined;
  }
}

/** First line of a small pointer file (commondir, gitdir, a `.git` file), trimmed. */
export function readPointer(path: string): string | undefined {
  const text = readSmall(path, 4096)?.toString('latin1');
  if (text === undefined) return undefined;
  const line = text.split('\n')[0]?.replace(/\r$/, '').trim();
  return line === undefined || line === '' ? undefined : line;
}

/** The git dir a `.git` file names (`gitdir: <path>`, relative to the file's directory). */
export function gitFileTarget(worktree: string): string | undefined {
  const line = readPointer(join(worktree, '.git'));
  const match = line === undefined ? null : /^gitdir: ?(.+)$/.exec(line);
  return match === null ? undefined : resolve(worktree, match[1] as string);
}

/** `~/x` and relative paths as git resolves them for a config value. */
function expandPath(value: string, base: string, home: string): string {
  if (value === '~' || value.startsWith('~/')) return join(home, value.slice(1));
  return resolve(base, value);
}

/** Keys whose value is a program git runs; the program's own path matters when it is a file. */
const COMMAND_KEY = /^(core\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor|diff\.external|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper|gpg(\..+)?\.program|pager\..+|alias\..+|interactive\.difffilter|remote\..+\.(uploadpack|receivepack)|uploadpack\.packobjectshook|core\.hookspath)$/;

class Discovery {
  readonly guard: GitGuard;
  readonly #home: string;
  /** core.hooksPath and command paths from the global config, relative ones resolved per worktree. */
  readonly #globalRelative: string[] = [];
  /** Each config file is read once per discovery. */
  readonly #configs = new Map<string, ConfigEntry[] | undefined>();

  constructor(roots: readonly string[], env: Env) {
    this.guard = { readOnly: [], watched: new Map(), configs: new Map(), hookPaths: new Set(), roots: roots.map(toBytes), gitDirs: new Set(), worktrees: new Set(), indexStamps: new Map(), scanRoots: [], noGit: [], named: [], truncated: false };
    this.#home = toBytes(env.HOME ?? homedir());
    this.#rootSet = new Set(this.guard.roots);
  }

  /** guard.readOnly as a set (asked once per protected path: a thousand roots have thousands). */
  readonly #readOnly = new Set<string>();

  /** The write roots as a set: "is it inside one" walks the path's ancestors, whatever their number. */
  readonly #rootSet: ReadonlySet<string>;

  /** A limit was reached at `where`: the run is refused rather than left partly unguarded. */
  truncate(where: string, why: string): void {
    if (!this.guard.truncated) this.guard.truncatedAt = `${fromBytes(where)}: ${why}`;
    this.guard.truncated = true;
  }

  #inRoots(path: string): boolean {
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      if (this.#rootSet.has(dir)) return true;
      if (dirname(dir) === dir) return false;
    }
  }

  /** Whether `dir` is a write root or lies inside one. */
  inOrIsRoot(dir: string): boolean {
    return this.#rootSet.has(dir) || this.#inRoots(dir);
  }

  /** The paths discoverGit asks about first, looked at in one batch (discovery changes nothing). */
  ahead: Lookahead | undefined;

  /** Read-only when it exists; its state noted when missing or a link (and a link followed). */
  protect(path: string, hops = 0): void {
    if (!this.#inRoots(path) || this.guard.watched.has(path)) return;
    const info = this.ahead?.take(path) ?? inspect(path);
    if (info.kind === 'file' || info.kind === 'dir' || info.kind === 'other') {
      const utf8 = fromBytes(path);
      if (toBytes(utf8) !== path) this.guard.watched.set(path, state(info.kind, info.stamp));
      else if (!this.#readOnly.has(utf8)) {
        this.#readOnly.add(utf8);
        this.guard.readOnly.push(utf8);
      }
      return;
    }
    this.guard.watched.set(path, state(info.kind, info.stamp));
    if (info.kind === 'link' && hops < 8) {
      // A link planted on the host (hooks kept elsewhere, a dangling .zero): what it points at.
      try {
        this.protect(resolve(dirname(path), readlinkSync(Buffer.from(path, 'latin1'), { encoding: 'buffer' }).toString('latin1')), hops + 1);
      } catch {
        // unreadable: the link's own state is watched
      }
    }
  }

  /** A config git writes: its content noted to compare after the run; else read-only or watched. */
  #watchConfig(path: string): void {
    if (!this.#inRoots(path) || this.guard.configs.has(path) || this.guard.watched.has(path)) return;
    const info = inspect(path);
    if (info.kind === 'missing') {
      this.guard.configs.set(path, { bytes: undefined, state: state('missing', info.stamp) });
      return;
    }
    const bytes = info.kind === 'file' ? readSmall(path, MAX_CONFIG_BYTES) : undefined;
    if (bytes !== undefined && inspect(path).stamp === info.stamp) {
      this.guard.configs.set(path, { bytes, state: state('file', info.stamp) });
      return;
    }
    this.protect(path); // a link, a directory, too large or changing: as every other guarded path
  }

  /** The user's global and system config: hooksPath, includes and command paths in write roots. */
  globalConfig(env: Env): void {
    const xdg = env.XDG_CONFIG_HOME ? toBytes(env.XDG_CONFIG_HOME) : join(this.#home, '.config');
    const files = env.GIT_CONFIG_GLOBAL ? [toBytes(env.GIT_CONFIG_GLOBAL)] : [join(xdg, 'git', 'config'), join(this.#home, '.gitconfig')];
    files.push(env.GIT_CONFIG_SYSTEM ? toBytes(env.GIT_CONFIG_SYSTEM) : '/etc/gitconfig');
    for (const file of files) {
      if (recording()) noteOutside(file, outsideState(file));
      // Most of these do not exist: a stat without an exception first (exceptions are slow).
      if (statSync(Buffer.from(file, 'latin1'), { throwIfNoEntry: false }) === undefined) continue;
      let real = file;
      try {
        real = realpathSync(Buffer.from(file, 'latin1'), { encoding: 'buffer' }).toString('latin1');
      } catch {
        continue;
      }
      this.protect(real); // a global config that lives in a write root (a dotfiles workspace)
      this.#configPointers(real, undefined, 0, true);
    }
  }

  /**
   * Follows includes; protects hooksPath targets and command paths. Relative ones are resolved
   * against `worktree` (git runs hooks and commands there); for the global config, against every
   * worktree found later; without a known worktree they are not resolved.
   */
  #configPointers(file: string, worktree: string | undefined, depth: number, global = false): ConfigEntry[] {
    const entries = readConfig(file, this.guard.roots, this.#configs) ?? [];
    for (const e of entries) {
      if (e.value === null || e.value === '') continue;
      const name = e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
      if ((e.section === 'include' || e.section === 'includeif') && e.key === 'path') {
        const target = expandPath(e.value, dirname(file), this.#home);
        this.protect(target);
        if (depth < MAX_INCLUDE_DEPTH) this.#configPointers(target, worktree, depth + 1, global);
        continue;
      }
      if (!COMMAND_KEY.test(name)) continue;
      const hooks = name === 'core.hookspath';
      const word = hooks ? e.value : (e.value.replace(/^!/, '').trim().split(/\s+/)[0] ?? '');
      if (!hooks && !hasDirectory(word)) continue; // a program from PATH, not a file in a write root
      if (!isAbsolute(word) && !word.startsWith('~') && worktree === undefined) {
        if (global) this.#globalRelative.push(word);
        continue;
      }
      this.#protectCommand(word, worktree ?? '/', hooks);
    }
    return entries;
  }

  #protectCommand(word: string, worktree: string, hooks: boolean): void {
    const target = expandPath(word, worktree, this.#home);
    if (hooks) this.guard.hookPaths.add(target);
    this.protect(target);
    // husky: core.hooksPath is .husky/_ whose stubs run the hooks kept in .husky itself.
    if (hooks && basename(target) === '_') {
      this.guard.hookPaths.add(dirname(target));
      this.protect(dirname(target));
    }
  }

  /** A repository's worktree `dir` (which has a `.git`) and everything git reaches from it. */
  worktree(dir: string, depth = 0): void {
    if (this.guard.worktrees.has(dir)) return;
    if (this.guard.worktrees.size + this.guard.gitDirs.size >= MAX_GIT_DIRS) {
      this.truncate(dir, `more than ${MAX_GIT_DIRS} git dirs and worktrees to guard`);
      return;
    }
    this.guard.worktrees.add(dir);
    const dotGit = join(dir, '.git');
    const kind = inspect(dotGit).kind;
    let gitDir: string | undefined;
    if (kind === 'dir') gitDir = dotGit;
    else if (kind === 'file') {
      this.protect(dotGit);
      gitDir = gitFileTarget(dir);
    } else {
      this.protect(dotGit);
      return;
    }
    if (gitDir === undefined) return;
    for (const word of this.#globalRelative) this.#protectCommand(word, dir, false);
    this.gitDir(gitDir, dir);
    const common = readPointer(join(gitDir, 'commondir'));
    if (common !== undefined) this.gitDir(resolve(gitDir, common), dir);
    this.#gitlinks(dir, gitDir, depth);
  }

  /** One git dir: its guarded files, what its configs point at, its admin and module dirs. */
  gitDir(gitDir: string, worktree: string | undefined, moduleDepth = 0): void {
    if (this.guard.gitDirs.has(gitDir)) return;
    if (this.guard.worktrees.size + this.guard.gitDirs.size >= MAX_GIT_DIRS) {
      this.truncate(gitDir, `more than ${MAX_GIT_DIRS} git dirs and worktrees to guard`);
      return;
    }
    this.guard.gitDirs.add(gitDir);
    this.guard.hookPaths.add(join(gitDir, 'hooks'));
    for (const name of GIT_DIR_GUARDED) {
      if (name === 'config' || name === 'config.worktree') this.#watchConfig(join(gitDir, name));
      else this.protect(join(gitDir, name));
    }
    // A submodule's git dir names its worktree itself.
    const own = readConfig(join(gitDir, 'config'), this.guard.roots, this.#configs)?.find((e) => e.section === 'core' && e.subsection === undefined && e.key === 'worktree')?.value;
    const base = worktree ?? (own ? resolve(gitDir, own) : undefined);
    this.#configPointers(join(gitDir, 'config'), base, 0);
    this.#configPointers(join(gitDir, 'config.worktree'), base, 0);
    for (const [name, kind] of this.#list(join(gitDir, 'worktrees'))) {
      if (kind !== 'dir') continue;
      const admin = join(gitDir, 'worktrees', name);
      this.guard.gitDirs.add(admin);
      this.guard.hookPaths.add(join(admin, 'hooks'));
      for (const guarded of ADMIN_DIR_GUARDED) {
        if (guarded === 'config.worktree') this.#watchConfig(join(admin, guarded));
        else this.protect(join(admin, guarded));
      }
      // That worktree's own root is where its .git file is (the admin dir's gitdir names it).
      const dotGit = readPointer(join(admin, 'gitdir'));
      this.#configPointers(join(admin, 'config.worktree'), dotGit === undefined ? undefined : dirname(resolve(admin, dotGit)), 0);
    }
    this.#modules(join(gitDir, 'modules'), moduleDepth);
  }

  /** Submodule git dirs (names may hold slashes: a directory without HEAD is a path prefix). */
  #modules(dir: string, depth: number): void {
    if (depth > MAX_MODULE_DEPTH) {
      if ((listDir(dir, 1) ?? []).length > 0) this.truncate(dir, `submodule git dirs nested deeper than ${MAX_MODULE_DEPTH} levels`);
      return;
    }
    for (const [name, kind] of this.#list(dir)) {
      if (kind !== 'dir') continue;
      const path = join(dir, name);
      if (isGitDirLike(path)) this.gitDir(path, undefined, depth + 1);
      else this.#modules(path, depth + 1);
    }
  }

  #list(dir: string): Array<[string, EntryKind]> {
    const entries = listDir(dir, MAX_LISTED + 1) ?? [];
    if (entries.length > MAX_LISTED) this.truncate(dir, `more than ${MAX_LISTED} entries`);
    return entries.slice(0, MAX_LISTED);
  }

  #gitlinks(worktree: string, gitDir: string, depth: number): void {
    if (depth > MAX_MODULE_DEPTH) {
      if (readGitlinks(gitDir).length > 0) this.truncate(worktree, `gitlinks nested deeper than ${MAX_MODULE_DEPTH} levels`);
      return;
    }
    const index = join(gitDir, 'index');
    this.guard.indexStamps.set(worktree, inspect(index).stamp);
    for (const link of readGitlinks(gitDir)) {
      const sub = join(worktree, link);
      if (!this.#inRoots(join(sub, '.git'))) continue;
      if (inspect(join(sub, '.git')).kind !== 'missing') this.worktree(sub, depth + 1);
    }
  }
}

/** Whether a program word names a file by path (git for Windows takes `\\` there too). */
function hasDirectory(word: string): boolean {
  return word.includes('/') || word.includes(sep);
}

function state(kind: EntryKind, stamp: string): string {
  return `${kind}:${stamp}`;
}

/** A directory git would take for a git dir (HEAD present), as opposed to a modules/ path prefix. */
export function isGitDirLike(dir: string): boolean {
  return inspect(join(dir, 'HEAD')).kind !== 'missing';
}

/**
 * Looks at every repository the write roots are, lie in or contain (at any depth), before a run.
 * `userRoots` are the workspace and the caller's extra write roots (managed caches hold no
 * repository); `roots` every write root; `alsoProtect` further paths under the same rule
 * (read-only when present, else watched); `topLooks` answers names at the top of settled nested
 * roots (root-tops.ts). Never throws.
 */
export function discoverGit(userRoots: readonly string[], roots: readonly string[], env: Env = process.env, alsoProtect: readonly string[] = [], topLooks?: TopLooks): GitGuard {
  const d = new Discovery(roots, env);
  try {
    // Shortest first: a root is scanned before the roots nested in it.
    d.guard.scanRoots = [...new Set(userRoots.map(toBytes))].sort((x, y) => x.length - y.length);
    // What is asked of every root below, in one batch: a walk per root rather than per name. The
    // names at the top of a settled nested root found missing in an earlier run under the same
    // stamp are answered without a look (root-tops.ts); the check after the run knows those roots.
    // The walk below asks next for the .git beside a root (in its parent): in the batch too.
    const protect = alsoProtect.map(toBytes);
    const batch = [...protect];
    for (const root of d.guard.scanRoots) {
      const clean = cleanPosix(root);
      batch.push(childOf(root, '.git', clean), childOf(parentOf(root, clean), '.git', clean));
    }
    d.ahead = new Lookahead(batch, topLooks === undefined ? undefined : (paths) => topLooks.inspect(paths));
    if (topLooks !== undefined && topLooks.settled.size > 0) d.guard.settled = [...topLooks.settled];
    // .zero/.agents and the plan's own protected paths: the same rule (a link is followed to
    // where it points, and replacing the link itself is undone too).
    for (const path of protect) d.protect(path);
    d.globalConfig(env);
    // The repository each directory belongs to (null: none), shared by the roots: nested roots
    // (a monorepo's many dist/ dirs) share their ancestors, each looked at once.
    const tops = new Map<string, string | null>();
    const scanned = new ScannedRoots();
    for (const root of d.guard.scanRoots) {
      // The repository the root belongs to: itself, or the nearest ancestor with a .git.
      let top: string | null = null;
      const walked: string[] = [];
      const clean = cleanPosix(root);
      for (let dir = root; ; dir = parentOf(dir, clean)) {
        const known = tops.get(dir);
        if (known !== undefined) {
          top = known;
          break;
        }
        walked.push(dir);
        if (d.ahead.take(childOf(dir, '.git', clean)).kind !== 'missing') {
          top = dir;
          break;
        }
        if (d.inOrIsRoot(dir)) d.guard.noGit.push(dir);
        if (parentOf(dir, clean) === dir) break;
      }
      for (const dir of walked) tops.set(dir, top);
      if (top !== null) d.worktree(top);
      // Every repository the root holds, at any depth, tracked or not: host git in any of them
      // reads its own config and hooks. Bare ones (a git dir without a worktree) too. A root
      // inside one already scanned was walked with it (outer roots come first): not again.
      const coverage = scanned.coverage(root, NESTED_CONFIG_SCAN.skip);
      if (coverage !== 'no') {
        if (coverage === 'named') (d.guard.namesCovered ??= []).push(root);
        continue;
      }
      const scan = scanRepositories(root, MAX_SCANNED_DIRS, MAX_GIT_DIRS, NESTED_CONFIG_SCAN);
      if (scan.incomplete) d.truncate(root, `could not look at every directory (at most ${MAX_SCANNED_DIRS} directories, ${MAX_GIT_DIRS} repositories and ${NESTED_CONFIG_SCAN.max} agent or editor config entries, none unreadable at the top)`);
      scanned.add(root, scan.gitDirs);
      d.guard.named.push(...scan.named);
      for (const dir of scan.worktrees) d.worktree(dir);
      for (const gitDir of scan.gitDirs) d.gitDir(gitDir, undefined);
    }
  } catch (error) {
    d.truncate('', `the look failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  // A config compared after the run stays writable during it (the plan's own list included).
  d.guard.readOnly = d.guard.readOnly.filter((path) => !d.guard.configs.has(toBytes(path)));
  return d.guard;
}
