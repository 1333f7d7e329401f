// SPDX-License-Identifier: MIT
// Cross-process leases on managed runtime roots without native code: a short-lived mutex (an
// atomically created symlink) serialises taking leases and cleanup; each process holding a root
// leaves one lease entry named after its pid and start time, which lapses when the process dies.
// A worker thread holds the mutex and its leases in its own name (its thread id and start time
// added), so that a worker terminated while holding either leaves nothing its process still seems
// to hold: termination skips every finally block, and the process lives on.
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

import { SandboxError } from '../errors.js';

/** Who holds a lease: a process, identified across pid reuse by its start time. */
export interface LeaseOwner {
  /** Process id. */
  pid: number;
  /** Start time of the process (field 22 of /proc/<pid>/stat), or '' where /proc is missing. */
  start: string;
  /** A worker thread's kernel thread id (absent for the main thread, and off Linux). */
  tid?: number;
  /** The worker thread's start time (field 22 of /proc/<pid>/task/<tid>/stat). */
  tidStart?: string;
}

/** Reads a process's start time, or undefined when it no longer exists. */
export function processStart(pid: number): string | undefined {
  try {
    return startField(`/proc/${pid}/stat`);
  } catch {
    // process.platform: only Linux has /proc; elsewhere a live pid is all that can be told.
    if (process.platform === 'linux') return undefined;
    try {
      process.kill(pid, 0);
      return '';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM' ? '' : undefined;
    }
  }
}

/** Field 22 (start time) of a /proc stat file; throws when the file is gone. */
function startField(path: string): string {
  const stat = readFileSync(path, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: split after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? '';
}

/** Reads a thread's start time, or undefined when that thread of `pid` no longer exists. */
export function threadStart(pid: number, tid: number): string | undefined {
  try {
    return startField(`/proc/${pid}/task/${tid}/stat`);
  } catch {
    return undefined;
  }
}

// This process's start time does not change while it runs: read once per pid.
let self: Readonly<LeaseOwner> | undefined;
// This thread as a holder: module state is per thread (each worker loads its own copy).
let holder: Readonly<LeaseOwner> | undefined;

/** This process as a lease owner. */
export function currentOwner(): LeaseOwner {
  if (self?.pid === process.pid) return { ...self };
  const start = processStart(process.pid);
  // A failed read is not kept: the next call reads again.
  if (start !== undefined && start !== '') self = Object.freeze({ pid: process.pid, start });
  return { pid: process.pid, start: start ?? '' };
}

/**
 * This thread as the holder of the mutex and of leases: the process on its main thread (the
 * names every earlier version wrote), the process and the thread in a worker on Linux. Elsewhere a
 * worker holds in its process's name, and a worker terminated while holding the mutex leaves it
 * held until the process exits (see the README).
 */
export function currentHolder(): LeaseOwner {
  if (holder?.pid === process.pid) return { ...holder };
  const owner = currentOwner();
  if (process.platform !== 'linux' || owner.start === '') return owner;
  let tid: number;
  try {
    // "<pid>/task/<tid>": the kernel's id of the calling thread, the pid itself on the main thread
    // (no node:worker_threads, whose loading would cost the CLI's start a few milliseconds).
    tid = Number(readlinkSync('/proc/thread-self').split('/')[2]);
  } catch {
    return owner;
  }
  if (!Number.isInteger(tid)) return owner;
  if (tid === owner.pid) {
    holder = Object.freeze(owner);
    return { ...holder };
  }
  const tidStart = threadStart(owner.pid, tid);
  if (tidStart === undefined) return owner;
  holder = Object.freeze({ ...owner, tid, tidStart });
  return { ...holder };
}

/** The file name a lease or mutex of this owner carries. */
export function buildOwnerName(owner: LeaseOwner): string {
  const name = `${owner.pid}-${owner.start}`;
  return owner.tid === undefined ? name : `${name}-${owner.tid}-${owner.tidStart ?? ''}`;
}

/** Parses an owner name back; undefined for names this module never writes. */
export function parseOwnerName(name: string): LeaseOwner | undefined {
  const match = /^(\d+)-(\d*)(?:-(\d+)-(\d+))?$/.exec(name);
  if (match === null) return undefined;
  const owner: LeaseOwner = { pid: Number(match[1]), start: match[2] as string };
  if (match[3] !== undefined) {
    owner.tid = Number(match[3]);
    owner.tidStart = match[4] as string;
  }
  return owner;
}

/**
 * True while the owner is still running: the same pid with the same start time and, for a worker
 * thread's name, that thread of it with its start time.
 */
export function ownerAlive(
  owner: LeaseOwner,
  startOf: (pid: number) => string | undefined = processStart,
  threadStartOf: (pid: number, tid: number) => string | undefined = threadStart,
): boolean {
  const start = startOf(owner.pid);
  if (start === undefined || (owner.start !== '' && start !== '' && start !== owner.start)) return false;
  if (owner.tid === undefined) return true;
  return threadStartOf(owner.pid, owner.tid) === owner.tidStart;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` while holding the mutex `<dir>/.mutex`: a symlink whose target names the owner, made
 * and removed in one system call each (`dir` is created 0700 when missing). A mutex left by a dead process is broken; one held by a
 * live process longer than `timeoutMs` is an error naming the file.
 */
export function withMutex<T>(dir: string, fn: () => T, timeoutMs = 10_000): T {
  const path = join(dir, '.mutex');
  const me = buildOwnerName(currentHolder());
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      symlinkSync(me, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && attempt === 0) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        continue;
      }
      if (code !== 'EEXIST') {
        throw new SandboxError('spawn_failed', `cannot create the managed runtime lock ${path}: ${(error as Error).message}`, { path, cause: error });
      }
      breakIfStale(path);
      if (Date.now() > deadline) {
        throw new SandboxError('spawn_failed', `the managed runtime lock ${path} is held by another live process; remove it if that process is stuck`, { path });
      }
      sleepSync(Math.min(2 + attempt, 25));
      continue;
    }
    try {
      return fn();
    } finally {
      unlinkIfThere(path);
    }
  }
}

/**
 * Removes a file or symlink, nothing there being fine: what rmSync with `force` does for one,
 * without the recursive remover rmSync loads on its first call (a builtin compiled then, on
 * every start of the CLI).
 */
function unlinkIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Removes a mutex whose owner died (or that is not a mutex this module makes and is over a minute old). */
function breakIfStale(path: string): void {
  let owner: string;
  try {
    owner = readlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') return; // released meanwhile
    owner = '';
  }
  const parsed = parseOwnerName(owner);
  let stale: boolean;
  if (parsed !== undefined) stale = !ownerAlive(parsed);
  else {
    try {
      stale = Date.now() - lstatSync(path).mtimeMs > 60_000;
    } catch {
      return;
    }
  }
  if (!stale) return;
  // Re-read just before removing, so a mutex taken over by a new owner in between survives.
  try {
    if (parsed === undefined || readlinkSync(path) === owner) unlinkSync(path);
  } catch {
    // someone else broke it first
  }
}

/** The lease directory of a root: `<root>.leases`, a sibling outside every write root. */
export function leaseDirOf(root: string): string {
  return `${root}.leases`;
}

/**
 * Writes this thread's lease on `root` (call inside withMutex): a symlink named after the owner
 * whose target is `note` (the workspace, for whoever inspects the directory).
 */
export function writeLease(root: string, note = '', owner: LeaseOwner = currentHolder()): void {
  const dir = leaseDirOf(root);
  const path = join(dir, buildOwnerName(owner));
  const make = () => {
    try {
      symlinkSync(note === '' ? '.' : note, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  };
  try {
    make();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    make();
  }
}

/** Removes this thread's lease file for `root`. */
export function removeLease(root: string, owner: LeaseOwner = currentHolder()): void {
  unlinkIfThere(join(leaseDirOf(root), buildOwnerName(owner)));
}

/** The live leases on `root`; lease files of dead processes are deleted on the way. */
export function liveLeases(root: string, startOf: (pid: number) => string | undefined = processStart): LeaseOwner[] {
  const dir = leaseDirOf(root);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const live: LeaseOwner[] = [];
  for (const name of names) {
    const owner = parseOwnerName(name);
    if (owner !== undefined && ownerAlive(owner, startOf)) live.push(owner);
    else rmSync(join(dir, name), { force: true, recursive: true });
  }
  return live;
}
