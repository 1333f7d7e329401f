// SPDX-License-Identifier: MIT
// The sole normalizer: caller options + the filesystem -> a SandboxPlan with every path absolute,
// symlink-resolved and checked. Errors name the option and the path at fault.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';

import { SandboxError } from '../errors.js';
import type { SandboxPlan, WritableRoot } from '../backend/types.js';
import type { CheckedOptions } from './options.js';
import { DirectorySet, enclosingPaths, isAscii, isCleanAbsolute, isWithin } from '../path-within.js';
import { HostFacts } from '../host-facts.js';
import { ownFilesInside } from './own-files.js';
import { assertNoSymlinkHop, assertNotHostHandover, currentHandoverHost, samePath, type HandoverHost } from './host-handover.js';
import { buildRuntimeLayout, buildUserCacheDir } from './runtime-state.js';
import { wasWriteRoot } from './earlier-roots.js';
import { credentialDenySet, resolveAsFarAsExists } from './credential-deny.js';
import { PROTECTED_METADATA_NAMES, agentToolConfigPaths } from '../protected-names.js';
import { forEachEntry, listRoots, type RootListing } from './root-walk.js';
import { denyEntryKinds } from './deny-entry-memo.js';
import { noteStandardSubpaths } from './standard-subpaths.js';
import { logContent, logListed, logLooked } from './look-log.js';

/** The protected metadata names of every write root (lib/protected-names.ts). */
export const PROTECTED_NAMES = PROTECTED_METADATA_NAMES;

function fail(message: string, path: string): never {
  throw new SandboxError('invalid_argument', message, { path });
}

/** realpath, or a clear error naming the option when the path is missing. */
function existing(path: string, option: string, base: string, facts: HostFacts): string {
  const absolute = isAbsolute(path) ? path : resolve(base, path);
  try {
    return facts.realpath(absolute);
  } catch {
    return fail(`${option} ${path} does not exist`, absolute);
  }
}

/**
 * Looks at the deny entries in one batched walk that follows no link (deny-entry-memo.ts: the
 * kinds of entries whose directories are unchanged since the last run are kept; Linux): an entry
 * found with no link on the way is its own real path, and its kind is known, so `existing` and the
 * mount plan need no look of their own (1,000 entries were 2,000 lstat calls). An entry that is
 * missing, unclean or reached through a link is left to `existing`.
 */
function lookAtDenyEntries(paths: readonly string[], base: string, facts: HostFacts): void {
  if (process.platform !== 'linux' || paths.length === 0) return;
  const absolute = [...new Set(paths.map((path) => (isAbsolute(path) ? path : resolve(base, path))))].filter((path) => isCleanAbsolute(path) && isAscii(path));
  denyEntryKinds(absolute).forEach((kind, i) => {
    if (kind !== undefined) facts.noteLooked(absolute[i] as string, kind === 'dir');
  });
}

/**
 * The config's deny-read entries missing when the run was authorized (DENY_READ_IF_APPEARS), each
 * resolved as far as it exists, for the read tree: outside the write roots a file that appears
 * there during the run stays unreadable (no read rule covers it). Inside a write root the
 * command may write, and so read, anything: there an entry can be hidden only once it exists.
 */
function denyIfAppears(paths: readonly string[], base: string, roots: DirectorySet, facts: HostFacts): string[] {
  const out: string[] = [];
  for (const path of paths) {
    const resolved = resolveAsFarAsExists(isAbsolute(path) ? path : resolve(base, path), facts);
    if (resolved !== undefined && !roots.holds(resolved)) out.push(resolved);
  }
  return out;
}

function directory(path: string, option: string, base: string, facts: HostFacts): string {
  const real = existing(path, option, base, facts);
  const st = facts.stat(real);
  if (st === undefined) fail(`${option} ${path} does not exist`, real);
  if (!st.isDirectory()) fail(`${option} ${path} is not a directory`, real);
  return real;
}

/**
 * An allowWrite entry, resolved and checked: an existing directory, reached without a symlink
 * (see assertNoSymlinkHop), that does not hand the host over (see host-handover.ts).
 */
export function resolveWriteRoot(path: string, option: string, base: string, facts: HostFacts, host: HandoverHost = currentHandoverHost()): string {
  const real = directory(path, option, base, facts);
  assertNoSymlinkHop(path, isAbsolute(path) ? resolve(path) : resolve(base, path), real, option);
  assertNotHostHandover(real, option, path, host);
  return real;
}

/**
 * The workspace, resolved and checked (default: the current directory). A workspace given through
 * a symlink is the caller's own choice, unless a link on the way lies inside the workspace (its
 * managed runtime state still exists) or an extra write root of an earlier sandboxed run
 * (earlier-roots.ts): a command there may have planted it (`ws/sub -> ~/other-project`). Either way what it resolves to is checked like any
 * write root.
 */
export function resolveWorkspace(given: string | undefined, facts: HostFacts): string {
  const processCwd = process.cwd();
  const workspace = directory(given ?? processCwd, 'workspace', processCwd, facts);
  if (given !== undefined && !samePath(resolve(processCwd, given), workspace)) {
    const planted = plantedLink(resolve(processCwd, given), facts);
    if (planted !== undefined) {
      fail(`workspace ${given} reaches ${workspace} through the symlink ${planted.link}, which lies inside ${planted.dir}, ${planted.was} of an earlier sandboxed run (a command there may have planted it); pass ${workspace} itself to use it`, resolve(processCwd, given));
    }
  }
  assertNotHostHandover(workspace, 'workspace', given ?? workspace);
  return workspace;
}

/**
 * The first symlink on the way to `absolute` (any component, not only the last) that lies inside
 * an earlier run's workspace or extra write root, with that directory and what it was.
 */
function plantedLink(absolute: string, facts: HostFacts): { link: string; dir: string; was: string } | undefined {
  const cacheDir = buildUserCacheDir(process.env);
  const { root } = parse(absolute);
  let at = root;
  for (const part of absolute.slice(root.length).split(sep).filter((p) => p !== '')) {
    const next = join(at, part);
    if (facts.lstat(next)?.isSymbolicLink()) {
      for (let dir = at; ; dir = dirname(dir)) {
        if (facts.lstat(buildRuntimeLayout(dir, cacheDir).root) !== undefined) return { link: next, dir, was: 'the workspace' };
        if (wasWriteRoot(dir)) return { link: next, dir, was: 'a write root' };
        if (dirname(dir) === dir) break;
      }
      at = facts.realpath(next);
    } else at = next;
  }
  return undefined;
}

/**
 * The protected subpaths every write root has, relative to it (.git/hooks, .git/config and the
 * agent and editor configs, with this OS's separator), and each one's first component (made once).
 */
let standardRelative: { rels: string[]; firsts: string[] } | undefined;

function standardRelativeSubpaths(): { rels: string[]; firsts: string[] } {
  if (standardRelative === undefined) {
    const rels = [`.git${sep}hooks`, `.git${sep}config`, ...agentToolConfigPaths(sep).map((path) => path.slice(sep.length))];
    standardRelative = { rels, firsts: rels.map((rel) => rel.split('/')[0] as string) };
  }
  return standardRelative;
}

export function buildWritableRoot(root: string, extraReadOnly: readonly string[] = []): WritableRoot {
  // The agent and editor configs that run programs: read-only when they exist (checked after the
  // run on every OS either way: tool-configs.ts).
  if (!isCleanAbsolute(root)) {
    const git = join(root, '.git');
    return { root, readOnlySubpaths: [`${git}${sep}hooks`, `${git}${sep}config`, ...agentToolConfigPaths(root), ...extraReadOnly], protectedNames: [...PROTECTED_NAMES] };
  }
  // Under a clean root, concatenation gives what join() would (a plan may have thousands of
  // roots); the mount plan is told each entry's first name (standard-subpaths.ts).
  const { rels, firsts } = standardRelativeSubpaths();
  const prefix = root === sep ? sep : root + sep;
  const readOnlySubpaths = [...rels.map((rel) => prefix + rel), ...extraReadOnly];
  noteStandardSubpaths(readOnlySubpaths, root, sep, rels.length, firsts);
  return { root, readOnlySubpaths, protectedNames: [...PROTECTED_NAMES] };
}

/** How many entries of a write root are looked at for nested repositories (keeps start-up cheap). */
export const NESTED_REPO_SCAN_LIMIT = 512;

/**
 * Repositories directly inside a write root (one level down: a workspace holding several
 * checkouts): their .git/hooks and .git/config, plus what a .git file points to. Bounded by
 * NESTED_REPO_SCAN_LIMIT entries; never throws. `facts` are this call's (see host-facts.ts).
 * `listing`: the root's listing from listRoots (root-walk.ts), taken during this call.
 */
export function nestedGitPaths(root: string, facts: HostFacts = new HostFacts(), listing?: RootListing): string[] {
  if (listing !== undefined) return nestedFromListing(root, listing, facts);
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    logLooked(root);
    return [];
  }
  logListed(root);
  // The whole listing answers this call's other looks at names directly in the root (the
  // protected names and configs, mostly absent) without a system call each.
  facts.noteListing(root, entries.map((entry) => entry.name));
  entries = entries.slice(0, NESTED_REPO_SCAN_LIMIT);
  const out: string[] = [];
  // Entry names are plain: under a clean root, concatenation gives what join() would.
  const prefix = isCleanAbsolute(root) ? (root === sep ? sep : root + sep) : undefined;
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === '.git' || entry.name === 'node_modules') continue;
    const child = prefix === undefined ? join(root, entry.name) : prefix + entry.name;
    const dotGit = `${child}${sep}.git`;
    const git = facts.lstat(dotGit);
    if (git?.isDirectory()) out.push(`${dotGit}${sep}hooks`, `${dotGit}${sep}config`);
    else if (git?.isFile()) out.push(...linkedGitPaths(child, facts));
  }
  return out;
}

/** nestedGitPaths of a root (clean, its own real path) from its listing: the same paths in the same order. */
function nestedFromListing(root: string, listing: RootListing, facts: HostFacts): string[] {
  const looked: Array<[string, string]> = [];
  const prefix = root === sep ? sep : root + sep;
  // The root's entries decide, and so do those of each subdirectory whose `.git` was looked at.
  logListed(root);
  const names = forEachEntry(listing, (name, _kind, git) => {
    if (git !== '-') logListed(prefix + name);
    if (git === 'd' || git === 'f' || git === 'x') looked.push([name, git]);
  });
  facts.noteListing(root, names);
  const out: string[] = [];
  for (const [name, git] of looked) {
    const child = prefix + name;
    const dotGit = `${child}${sep}.git`;
    // x: the walk could not tell; node:fs answers (and throws) as nestedGitPaths' own look would.
    const kind = git !== 'x' ? git : facts.lstat(dotGit)?.isDirectory() ? 'd' : facts.lstat(dotGit)?.isFile() ? 'f' : 'o';
    if (kind === 'd') out.push(`${dotGit}${sep}hooks`, `${dotGit}${sep}config`);
    else if (kind === 'f') out.push(...linkedGitPaths(child, facts));
  }
  return out;
}

/**
 * A `.git` *file* (a linked worktree or a submodule) points at the real git directory; its hooks
 * and config live there (or in its common dir). Returns those paths when they exist, so they stay
 * read-only too when they are inside a write root. Reads small files; never throws.
 */
export function linkedGitPaths(root: string, facts: HostFacts = new HostFacts()): string[] {
  try {
    const dotGit = join(root, '.git');
    const st = facts.lstat(dotGit);
    if (st === undefined || !st.isFile()) return [];
    const match = /^gitdir:\s*(.+)$/m.exec(readText(dotGit));
    if (match === null) return [];
    const gitDir = resolve(root, (match[1] as string).trim());
    const dirs = [gitDir];
    const commonFile = join(gitDir, 'commondir');
    if (facts.lstat(commonFile)?.isFile()) {
      dirs.push(resolve(gitDir, readText(commonFile).trim()));
    }
    // The .git file itself: replaced by a directory, it would bring hooks of the command's choosing.
    const out: string[] = [dotGit];
    for (const dir of dirs) {
      for (const name of ['hooks', 'config']) {
        const path = join(dir, name);
        if (facts.lstat(path) !== undefined) out.push(facts.realpath(path));
      }
    }
    return [...new Set(out)];
  } catch {
    return [];
  }
}

/** A small file's text, noted with what was read (look-log.ts: content is re-read, not watched). */
function readText(path: string): string {
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } finally {
    logContent(path, text);
  }
  return text;
}

/**
 * The first write root (in `roots` order) each path would hide, for every path that is a root or
 * one of its ancestors (`isWithin(path, root)`): one look-up per deny entry, whatever the number
 * of roots.
 */
function hiddenRoots(roots: readonly string[]): Map<string, string> {
  const hides = new Map<string, string>();
  for (const root of roots) {
    for (const path of enclosingPaths(root)) if (!hides.has(path)) hides.set(path, root);
  }
  return hides;
}

export interface ResolvedPlanInput {
  argv: string[];
  options: CheckedOptions;
  /** The environments the credential baseline is computed from: ours and the command's. */
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>;
  /** The final command environment (already scrubbed, markers set). */
  commandEnv: Record<string, string>;
  /** Names of the variables the scrub removed (reported, never their values). */
  scrubbedEnv?: string[];
  /** Extra write roots the runtime adds (managed caches). */
  runtimeWriteRoots?: string[];
  /** This call's filesystem facts, shared with the spec and protected-path steps (default: fresh). */
  facts?: HostFacts;
}

export function resolvePlan(input: ResolvedPlanInput): SandboxPlan {
  const { options } = input;
  const facts = input.facts ?? new HostFacts();
  const workspace = resolveWorkspace(options.workspace, facts);
  // The host facts the handover rule needs, looked up once for every root of this plan.
  const host = options.allowWrite.length === 0 ? undefined : currentHandoverHost();
  // Every root opened and listed in one addon call (root-walk.ts); a root it could not open as a
  // directory reached without a link takes resolveWriteRoot's node:fs path (and its errors).
  const absolutes = options.allowWrite.map((path) => (isAbsolute(path) ? resolve(path) : resolve(workspace, path)));
  const listings = listRoots([workspace, ...absolutes], NESTED_REPO_SCAN_LIMIT);
  const listingOf = new Map<string, RootListing>();
  if (listings[0] !== undefined) listingOf.set(workspace, listings[0]);
  const extra = options.allowWrite.map((path, i) => {
    const absolute = absolutes[i] as string;
    const listing = listings[i + 1];
    if (listing === undefined) return resolveWriteRoot(path, 'allowWrite', workspace, facts, host);
    // A directory with no link on the way is its own real path: resolveWriteRoot's answer, which
    // leaves only its handover check to make.
    facts.noteReal(absolute);
    assertNotHostHandover(absolute, 'allowWrite', path, host);
    listingOf.set(absolute, listing);
    return absolute;
  });
  const roots = [workspace, ...extra, ...(input.runtimeWriteRoots ?? [])];
  const userRoots = new Set([workspace, ...extra]);
  const managed = new Set(input.runtimeWriteRoots ?? []);
  // zero-sandbox's own files inside a write root stay read-only (see own-files.ts).
  const ownFiles = ownFilesInside([...userRoots]);
  const cwd = directory(options.cwd ?? workspace, 'cwd', workspace, facts);
  if (!roots.some((root) => isWithin(root, cwd))) {
    fail(`cwd ${cwd} is outside the write roots (${roots.join(', ')})`, cwd);
  }
  lookAtDenyEntries([...options.denyRead, ...options.denyWrite], workspace, facts);
  const userDenyRead = options.denyRead.map((path) => existing(path, 'denyRead', workspace, facts));
  if (userDenyRead.length > 0) {
    const hides = hiddenRoots(roots);
    for (const path of userDenyRead) {
      const hidden = hides.get(path);
      if (hidden !== undefined) fail(`denyRead ${path} would hide the write root ${hidden}`, path);
    }
  }
  const denyWrite = options.denyWrite.map((path) => existing(path, 'denyWrite', workspace, facts));
  const allowRead = options.allowRead.map((path) => existing(path, 'allowRead', workspace, facts));
  const credentials = credentialDenySet(input.envs, roots, facts, allowRead);
  const denyRead = [...new Set([...userDenyRead, ...credentials.existing])];
  const readRoots = ['/', ...allowRead];
  const allRoots = new DirectorySet(roots);
  const appearing = denyIfAppears(options.denyReadIfAppears, workspace, allRoots, facts);
  return {
    argv: input.argv,
    cwd,
    env: input.commandEnv,
    network: options.network,
    workspace,
    writeRoots: [...new Set(roots)].map((root) => {
      // The managed caches (runtime-state.ts) are no one's workspace or repository: nothing there
      // is run as a git hook or read as .zero/.agents config, so they are not scanned for them.
      if (managed.has(root) && !userRoots.has(root)) return { root, readOnlySubpaths: [], protectedNames: [] };
      // The nested scan lists the root first, so the look for its .git file needs no call (nor,
      // when the listing lacks the name, does linkedGitPaths, which would find it missing).
      const nested = nestedGitPaths(root, facts, listingOf.get(root));
      const fromGitFile = facts.listedIn(root)?.mayHold('.git') === false ? [] : linkedGitPaths(root, facts);
      const linked = [...fromGitFile, ...nested].filter((path) => allRoots.holds(path));
      return buildWritableRoot(root, [...new Set([...linked, ...ownFiles.filter((path) => isWithin(root, path))])]);
    }),
    readRoots,
    denyRead,
    denyWrite,
    blockUnixSockets: options.network === 'deny',
    limits: options.limits,
    scrubbedEnv: input.scrubbedEnv ?? [],
    denyReadTree: { denied: [...new Set([...userDenyRead, ...credentials.tree.denied, ...appearing])], guarded: credentials.tree.guarded },
    ...(userDenyRead.length === 0 ? {} : { userDenyRead: [...new Set(userDenyRead)] }),
  };
}
