// SPDX-License-Identifier: MIT
// Where the protected-path notes shared between processes live (run-notes.ts says what they are).
//
// The directory is /dev/shm/zero-sandbox-<uid>: /dev is never a write root (host-handover.ts) and
// every sandbox has a private /dev/shm, so no command can read or write it; it depends on nothing
// in the environment (two processes with different HOME or XDG_CACHE_HOME still meet there); and
// a reboot, which ends every run, empties it. It must be a directory of ours that only we can use.
// On a machine without a usable /dev/shm (none, or not writable to us) it is
// <account home>/.local/state/zero-sandbox/run-notes-<boot id> instead: the home of the account
// database, not $HOME or $XDG_RUNTIME_DIR (callers with another environment must still meet, and
// /run/user/<uid> exists only while the user has a session), refused as or inside a write root
// (host-handover.ts), and per boot (a reboot ends every run; older boots' directories are removed).
// Every caller of the user picks the same one: /dev/shm when it is there and writable, else the
// fallback. Two callers that see different /dev/shm (different mount namespaces, such as a
// container sharing the workspace) do not meet and do not coordinate; neither do callers in
// different pid namespaces, whose owners cannot be checked (documented in the README).
// macOS and Windows have no such place: there it is `<user cache dir>/zero/run-notes`, inside
// zero-sandbox's own state, which is never a write root (host-handover.ts) and which neither a
// seatbelt profile nor an AppContainer can write; two processes meet there when they agree on the
// user cache dir (HOME, or LOCALAPPDATA on Windows).
import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

import { SandboxError } from '../errors.js';
import { removeEntry, toBytes } from './beneath.js';
import { buildUserCacheDir } from './runtime-state.js';

function uidOf(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0;
}

/** The first choice (see the header). */
export function shmNotesDir(): string {
  return `/dev/shm/zero-sandbox-${uidOf()}`;
}

/**
 * Where the fallback's per-boot directories live: `<account home>/.local/state/zero-sandbox`, or
 * undefined when the account database has no home for us.
 */
export function stateNotesBase(): string | undefined {
  // The account database's home does not change while the process runs: read it once.
  if (accountBase === undefined) {
    let path: string | undefined;
    try {
      const home = userInfo().homedir;
      path = home === '' || !home.startsWith('/') ? undefined : join(home, '.local', 'state', 'zero-sandbox');
    } catch {
      path = undefined;
    }
    accountBase = { path };
  }
  return accountBase.path;
}
let accountBase: { path: string | undefined } | undefined;

const BOOT_ID = /^[0-9a-f-]{8,64}$/;

/** The fallback directory of this boot, or why there is none. */
export function stateNotesDir(): { dir: string } | { why: string; path: string } {
  const base = stateNotesBase();
  if (base === undefined) return { why: 'the account database has no home directory for this user', path: '~/.local/state/zero-sandbox' };
  let boot: string;
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch (error) {
    return { why: `the boot id cannot be read: ${(error as Error).message}`, path: base };
  }
  if (!BOOT_ID.test(boot)) return { why: 'the boot id is malformed', path: base };
  return { dir: join(base, `run-notes-${boot}`) };
}

/** Errors of the first choice that mean "no /dev/shm for us here" (not a passing fault such as ENOSPC). */
const NO_SHM = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS']);

/**
 * The places of shared notes a sandbox could read (absent ones too): they hold copies of other
 * workspaces' protected configs, so every run denies reading them. Linux: the fallback in the
 * account's home (the /dev/shm place is private to each sandbox); macOS: the one in the user cache
 * dir. Windows: none (an AppContainer cannot read the user's profile).
 */
export function notesPlacesToHide(): string[] {
  // process.platform: where the notes live and what a sandbox there can read differ per OS.
  if (process.platform === 'linux') return [stateNotesBase()].filter((dir): dir is string => dir !== undefined);
  if (process.platform === 'darwin') return [ownStateNotesDir()];
  return [];
}

/** The place off Linux: inside zero-sandbox's own state in the user cache dir (see the header). */
function ownStateNotesDir(): string {
  return join(buildUserCacheDir(process.env), 'zero', 'run-notes');
}

// The directory chosen, remembered for a second (a choice is looked at again after that).
let chosen: { dir: string; at: bigint } | undefined;

/**
 * The shared directory (see the header), made when missing. Throws `protected_path` naming every
 * place tried and why when none can be used: without coordination no run may start.
 */
export function runNotesDir(): string {
  const now = process.hrtime.bigint();
  if (chosen !== undefined && now - chosen.at < 1_000_000_000n) return chosen.dir;
  // process.platform: only Linux has a per-boot directory that every sandbox sees privately.
  if (process.platform !== 'linux') {
    const dir = ownStateNotesDir();
    try {
      mkdirSync(join(dir, '..'), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw refuse((error as Error).message, dir, error);
    }
    ensureDir(dir, false);
    chosen = { dir, at: now };
    return dir;
  }
  const dir = chooseNotesDir(shmNotesDir(), stateNotesDir());
  chosen = { dir, at: now };
  return dir;
}

/** The choice of runNotesDir between `shm` and the fallback `state` (exported for tests). */
export function chooseNotesDir(shm: string, state: { dir: string } | { why: string; path: string }): string {
  let shmWhy: string;
  try {
    ensureDir(shm, false);
    return shm;
  } catch (error) {
    const code = ((error as SandboxError).cause as NodeJS.ErrnoException | undefined)?.code;
    // Ours exists but is unusable, or a passing fault: falling back would split the user's runs.
    if (!(error instanceof SandboxError) || code === undefined || !NO_SHM.has(code) || shmExists(shm)) throw error;
    shmWhy = ((error as SandboxError).cause as Error).message;
  }
  let stateWhy: string;
  let statePath: string;
  if ('dir' in state) {
    try {
      ensureDir(state.dir, true);
      return state.dir;
    } catch (error) {
      stateWhy = error instanceof SandboxError && error.cause instanceof Error ? error.cause.message : (error as Error).message;
      statePath = state.dir;
    }
  } else {
    stateWhy = state.why;
    statePath = state.path;
  }
  throw new SandboxError('protected_path', `refusing to run: the protected-path notes shared with other processes have no usable directory: ${shm}: ${shmWhy}; ${statePath}: ${stateWhy}`, { layer: 'git-guard', path: shm });
}

/** Whether `dir` is there for us to see (a /dev/shm we cannot search holds nothing of ours). */
function shmExists(dir: string): boolean {
  try {
    return lstatSync(dir, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Removes the fallback directories of earlier boots (their runs all ended). Never throws. */
function removeEarlierBoots(dir: string): void {
  const base = join(dir, '..');
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith('run-notes-') && join(base, name) !== dir) removeEntry(toBytes(join(base, name)));
}
export function refuse(why: string, path: string, cause?: unknown): SandboxError {
  return new SandboxError('protected_path', `refusing to run: the protected-path notes shared with other processes cannot be used (${why}); remove ${path} if it is not zero-sandbox's`, { layer: 'git-guard', path, ...(cause === undefined ? {} : { cause }) });
}

// When the directory was last found to be ours (monotonic ns): looked at again after a second.
let checkedAt: bigint | undefined;
let checkedDir: string | undefined;

/** The directory is to be looked at again (it was found removed). */
export function forgetCheckedDir(): void {
  checkedAt = undefined;
}

/**
 * Creates the directory when missing (with its missing parents, 0700, when `parents`) and insists
 * that it is a private directory of ours.
 */
export function ensureDir(dir: string, parents: boolean): void {
  const now = process.hrtime.bigint();
  if (checkedDir === dir && checkedAt !== undefined && now - checkedAt < 1_000_000_000n) return;
  const look = () => {
    try {
      return lstatSync(dir, { throwIfNoEntry: false });
    } catch (error) {
      throw refuse((error as Error).message, dir, error);
    }
  };
  let st = look();
  if (st === undefined) {
    let made = false;
    try {
      if (parents) mkdirSync(join(dir, '..'), { recursive: true, mode: 0o700 });
      mkdirSync(dir, { mode: 0o700 });
      made = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw refuse((error as Error).message, dir, error);
    }
    st = look();
    if (st === undefined) throw refuse('it was removed while being made', dir);
    if (made && parents) removeEarlierBoots(dir);
  }
  // Windows has no owner uid or mode bits here: the directory under the user's LOCALAPPDATA has
  // the profile's ACL (the user, SYSTEM, Administrators; no AppContainer).
  const posix = typeof process.getuid === 'function';
  const uid = posix ? (process.getuid as () => number)() : st.uid;
  if (!st.isDirectory() || (posix && (st.uid !== uid || (st.mode & 0o077) !== 0))) throw refuse(`it must be a directory owned by uid ${uid} that only its owner can use`, dir);
  checkedDir = dir;
  checkedAt = now;
}
