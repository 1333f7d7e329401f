// SPDX-License-Identifier: MIT
// Per-workspace managed runtime state (tool caches and data) outside the workspace, under the
// user cache dir, 0700: its cache/ and data/ dirs become write roots, the environment points the
// tools at them, a lease protects it while a command runs, and old siblings are cleaned up.
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import { buildGoProxy, buildHostGoDownloadDir, buildHostNpmCache, seedNpmCache, type SeedStats } from './cache-seed.js';
import { writeSanitizedNpmrc } from './npmrc.js';
import { leaseDirOf, liveLeases, removeLease, withMutex, writeLease } from './runtime-lease.js';
import { isWithin } from '../path-within.js';
import type { HostFacts } from '../host-facts.js';
import { BoundedMemo } from '../bounded-memo.js';
import { removeEntry, removeEntryAsync, toBytes } from './beneath.js';
import { sha256Hex } from '../sha256.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Subdirectories of `cache/`: the per-tool caches the Go Zero CLI keeps, so a workspace used by both finds the same layout. */
export const RUNTIME_CACHE_DIRS = ['npm', 'yarn', 'corepack', 'pip', 'go-build'] as const;
/** Subdirectories of `data/`: the Go Zero CLI's set (same layout for both) plus Yarn 2+'s global folder (its cache lives there). */
export const RUNTIME_DATA_DIRS = ['go-mod', 'cargo', 'yarn'] as const;
/** Unused roots older than this are removed (ZERO_SANDBOX_STATE_MAX_AGE_DAYS overrides it). */
export const RUNTIME_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * How long an unused root is kept: ZERO_SANDBOX_STATE_MAX_AGE_DAYS (a positive number of days)
 * or 30 days. A value that is not a positive number is ignored, so a typo never empties the state.
 */
export function runtimeMaxAgeMs(env: Env = process.env): number {
  const raw = env.ZERO_SANDBOX_STATE_MAX_AGE_DAYS;
  const days = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isFinite(days) && days > 0 ? Math.round(days * 24 * 60 * 60 * 1000) : RUNTIME_MAX_AGE_MS;
}
/** At most this many roots are kept (most recently used first). */
export const RUNTIME_MAX_ROOTS = 64;
/** Cleanup runs after a lease that created a root, otherwise at most this often. */
export const RUNTIME_CLEANUP_INTERVAL_MS = 60 * 60 * 1000;

/** Where the managed state of one workspace lives. */
export interface RuntimeLayout {
  /** `<UserCacheDir>/zero/runtime/v1` (or the temp fallback): holds every workspace's root. */
  base: string;
  /** First 8 bytes of sha256(workspace), hex. */
  key: string;
  /** `<base>/<key>`: not itself writable from inside the sandbox. */
  root: string;
  /** `<root>/cache`: a write root, and XDG_CACHE_HOME. */
  cacheDir: string;
  /** `<root>/data`: a write root. */
  dataDir: string;
  /** True for the shared-temp fallback, whose parent must be checked as ours and private. */
  fallback: boolean;
}

/**
 * The user cache dir as Go's os.UserCacheDir has it: Linux $XDG_CACHE_HOME, else ~/.cache;
 * macOS ~/Library/Caches; Windows %LocalAppData%.
 */
export function buildUserCacheDir(env: Env, home: string = env.HOME ?? homedir()): string {
  // process.platform: each OS has its own per-user cache directory convention (see above).
  if (process.platform === 'darwin') return join(home, 'Library', 'Caches');
  if (process.platform === 'win32') return env.LOCALAPPDATA !== undefined && isAbsolute(env.LOCALAPPDATA) ? env.LOCALAPPDATA : join(home, 'AppData', 'Local');
  const xdg = env.XDG_CACHE_HOME;
  return xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.cache');
}

/**
 * The layout for a (resolved) workspace. When the user cache dir lies inside the workspace, the
 * state would be writable as workspace files, so it moves to a per-user directory under `tmpBase`.
 */
export function buildRuntimeLayout(workspace: string, userCacheDir: string, tmpBase?: string): RuntimeLayout {
  const base = join(userCacheDir, 'zero', 'runtime', 'v1');
  // The temp fallback depends on more than the two paths (the temp dir, the uid): never remembered.
  if (isWithin(workspace, base)) return buildLayoutOnce(workspace, base, tmpBase);
  return { ...layouts.get(`${workspace}\0${userCacheDir}`, () => buildLayoutOnce(workspace, base, tmpBase)) };
}

// Layouts by (workspace, user cache dir), outside the fallback: a pure function of the two.
const layouts = new BoundedMemo<RuntimeLayout>(64);

function buildLayoutOnce(workspace: string, userBase: string, tmpBase: string | undefined): RuntimeLayout {
  const key = sha256Hex(workspace).slice(0, 16); // not node:crypto: its import costs ~4 ms of CLI start
  let base = userBase;
  const fallback = isWithin(workspace, base);
  if (fallback) {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    base = join(tmpBase ?? tmpdir(), `zero-runtime-${uid}`, 'v1');
  }
  const root = join(base, key);
  return { base, key, root, cacheDir: join(root, 'cache'), dataDir: join(root, 'data'), fallback };
}

/**
 * The environment that points tools at the managed dirs. HOME and XDG config/data/state stay the
 * user's. npm's variables are set in both spellings so a caller's upper-case one cannot win.
 */
export function buildRuntimeEnv(layout: RuntimeLayout, hostEnv: Env, hostGoDownloadDir?: string): Record<string, string> {
  const inputs = [layout.cacheDir, layout.dataDir, hostGoDownloadDir, hostEnv.GOPROXY, hostEnv.GOFLAGS];
  return { ...runtimeEnvs.get(JSON.stringify(inputs), () => buildRuntimeEnvOnce(layout, hostEnv, hostGoDownloadDir)) };
}

// Environments by every input they are built from (a pure function of them).
const runtimeEnvs = new BoundedMemo<Record<string, string>>(64);

function buildRuntimeEnvOnce(layout: RuntimeLayout, hostEnv: Env, hostGoDownloadDir: string | undefined): Record<string, string> {
  const cache = (name: string) => join(layout.cacheDir, name);
  const data = (name: string) => join(layout.dataDir, name);
  const env: Record<string, string> = {
    XDG_CACHE_HOME: layout.cacheDir,
    npm_config_cache: cache('npm'),
    NPM_CONFIG_CACHE: cache('npm'),
    YARN_CACHE_FOLDER: cache('yarn'),
    YARN_GLOBAL_FOLDER: data('yarn'),
    COREPACK_HOME: cache('corepack'),
    PIP_CACHE_DIR: cache('pip'),
    GOCACHE: cache('go-build'),
    GOMODCACHE: data('go-mod'),
    CARGO_HOME: data('cargo'),
  };
  // Go: read what the host's module cache already holds (when it exists), write only to the
  // managed one; keep the managed files writable so cleanup can remove them.
  if (hostGoDownloadDir !== undefined) env.GOPROXY = buildGoProxy(hostGoDownloadDir, hostEnv.GOPROXY);
  const goflags = (hostEnv.GOFLAGS ?? '').trim();
  env.GOFLAGS = goflags.split(/\s+/).includes('-modcacherw') ? goflags : `${goflags} -modcacherw`.trim();
  return env;
}

/** A leased managed state, ready to add to a plan. */
export interface RuntimeState {
  /** The layout in use. */
  layout: RuntimeLayout;
  /** The directories to add as write roots (`cache/`, `data/`), symlink-resolved. */
  writeRoots: string[];
  /** Environment overrides for buildSandboxEnv. */
  env: Record<string, string>;
  /** True when this call created the root. */
  created: boolean;
  /** What seeding the npm cache from the host's did, when this call did it. */
  npmSeed?: SeedStats;
  /** Drops this lease (idempotent); may then clean up old roots. */
  release(): void;
}

/** Options of acquireRuntimeState (all injectable for tests). */
export interface AcquireOptions {
  /** Our own (trusted) environment: where the user cache dir and host caches are. */
  env?: Env;
  /** Override the user cache dir. */
  userCacheDir?: string;
  /** Clock for cleanup (ms since epoch). */
  now?: () => number;
  /** Where the fallback state goes when the user cache dir is inside the workspace (default: os.tmpdir()). */
  tmpBase?: string;
  /** The command about to run: a JS package manager in it triggers seeding the npm cache. */
  argv?: readonly string[];
  /**
   * This call's filesystem facts (see host-facts.ts), shared with the plan: the workspace is
   * resolved through them before anything is created, and the user's npmrc is looked up through
   * them after.
   */
  facts?: HostFacts;
  /**
   * Keep this process's lease this long after the last release, so a burst of commands in one
   * workspace prepares the state once (default 0: release at once). A lease lingering past the
   * process's exit lapses like any lease of a dead process.
   */
  lingerMs?: number;
}

// Roots whose lease lingers after its last release: root -> the timer that drops it.
const lingering = new Map<string, NodeJS.Timeout>();


/** Commands that read npm's cache (also inside a `sh -c` string). */
const NPM_COMMAND = /(^|[\s/;&|(`'"])(npm|npx|pnpm|yarn|corepack)($|[\s;&|)`'"])/;

/** True when a command line mentions a JS package manager (only a hint for seeding, never for policy). */
export function buildNeedsNpmSeed(argv: readonly string[]): boolean {
  return argv.some((arg) => NPM_COMMAND.test(arg));
}

// Leases held by this process: root -> number of running commands using it.
const held = new Map<string, number>();

// The real path of a leased root, resolved when the lease was taken and kept while this process
// holds or lingers on it (the user cache dir is the user's own; nothing sandboxed can move it).
const realRoots = new Map<string, string>();

function ensureDir(path: string): boolean {
  try {
    mkdirSync(path, { mode: 0o700 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * The fallback dir sits in a shared temp dir where another user could have made it first: create
 * it 0700, then insist that it is a real directory of ours that nobody else can write.
 */
function assertPrivateDir(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw failure(path, error);
  }
  const st = lstatSync(path);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new SandboxError('spawn_failed', `refusing the managed runtime dir ${path}: it must be a directory owned by uid ${uid} that only its owner can write (remove it to let the sandbox recreate it)`, { path });
  }
}

function isDir(path: string): boolean {
  try {
    // No exception for a missing path (the usual answer for the host's Go cache): they are slow.
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

function failure(path: string, error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  return new SandboxError('spawn_failed', `cannot prepare the managed runtime state at ${path}: ${(error as Error).message}`, { path, cause: error });
}

/**
 * Creates (0700) and leases the managed state of `workspace`. Returns undefined when the
 * workspace does not resolve (the plan resolver then reports it, naming the option).
 */
export function acquireRuntimeState(workspace: string, options: AcquireOptions = {}): RuntimeState | undefined {
  // With this call's facts, resolved as the plan resolves it (one walk for both; on Linux the same
  // answer as the C library's realpath).
  const realpath = (path: string) => (options.facts === undefined ? realpathSync.native(path) : options.facts.realpath(path));
  let real: string;
  try {
    real = realpath(resolve(workspace));
  } catch {
    return undefined;
  }
  const env = options.env ?? process.env;
  const layout = buildRuntimeLayout(real, options.userCacheDir ?? buildUserCacheDir(env), options.tmpBase);
  // Only the shared-temp fallback needs its parent checked; a user cache dir (even one that
  // happens to live under the temp dir) is created as needed, parents included.
  if (layout.fallback) assertPrivateDir(join(layout.base, '..'));
  let created = false;
  const linger = lingering.get(layout.root);
  const warm = (held.get(layout.root) ?? 0) > 0 || linger !== undefined;
  if (warm && isDir(layout.cacheDir) && isDir(layout.dataDir)) {
    // This process already holds the lease and made the dirs: nothing to prepare again.
    clearTimeout(linger);
    lingering.delete(layout.root);
    held.set(layout.root, (held.get(layout.root) ?? 0) + 1);
  } else try {
    created = withMutex(layout.base, () => {
      const count = held.get(layout.root) ?? 0;
      if (count === 0) writeLease(layout.root, real);
      held.set(layout.root, count + 1);
      const isNew = ensureDir(layout.root);
      // cache/ and data/ are mount points inside the sandbox (never replaceable); the tool dirs in
      // them are created once, and a command that removes one leaves the tool to recreate it.
      ensureDir(layout.cacheDir);
      ensureDir(layout.dataDir);
      if (isNew) {
        chmodSync(layout.root, 0o700);
        // Which workspace this is, for `zero-sandbox state list` (the root's name is a hash).
        writeFileSync(join(layout.root, 'workspace'), `${real}\n`, { mode: 0o600 });
        for (const name of RUNTIME_CACHE_DIRS) ensureDir(join(layout.cacheDir, name));
        for (const name of RUNTIME_DATA_DIRS) ensureDir(join(layout.dataDir, name));
      }
      const now = new Date((options.now ?? Date.now)());
      utimesSync(layout.root, now, now); // last use, for cleanup
      return isNew;
    });
  } catch (error) {
    throw failure(layout.root, error);
  }
  const npmSeed = options.argv !== undefined && buildNeedsNpmSeed(options.argv) ? seedOnce(layout, env) : undefined;
  const hostGo = buildHostGoDownloadDir(env);
  // cache/ and data/ are real directories we made; only the user cache dir may hold symlinks.
  let realRoot = warm ? realRoots.get(layout.root) : undefined;
  if (realRoot === undefined) {
    realRoot = join(realpathSync.native(layout.base), layout.key);
    realRoots.set(layout.root, realRoot);
  }
  // Through the resolved root: the copy is made by a walk that follows no link.
  const npmrc = writeSanitizedNpmrc(env, join(realRoot, 'npmrc'), options.facts);
  return {
    layout,
    writeRoots: [join(realRoot, 'cache'), join(realRoot, 'data')],
    env: {
      ...buildRuntimeEnv(layout, env, isDir(hostGo) ? hostGo : undefined),
      // The user's npm settings minus credentials (the original is masked; see npmrc.ts).
      ...(npmrc === undefined ? {} : { npm_config_userconfig: npmrc, NPM_CONFIG_USERCONFIG: npmrc }),
    },
    created,
    ...(npmSeed === undefined ? {} : { npmSeed }),
    release: leaseRelease(layout, options.lingerMs ?? 0, options.now ?? Date.now, created),
  };
}

/**
 * The lease's release, made apart from acquireRuntimeState: it lives as long as the run, and a
 * closure made there would hold everything that call's closures hold (the options, with the plan's
 * host facts).
 */
function leaseRelease(layout: RuntimeLayout, lingerMs: number, now: () => number, created: boolean): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (lingerMs > 0 && held.get(layout.root) === 1) {
      // Keep the lease (and the prepared dirs) for the next command of a burst.
      held.delete(layout.root);
      const timer = setTimeout(() => {
        lingering.delete(layout.root);
        held.set(layout.root, (held.get(layout.root) ?? 0) + 1);
        releaseLease(layout, now, created);
      }, lingerMs);
      timer.unref();
      lingering.set(layout.root, timer);
      return;
    }
    releaseLease(layout, now, created);
  };
}

/**
 * The first npm-using command of a workspace starts from what the host's npm cache already holds:
 * tried once per root (a marker in the root, which commands cannot write), and only while the
 * managed npm cache is still empty (built aside, moved in with one rename; see cache-seed.ts).
 */
function seedOnce(layout: RuntimeLayout, env: Env): SeedStats | undefined {
  const marker = join(layout.root, 'npm-seeded');
  try {
    writeFileSync(marker, `${new Date().toISOString()}\n`, { flag: 'wx', mode: 0o600 });
  } catch {
    return undefined; // tried before (or by a concurrent first command)
  }
  return seedNpmCache(buildHostNpmCache(env), join(layout.root, `.seed-npm-${process.pid}`), join(layout.cacheDir, 'npm'));
}

function releaseLease(layout: RuntimeLayout, now: () => number, created: boolean): void {
  try {
    // Dropping a lease needs no mutex: it only ever makes cleanup allowed sooner.
    const count = (held.get(layout.root) ?? 1) - 1;
    if (count > 0) held.set(layout.root, count);
    else {
      held.delete(layout.root);
      realRoots.delete(layout.root);
      removeLease(layout.root);
    }
    maybeCleanup(layout.base, now, created);
  } catch {
    // A lease that cannot be dropped only delays cleanup until this process exits.
  }
}

/** Cleans up after a lease that created a root (the count may now exceed the limit), else hourly. */
function maybeCleanup(base: string, now: () => number, created: boolean): void {
  const stamp = join(base, '.last-cleanup');
  try {
    if (!created && now() - statSync(stamp).mtimeMs < RUNTIME_CLEANUP_INTERVAL_MS) return;
  } catch {
    // never ran
  }
  const trash = cleanupRuntimeRoots(base, { now: now(), maxAgeMs: runtimeMaxAgeMs() });
  const t = new Date(now());
  writeFileSync(stamp, '');
  utimesSync(stamp, t, t);
  // On a thread of the addon's own: a workspace's managed caches can hold hundreds of megabytes,
  // which the caller's event loop would otherwise wait for (the process waits for it before it
  // exits; one killed first leaves the rest to the next cleanup, which returns earlier trash).
  for (const dir of trash) void removeRuntimeTrashLater(dir);
}

/**
 * Removes a trashed runtime root. Its cache/ and data/ were write roots: sandboxed commands shaped
 * them (links out, loops, trees deeper than PATH_MAX, where a path-based recursive remove throws
 * or, raced, follows a link). The descriptor walk never follows a link and never throws; no lease
 * is live, so no sandboxed process of it can still be running. True when nothing is left.
 */
export function removeRuntimeTrash(dir: string): boolean {
  return removeEntry(toBytes(dir));
}

/** removeRuntimeTrash on a thread of the addon's own, where it has one: the caller does not wait. */
export function removeRuntimeTrashLater(dir: string): Promise<boolean> {
  return removeEntryAsync(toBytes(dir));
}

/** Options of cleanupRuntimeRoots. */
export interface CleanupOptions {
  /** The current time (ms since epoch). */
  now: number;
  /** Maximum age of an unused root (default 30 days). */
  maxAgeMs?: number;
  /** Maximum number of roots kept (default 64). */
  maxRoots?: number;
  /** Tells whether a pid with a start time is alive (injected for tests). */
  startOf?: (pid: number) => string | undefined;
}

/**
 * Under the mutex: moves every root that has no live lease and is older than maxAgeMs, or beyond
 * the maxRoots most recently used, to a `.trash-*` name (with its lease dir removed) and returns
 * the trash paths for the caller to delete outside the mutex. Earlier trash is returned too.
 */
export function cleanupRuntimeRoots(base: string, options: CleanupOptions): string[] {
  const maxAge = options.maxAgeMs ?? RUNTIME_MAX_AGE_MS;
  const maxRoots = options.maxRoots ?? RUNTIME_MAX_ROOTS;
  return withMutex(base, () => {
    const trash = readdirSync(base).filter((name) => name.startsWith('.trash-')).map((name) => join(base, name));
    const roots = listRuntimeRootsUnlocked(base).sort((a, b) => b.mtime - a.mtime);
    roots.forEach((root, rank) => {
      if (options.now - root.mtime <= maxAge && rank < maxRoots) return;
      if (liveLeases(root.path, options.startOf).length > 0) return;
      const target = join(base, `.trash-${root.name}-${process.pid}-${Date.now()}`);
      try {
        renameSync(root.path, target);
        rmSync(leaseDirOf(root.path), { recursive: true, force: true });
        trash.push(target);
      } catch {
        // left for the next cleanup
      }
    });
    return trash;
  });
}

/** One workspace's managed state as `zero-sandbox state list` shows it. */
export interface RuntimeRootInfo {
  /** The root's name (a hash of the workspace path). */
  name: string;
  /** Its path. */
  path: string;
  /** Last use (ms since epoch): the root's mtime, set at every lease. */
  mtime: number;
  /** The workspace, when the root records it (roots made before it did, do not). */
  workspace?: string;
}

/**
 * The roots under `base` that are this user's real directories (lstat: a symlink or another
 * user's entry is never listed, so never followed or removed).
 */
function listRuntimeRootsUnlocked(base: string): RuntimeRootInfo[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const out: RuntimeRootInfo[] = [];
  for (const name of readdirSync(base)) {
    if (!/^[0-9a-f]{16}$/.test(name)) continue;
    const path = join(base, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    const info: RuntimeRootInfo = { name, path, mtime: st.mtimeMs };
    try {
      const note = join(path, 'workspace');
      if (lstatSync(note).isFile()) info.workspace = readFileSync(note, 'utf8').trim();
    } catch {
      // made before roots recorded their workspace
    }
    out.push(info);
  }
  return out;
}

/** This user's managed roots under `base` with their live leases (most recently used first). */
export function listRuntimeRoots(base: string, startOf?: (pid: number) => string | undefined): Array<RuntimeRootInfo & { liveLeases: number }> {
  let roots: RuntimeRootInfo[];
  try {
    roots = listRuntimeRootsUnlocked(base);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return roots.sort((a, b) => b.mtime - a.mtime).map((root) => ({ ...root, liveLeases: liveLeases(root.path, startOf).length }));
}

/** The base directory of this user's managed state (`<UserCacheDir>/zero/runtime/v1`). */
export function runtimeStateBase(env: Env = process.env): string {
  return join(buildUserCacheDir(env), 'zero', 'runtime', 'v1');
}
