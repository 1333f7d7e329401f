// SPDX-License-Identifier: MIT
// Which directories must never become a workspace or write root: those whose contents the host
// runs, loads or trusts later, so that write access there hands the host over to the sandboxed
// command. The rule is pure (path semantics and host facts injected) so the Linux, macOS and
// Windows variants are tested on any machine; `assertNotHostHandover` is the one check every
// entry point (API options, CLI flags, config write roots, engine grants) goes through.
import { realpathSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { basename, dirname, join, posix, sep, win32 } from 'node:path';

import { SandboxError } from '../errors.js';
import { PACKAGE_ROOT } from '../native/load.js';
import { isCleanAbsolute } from '../path-within.js';
import { grantsFilePath, userSettingsDir } from '../policy/config/settings-dir.js';
import { stateNotesBase } from './run-notes.js';
import { buildUserCacheDir } from './runtime-state.js';

/** The host facts the rule depends on (all absolute and symlink-resolved, in the platform's syntax). */
export interface HandoverHost {
  /** `linux`, `darwin`, `win32` (others get the POSIX rules). */
  platform: string;
  /** The user's home directories (from $HOME / %USERPROFILE% and the account database). */
  homes: readonly string[];
  /** The directory holding the Node binary that runs zero-sandbox. */
  nodeDir: string;
  /** zero-sandbox's own package directory. */
  packageDir: string;
  /** The shared temp directory (os.tmpdir()). */
  tempDir?: string;
  /**
   * zero-sandbox's own settings: the user settings directory (config file, grants) and the grants
   * file. A command that could write them would turn the sandbox off, or grant itself network
   * and write roots, for the next run.
   */
  settings?: readonly string[];
  /**
   * zero-sandbox's own state on the host: `<user cache dir>/zero` (the managed runtime roots with
   * their leases and the npmrc the host writes there, the markers of earlier write roots) and the
   * temp fallback of the runtime roots. A command that could write there could plant a link the
   * host writes through, or forge the leases and markers later runs trust. A directory holding
   * them is not refused for it (the runtime state then moves to the temp fallback).
   */
  state?: readonly string[];
  /**
   * Where runs of other processes publish their protected-path notes when the machine has no
   * usable /dev/shm (run-notes.ts). A command that could write there could forge the "before" a
   * later run restores. Both the directory and any directory holding it are refused.
   */
  notes?: readonly string[];
  /** Windows: SystemRoot, ProgramFiles, ProgramFiles(x86), ProgramData, SystemDrive. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** `self`: the directory itself is refused, its subdirectories are allowed. `tree`: both. */
interface Rule {
  path: string;
  scope: 'self' | 'tree';
  why: string;
}

const SYSTEM = 'system state the host runs from';
const SHARED = 'shared by every program and user of the host; use a subdirectory';
const USER_CONFIG = 'programs and settings the host runs at login or on the next command';

function posixRules(host: HandoverHost): Rule[] {
  const tree = (path: string, why = SYSTEM): Rule => ({ path, scope: 'tree', why });
  const self = (path: string, why = SHARED): Rule => ({ path, scope: 'self', why });
  const rules: Rule[] = [
    ...['/etc', '/usr', '/bin', '/sbin', '/boot', '/dev', '/proc', '/sys', '/run', '/snap', '/nix'].map((p) => tree(p)),
    // /var holds both system state (package databases, logs, spools) and places that are fine to
    // work in (/var/tmp/x, /var/www/site): the first are refused with their subtrees.
    self('/var', SYSTEM),
    ...['lib', 'log', 'spool', 'cache', 'run', 'lock', 'mail', 'db', 'backups', 'opt', 'local', 'empty'].map((n) => tree(`/var/${n}`)),
    self('/tmp'),
    self('/var/tmp'),
    ...['/opt', '/srv', '/mnt', '/media', '/home'].map((p) => self(p, 'it holds other installations, file systems or users')),
  ];
  if (host.platform === 'darwin') {
    // macOS resolves /etc, /var and /tmp to /private/...; both spellings are covered.
    rules.push(
      ...['/System', '/Library', '/Applications', '/private/etc', '/cores', '/opt/homebrew'].map((p) => tree(p)),
      ...['/private/var/db', '/private/var/root', '/private/var/log', '/private/var/run', '/private/var/spool'].map((p) => tree(p)),
      self('/private', SYSTEM),
      self('/private/var', SYSTEM),
      self('/private/tmp'),
      self('/private/var/tmp'),
      self('/private/var/folders'),
      self('/Users', 'it holds every user\'s home directory'),
      self('/Volumes', 'it holds other file systems'),
    );
  }
  for (const home of host.homes) {
    rules.push(
      ...['.config', '.ssh', '.gnupg', '.pki', '.local/bin', '.local/share/systemd'].map((n) => tree(posix.join(home, n), USER_CONFIG)),
      ...['.local', '.local/share', '.cache'].map((n) => self(posix.join(home, n), USER_CONFIG)),
    );
    if (host.platform === 'darwin') rules.push(tree(posix.join(home, 'Library'), USER_CONFIG));
  }
  return rules;
}

function windowsRules(host: HandoverHost): Rule[] {
  const env = host.env ?? {};
  const drive = env.SystemDrive ?? 'C:';
  const tree = (path: string, why = SYSTEM): Rule => ({ path, scope: 'tree', why });
  const self = (path: string, why = SHARED): Rule => ({ path, scope: 'self', why });
  const rules: Rule[] = [
    tree(env.SystemRoot ?? `${drive}\\Windows`),
    tree(env.ProgramFiles ?? `${drive}\\Program Files`),
    tree(env['ProgramFiles(x86)'] ?? `${drive}\\Program Files (x86)`),
    tree(env.ProgramData ?? `${drive}\\ProgramData`),
    self(`${drive}\\Users`, 'it holds every user\'s profile'),
  ];
  for (const home of host.homes) {
    rules.push(
      self(win32.join(home, 'AppData'), USER_CONFIG),
      self(win32.join(home, 'AppData', 'Local'), USER_CONFIG),
      tree(win32.join(home, 'AppData', 'Roaming'), USER_CONFIG),
      tree(win32.join(home, 'AppData', 'Local', 'Microsoft'), USER_CONFIG),
      tree(win32.join(home, '.ssh'), USER_CONFIG),
      tree(win32.join(home, '.config'), USER_CONFIG),
    );
  }
  return rules;
}

/**
 * Why `path` (absolute, symlink-resolved) must not be a workspace or write root on `host`, or
 * undefined when it may be. The reason is a phrase that follows the path in a message.
 */
export function hostHandoverReason(path: string, host: HandoverHost): string | undefined {
  const folded = foldedHost(host);
  if (host.platform !== 'win32' && plainlyClear(folded.fold(path), folded)) return undefined;
  return handoverReasonByRules(path, host);
}

/** hostHandoverReason asking every rule in turn (exported for the test that the shortcut agrees). */
export function handoverReasonByRules(path: string, host: HandoverHost): string | undefined {
  const windows = host.platform === 'win32';
  const api = windows ? win32 : posix;
  const { fold, homes, settings, notes, state, nodeDir, pkg, tempDir, rules } = foldedHost(host);
  const target = fold(path);
  const within = (parent: string, child: string) => {
    if (child === parent) return true;
    return child.startsWith(parent.endsWith(api.sep) ? parent : parent + api.sep);
  };
  if (api.parse(target).root === target) return 'is the root of a file system: the command could change any file on it';
  for (const [home, h] of homes) {
    if (target === h) return 'is your home directory: the command could change your shell startup files, git config, SSH keys and login programs';
    if (within(target, h)) return `holds your home directory ${home}: the command could change your shell startup files, git config, SSH keys and login programs`;
  }
  for (const [own, dir] of settings) {
    if (within(target, dir)) return `${target === dir ? 'is' : 'holds'} zero-sandbox's own settings (${own}): the command could turn the sandbox off or grant itself more for the next run`;
    if (within(dir, target)) return `is inside zero-sandbox's own settings (${own}): the command could turn the sandbox off or grant itself more for the next run`;
  }
  for (const [own, dir] of notes) {
    if (within(target, dir) || within(dir, target)) return `${target === dir ? 'is' : within(target, dir) ? 'holds' : 'is inside'} the protected-path notes of zero-sandbox's runs in flight (${own}): the command could forge what another run restores`;
  }
  for (const [own, dir] of state) {
    if (within(dir, target)) return `${target === dir ? 'is' : 'is inside'} zero-sandbox's own state on the host (${own}): the command could forge what the host trusts or writes there on the next run`;
  }
  if (within(nodeDir, target)) return `${target === nodeDir ? 'is' : 'is inside'} the directory of the Node binary (${host.nodeDir}): the command could replace the node the host runs`;
  if (within(pkg, target)) return `${target === pkg ? 'is' : 'is inside'} zero-sandbox's own package directory (${host.packageDir}): the command could rewrite the sandbox the next invocation runs`;
  if (tempDir !== undefined && target === tempDir) return `is the temp directory, ${SHARED}`;
  if (!windows) {
    // The top-level library directories (lib, lib32, lib64, libx32, libexec) hold the host's code.
    const top = `/${api.resolve(path).split('/')[1] ?? ''}`;
    if (/^\/lib(\d*|x32|exec)$/i.test(top) && within(fold(top), target)) return `${target === fold(top) ? 'is' : 'is inside'} ${top}, ${SYSTEM}`;
  }
  for (const { rule, base } of rules) {
    if (target === base) return `is ${rule.path}, ${rule.why}`;
    if (rule.scope === 'tree' && within(base, target)) return `is inside ${rule.path}, ${rule.why}`;
  }
  return undefined;
}

/** A host's paths and rules as hostHandoverReason compares them (folded where case is ignored). */
interface FoldedHost {
  fold: (path: string) => string;
  homes: Array<[string, string]>;
  settings: Array<[string, string]>;
  notes: Array<[string, string]>;
  state: Array<[string, string]>;
  nodeDir: string;
  pkg: string;
  tempDir: string | undefined;
  rules: Array<{ rule: Rule; base: string }>;
  /** The paths a rule refuses with everything inside them (POSIX spelling). */
  trees: ReadonlySet<string>;
  /** The paths a rule refuses themselves only (POSIX spelling). */
  selves: ReadonlySet<string>;
  /** Every path that holds (or is) a home, the settings or the notes (POSIX spelling). */
  holders: ReadonlySet<string>;
}

/** `path` (clean, absolute, POSIX) and each directory above it, up to `/`. */
function* selfAndAbove(path: string): Generator<string> {
  yield path;
  for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) yield path.slice(0, end);
  if (path !== '/') yield '/';
}

/**
 * True when no rule of hostHandoverReason can refuse `target` (folded, POSIX): it is no file
 * system root, holds no home, settings or notes, is no top-level library directory or inside one,
 * is no path a rule refuses by itself, and neither it nor a directory above it is one a rule
 * refuses with its contents. A look-up per component
 * instead of every rule's comparison, for a plan of thousands of roots; anything else takes the
 * rules one by one, which give the reason.
 */
function plainlyClear(target: string, folded: FoldedHost): boolean {
  if (target === '/' || folded.holders.has(target) || folded.selves.has(target)) return false;
  const top = target.slice(0, (target.indexOf('/', 1) + 1 || target.length + 1) - 1);
  if (/^\/lib(\d*|x32|exec)$/i.test(top)) return false;
  for (const dir of selfAndAbove(target)) if (folded.trees.has(dir)) return false;
  return true;
}

// Folded once per host object: a plan checks every one of its write roots (there may be
// thousands) against the same host. The facts are the object's own fields, read when it is
// first asked about.
const foldedHosts = new WeakMap<HandoverHost, FoldedHost>();

function foldedHost(host: HandoverHost): FoldedHost {
  let folded = foldedHosts.get(host);
  if (folded === undefined) {
    const windows = host.platform === 'win32';
    const api = windows ? win32 : posix;
    // Windows and (by default) macOS file systems ignore case: compare folded.
    // A clean absolute path (on a POSIX machine) is its own resolve(): no copy for each of many roots.
    const plain = sep === '/' ? isCleanAbsolute : () => false;
    const fold = windows || host.platform === 'darwin' ? (p: string) => api.resolve(p).toLowerCase() : (p: string) => (plain(p) ? p : api.resolve(p));
    const homes: Array<[string, string]> = host.homes.map((home) => [home, fold(home)]);
    const settings: Array<[string, string]> = (host.settings ?? []).map((own) => [own, fold(own)]);
    const notes: Array<[string, string]> = (host.notes ?? []).map((own) => [own, fold(own)]);
    const state: Array<[string, string]> = (host.state ?? []).map((own) => [own, fold(own)]);
    const nodeDir = fold(host.nodeDir);
    const pkg = fold(host.packageDir);
    const tempDir = host.tempDir === undefined ? undefined : fold(host.tempDir);
    const rules = (windows ? windowsRules(host) : posixRules(host)).map((rule) => ({ rule, base: fold(rule.path) }));
    // Homes are refused as themselves and with what holds them (holders below); the temp directory
    // and the `self` rules as themselves; the rest with everything inside them.
    const trees = new Set([...[...settings, ...notes, ...state].map(([, dir]) => dir), nodeDir, pkg, ...rules.filter(({ rule }) => rule.scope === 'tree').map(({ base }) => base)]);
    const selves = new Set([...(tempDir === undefined ? [] : [tempDir]), ...rules.map(({ base }) => base)]);
    const holders = new Set<string>();
    if (!windows) for (const [, dir] of [...homes, ...settings, ...notes]) for (const above of selfAndAbove(dir)) holders.add(above);
    folded = { fold, homes, settings, notes, state, nodeDir, pkg, tempDir, rules, trees, selves, holders };
    foldedHosts.set(host, folded);
  }
  return folded;
}

function real(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** `path` with its deepest existing ancestor resolved (the settings may not exist yet). */
export function realAsFarAsExists(path: string): string {
  const up = dirname(path);
  try {
    return realpathSync.native(path);
  } catch {
    return up === path ? path : join(realAsFarAsExists(up), basename(path));
  }
}

// The settings paths resolved, by the variables that place them (resolving costs ~0.1 ms; the
// ancestors of the settings lie outside every write root, or the root is refused, so no sandboxed
// command can change what they resolve to).
const settingsMemo = new Map<string, string[]>();

function settingsOf(env: NodeJS.ProcessEnv): string[] {
  const key = [env.XDG_CONFIG_HOME, env.HOME, env.USERPROFILE, env.ZERO_SANDBOX_GRANTS_PATH].join('\0');
  let settings = settingsMemo.get(key);
  if (settings === undefined) {
    settings = [...new Set([userSettingsDir(env), grantsFilePath(env)].map(realAsFarAsExists))];
    if (settingsMemo.size >= 8) settingsMemo.clear();
    settingsMemo.set(key, settings);
  }
  return settings;
}

// zero-sandbox's state directories resolved, by the variables that place them (as the settings).
const stateMemo = new Map<string, string[]>();

function stateOf(env: NodeJS.ProcessEnv, tempDir: string): string[] {
  const key = [env.XDG_CACHE_HOME, env.HOME, env.LOCALAPPDATA, tempDir].join('\0');
  let state = stateMemo.get(key);
  if (state === undefined) {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    state = [join(buildUserCacheDir(env), 'zero'), join(tempDir, `zero-runtime-${uid}`)].map(realAsFarAsExists);
    if (stateMemo.size >= 8) stateMemo.clear();
    stateMemo.set(key, state);
  }
  return state;
}

// The parts of this host's facts that cannot change while the process runs.
let fixed: { nodeDir: string; packageDir: string; tempDir: string; account: string | undefined; notes: string[] } | undefined;

/** This host's facts. The home from the environment is read on every call (a caller may set HOME). */
export function currentHandoverHost(): HandoverHost {
  if (fixed === undefined) {
    let account: string | undefined;
    try {
      account = userInfo().homedir || undefined;
    } catch {
      account = undefined;
    }
    fixed = {
      nodeDir: dirname(real(process.execPath)),
      packageDir: real(PACKAGE_ROOT),
      tempDir: real(tmpdir()),
      account: account === undefined ? undefined : real(account),
      // process.platform: only the Linux backend shares notes between processes.
      notes: process.platform === 'linux' ? [stateNotesBase()].filter((d): d is string => d !== undefined).map(realAsFarAsExists) : [],
    };
  }
  const homes = [...new Set([real(homedir()), ...(fixed.account === undefined ? [] : [fixed.account])])];
  const settings = settingsOf(process.env);
  const state = stateOf(process.env, fixed.tempDir);
  // The same facts give the same host object, so its folded rules (foldedHost, by object) are built
  // once rather than on every check of every run: the homes as resolved for this call, the
  // settings and state as their memos resolved them (the same arrays while their variables are),
  // and on Windows the variables its rules read.
  // process.platform: only the Windows rules read the environment.
  const windowsEnv = process.platform === 'win32' ? WINDOWS_RULE_VARIABLES.map((name) => process.env[name] ?? null) : [];
  const key = JSON.stringify([homes, windowsEnv]);
  if (lastHost !== undefined && lastHost.key === key && lastHost.host.settings === settings && lastHost.host.state === state) return lastHost.host;
  // process.platform: the host's path rules (case, separators) decide what names the same file.
  const host = { platform: process.platform, homes, nodeDir: fixed.nodeDir, packageDir: fixed.packageDir, tempDir: fixed.tempDir, settings, notes: fixed.notes, state, env: process.env };
  lastHost = { key, host };
  return host;
}

/** The variables windowsRules reads. */
const WINDOWS_RULE_VARIABLES = ['SystemDrive', 'SystemRoot', 'ProgramFiles', 'ProgramFiles(x86)', 'ProgramData'];

/** The host currentHandoverHost gave last, with the facts it was made from. */
let lastHost: { key: string; host: HandoverHost } | undefined;

/**
 * Throws SandboxError `invalid_argument` when `resolved` (absolute, symlink-resolved) must not be
 * the workspace or a write root. `option` names where it came from (`workspace`, `allowWrite`,
 * `--allow-write`, a config key) and `given` what the caller wrote, when it differs.
 */
export function assertNotHostHandover(resolved: string, option: string, given: string = resolved, host: HandoverHost = currentHandoverHost()): void {
  const reason = hostHandoverReason(resolved, host);
  if (reason === undefined) return;
  const shown = given === resolved ? resolved : `${given} (${resolved})`;
  throw new SandboxError('invalid_argument', `${option} ${shown} ${reason}`, { path: resolved });
}

/** Path equality as the platform's file systems see it (macOS and Windows ignore case by default). */
// process.platform default: case sensitivity is a property of the host's file systems.
export function samePath(a: string, b: string, platform: string = process.platform): boolean {
  return platform === 'darwin' || platform === 'win32' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * Throws SandboxError `invalid_argument` when a write root given as `given` (`absolute` once made
 * absolute) reaches `resolved` through a symlink. A link inside a write root may have been planted
 * by an earlier sandboxed command (`build -> /home/user`): writes go where the caller points, never
 * where such a link does, so the caller must name the target itself.
 */
export function assertNoSymlinkHop(given: string, absolute: string, resolved: string, option: string): void {
  if (samePath(absolute, resolved)) return;
  throw new SandboxError(
    'invalid_argument',
    `${option} ${given} reaches ${resolved} through a symlink (a link inside a write root may have been planted by an earlier sandboxed command); pass ${resolved} itself to allow writes there`,
    { path: absolute },
  );
}
