// SPDX-License-Identifier: MIT
// The protected-path notes of runs in flight, shared between processes. Two processes running
// sandboxes of one workspace (two `zero-sandbox run` invocations, two programs calling
// runSandboxed) must agree on what the protected files held before any of their overlapping runs
// started: a run that noted the config while another process's command had changed it would later
// "restore" that change. So every run publishes its notes (as it takes them, see protected.ts) in
// a directory of this user's that no sandbox can reach, and a run that starts takes the notes of
// every other process's run of overlapping write roots that was in flight while it noted.
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
//
// No lock is held while a run notes or checks (either may walk a large workspace): the order of
// single-call file operations is enough. Names, `<id>` being `<pid>-<start>.<realm>.<n>`:
//   n.<t>.<id>  a run is noting since monotonic time t (ns): made before it looks at anything, and
//               written with its notes once it has them;
//   r.<id>      the notes of a run in flight, published (renamed from n.) before its sandbox starts;
//   e.<t>.<id>  the notes of a run whose check ended at t, renamed from r.; removed by the next
//               run that ends its noting once no n. older than t is left.
// A run that notes takes, at the end of its noting, the r. of every other live run and every e.
// that ended after its own n. was made: a run whose check ended before then could not have
// changed anything this run saw.
// Stale entries (owner gone: pid plus start time, as the runtime leases) are never taken: a
// crashed run's notes would otherwise put an old config back over one changed since.
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

import { SandboxError } from '../errors.js';
import { isWithin } from '../path-within.js';
import { removeEntry, toBytes } from './beneath.js';
import type { OwnEntry } from './own-entries.js';
import { buildOwnerName, currentOwner, ownerAlive, parseOwnerName } from './runtime-lease.js';
import { buildUserCacheDir } from './runtime-state.js';

/** One run's notes as another run takes them (byte-string paths, as in GitGuard). */
export interface SharedNotes {
  /** When the run noted (monotonic ns): older notes are taken first. */
  since: bigint;
  /** Its write roots that have protected names (plan paths). */
  roots: string[];
  /** Every write root of the run (byte strings). */
  gitRoots: string[];
  configs: Map<string, { bytes: Buffer | undefined; state: string }>;
  watched: Map<string, string>;
  ownEntries: OwnEntry[];
}

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

// Who this module instance is: the process, and a token telling worker threads (each with its own
// in-process notes) apart.
let self: string | undefined;
let counter = 0;

function selfId(): string {
  self ??= `${buildOwnerName(currentOwner())}.${Math.floor(Math.random() * 0x1_0000_0000).toString(16)}`;
  return self;
}

function refuse(why: string, path: string, cause?: unknown): SandboxError {
  return new SandboxError('protected_path', `refusing to run: the protected-path notes shared with other processes cannot be used (${why}); remove ${path} if it is not zero-sandbox's`, { layer: 'git-guard', path, ...(cause === undefined ? {} : { cause }) });
}

// When the directory was last found to be ours (monotonic ns): looked at again after a second.
let checkedAt: bigint | undefined;
let checkedDir: string | undefined;

/**
 * Creates the directory when missing (with its missing parents, 0700, when `parents`) and insists
 * that it is a private directory of ours.
 */
function ensureDir(dir: string, parents: boolean): void {
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

/** What a name in the directory is, with its run id and time. */
interface Entry {
  kind: 'n' | 'r' | 'e';
  id: string;
  /** Monotonic ns for `n` and `e`. */
  at: bigint;
  /** The owner's pid-start. */
  owner: string;
}

function parseEntry(name: string): Entry | undefined {
  const match = /^(?:([ne])\.(\d+)|(r))\.((\d+-\d*)\.[0-9a-f]+\.\d+)$/.exec(name);
  if (match === null) return undefined;
  const kind = (match[1] ?? match[3]) as Entry['kind'];
  return { kind, id: match[4] as string, at: match[2] === undefined ? 0n : BigInt(match[2]), owner: match[5] as string };
}

function isAlive(owner: string): boolean {
  const parsed = parseOwnerName(owner);
  return parsed !== undefined && ownerAlive(parsed);
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    throw refuse((error as Error).message, dir, error);
  }
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or left for the next cleanup
  }
}

/** Notes by file name: a published file never changes, so each is parsed once. */
const parsed = new Map<string, SharedNotes>();

function readNotes(dir: string, name: string): SharedNotes | undefined {
  const known = parsed.get(name);
  if (known !== undefined) return known;
  let text: string;
  try {
    text = readFileSync(join(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refuse((error as Error).message, join(dir, name), error);
  }
  const notes = decode(text);
  if (notes === undefined) throw refuse('a record it cannot read', join(dir, name));
  if (parsed.size >= 256) parsed.delete(parsed.keys().next().value as string);
  parsed.set(name, notes);
  return notes;
}

/** A published run's notes: `end()` once its check has run (never throws). */
export interface PublishedNotes {
  end(): void;
}

/** A run's noting, from before it looks at anything until its own notes are published. */
export interface NotingWindow {
  /** When it opened (monotonic ns): the run's notes are as old as this. */
  since: bigint;
  /**
   * The notes of the other processes' runs of write roots overlapping `roots` that were in flight
   * during the window, oldest first. Throws `protected_path` when they cannot be read (the run
   * must not start).
   */
  take(roots: readonly string[]): SharedNotes[];
  /**
   * Publishes this run's notes (the marker, written, renamed in one step) and ends the window.
   * Call before the sandbox starts. Throws `protected_path` when they cannot be written.
   */
  publish(notes: SharedNotes): PublishedNotes;
  /** Ends the window without publishing (the run does not start). Never throws. */
  abandon(): void;
}

/** Opens a window: call before noting anything. Throws `protected_path` when the directory is unusable. */
export function openNotingWindow(given?: string): NotingWindow {
  const dir = given ?? runNotesDir();
  const parents = given === undefined && dir !== shmNotesDir();
  ensureDir(dir, parents);
  const start = process.hrtime.bigint();
  const id = `${selfId()}.${counter++}`;
  const marker = join(dir, `n.${start}.${id}`);
  // A file, written once the notes are known: the marker becomes the published notes by a rename.
  let fd: number | undefined;
  const create = () => openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    fd = create();
  } catch (error) {
    checkedAt = undefined; // removed meanwhile (the user's last logout may empty /dev/shm): made again
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw refuse((error as Error).message, dir, error);
    ensureDir(dir, parents);
    try {
      fd = create();
    } catch (again) {
      throw refuse((again as Error).message, dir, again);
    }
  }
  const abandon = (): void => {
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // closed either way
    }
    fd = undefined;
    tryUnlink(marker);
  };
  return {
    since: start,
    abandon,
    take: (roots) => takeNotes(dir, list(dir), start, `n.${start}.${id}`, roots),
    publish: (notes) => {
      const live = join(dir, `r.${id}`);
      try {
        writeFileSync(fd as number, encode(notes), 'utf8'); // to the end, past short writes
        closeSync(fd as number);
        fd = undefined;
        renameSync(marker, live);
      } catch (error) {
        abandon();
        tryUnlink(marker);
        throw refuse((error as Error).message, dir, error);
      }
      let ended = false;
      return {
        end: () => {
          if (ended) return;
          ended = true;
          // A run noting now may have seen what this run's command left: it takes these notes.
          // They are removed once no run that was noting before this moment still is (takeNotes).
          try {
            renameSync(live, join(dir, `e.${process.hrtime.bigint()}.${id}`));
          } catch {
            tryUnlink(live);
          }
        },
      };
    },
  };
}

function takeNotes(dir: string, names: readonly string[], start: bigint, marker: string, roots: readonly string[]): SharedNotes[] {
  const me = selfId();
  const taken: SharedNotes[] = [];
  const liveMarkers: bigint[] = [];
  const tombstones: Array<{ name: string; at: bigint }> = [];
  for (const name of names) {
    const entry = parseEntry(name);
    if (entry === undefined || name === marker) continue;
    const mine = entry.id.startsWith(`${me}.`);
    if (entry.kind === 'e') tombstones.push({ name, at: entry.at });
    if (entry.kind === 'n' || entry.kind === 'r') {
      if (!mine && !isAlive(entry.owner)) {
        // Left by a run whose process died: never taken, removed.
        tryUnlink(join(dir, name));
        continue;
      }
      if (entry.kind === 'n') liveMarkers.push(entry.at);
    }
    // This realm's own runs are its in-process notes (protected.ts).
    if (mine || (entry.kind !== 'r' && !(entry.kind === 'e' && entry.at >= start))) continue;
    let notes = readNotes(dir, name);
    if (notes === undefined && entry.kind === 'r') {
      // It ended meanwhile: its notes are under an e. name, kept while our marker is there.
      const moved = list(dir).find((other) => other.startsWith('e.') && other.endsWith(`.${entry.id}`));
      notes = moved === undefined ? undefined : readNotes(dir, moved);
    }
    if (notes !== undefined && notes.roots.some((a) => roots.some((b) => isWithin(a, b) || isWithin(b, a)))) taken.push(notes);
  }
  // Ended runs' notes are kept while a run noting since before they ended may need them: one that
  // ended before this window opened and before every marker listed is needed by no run (a marker
  // this listing missed was made after it began, so that run noted after that check ended).
  const oldest = liveMarkers.reduce((a, b) => (b < a ? b : a), start);
  for (const t of tombstones) if (t.at < oldest) tryUnlink(join(dir, t.name));
  return taken.sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
}

/** The notes as a file: JSON in UTF-8 (byte-string paths round-trip as their code points), contents in base64. */
function encode(notes: SharedNotes): string {
  return JSON.stringify({
    v: 1,
    since: notes.since.toString(),
    roots: notes.roots,
    gitRoots: notes.gitRoots,
    configs: [...notes.configs].map(([path, c]) => [path, c.bytes === undefined ? null : c.bytes.toString('base64'), c.state]),
    watched: [...notes.watched],
    ownEntries: notes.ownEntries.map((e) => ({ ...e, content: e.content?.toString('base64') })),
  });
}

function decode(text: string): SharedNotes | undefined {
  try {
    const raw = JSON.parse(text) as {
      v: number;
      since: string;
      roots: string[];
      gitRoots: string[];
      configs: Array<[string, string | null, string]>;
      watched: Array<[string, string]>;
      ownEntries: Array<Omit<OwnEntry, 'content'> & { content?: string }>;
    };
    if (raw.v !== 1) return undefined;
    return {
      since: BigInt(raw.since),
      roots: raw.roots,
      gitRoots: raw.gitRoots,
      configs: new Map(raw.configs.map(([path, bytes, state]) => [path, { bytes: bytes === null ? undefined : Buffer.from(bytes, 'base64'), state }])),
      watched: new Map(raw.watched),
      ownEntries: raw.ownEntries.map(({ content, ...e }) => (content === undefined ? e : { ...e, content: Buffer.from(content, 'base64') })),
    };
  } catch {
    return undefined;
  }
}
