// SPDX-License-Identifier: MIT
// A per-run pids cgroup: the process limit for a root caller, whom the kernel exempts from
// RLIMIT_NPROC. Found from /proc/self/cgroup and the mount table (cgroup v1 `pids`, or a v2
// cgroup whose subtree already delegates `pids`); created before the run, removed after it.
import { accessSync, closeSync, constants, existsSync, mkdir, mkdirSync, openSync, readFileSync, readdirSync, rmdir, rmdirSync, writeFile, writeFileSync } from 'node:fs';
import { constants as osConstants, release } from 'node:os';
import { join } from 'node:path';

import { SandboxError } from '../errors.js';
import { loadNative } from '../native/load.js';
import type { NativeBinding } from '../native/types.js';
import { currentHolder, threadStart } from './runtime-lease.js';

/** The directory under which this process may create a pids cgroup, or undefined. */
export function findPidsCgroupParent(
  cgroupFile = '/proc/self/cgroup',
  mountinfoFile = '/proc/self/mountinfo',
): string | undefined {
  let cgroups: string;
  let mounts: string;
  try {
    cgroups = readFileSync(cgroupFile, 'utf8');
    mounts = readFileSync(mountinfoFile, 'utf8');
  } catch {
    return undefined;
  }
  const mountOf = (match: (fsType: string, superOptions: string) => boolean): string | undefined => {
    for (const line of mounts.split('\n')) {
      const [left, right] = line.split(' - ');
      if (left === undefined || right === undefined) continue;
      const [fsType, , superOptions] = right.split(' ');
      if (fsType !== undefined && match(fsType, superOptions ?? '')) return left.split(' ')[4];
    }
    return undefined;
  };
  for (const line of cgroups.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(',').includes('pids')) {
      const mount = mountOf((type, options) => type === 'cgroup' && options.split(',').includes('pids'));
      if (mount !== undefined) return join(mount, path);
    }
  }
  const unified = cgroups.split('\n').find((line) => line.startsWith('0::'));
  const mount = mountOf((type) => type === 'cgroup2');
  if (unified !== undefined && mount !== undefined) {
    const dir = join(mount, unified.slice(3));
    try {
      if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

// The kernel refuses a pid_max below this (its reserved low pids plus one).
const PID_MAX_MIN = 301;

/** True from Linux 6.14 on, where kernel.pid_max belongs to each PID namespace (before, to the host). */
export function pidMaxIsPerNamespace(kernelRelease = release()): boolean {
  const match = /^(\d+)\.(\d+)/.exec(kernelRelease);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 6 || (major === 6 && minor >= 14);
}

/**
 * The pid_max that lets the sandbox's own PID namespace hold at most `max` processes (its init
 * included), or undefined when the kernel cannot: pid_max is the host's before Linux 6.14, and
 * the kernel refuses values under 301. The process limit of a root caller without a pids cgroup:
 * it binds host root too (RLIMIT_NPROC does not). Once pid numbers wrap, the kernel skips the
 * first 300, so a long run may hold up to 300 fewer at once than `max`.
 */
export function pidNamespaceMax(max: number, kernelRelease = release()): number | undefined {
  if (!pidMaxIsPerNamespace(kernelRelease) || max + 1 < PID_MAX_MIN) return undefined;
  return max + 1;
}

/**
 * What would enforce a process cap of `max` for this caller: RLIMIT_NPROC for an ordinary user
 * (counted in the sandbox's own user namespace), for root a pids cgroup where a writable pids
 * hierarchy exists, else the PID namespace's pid_max, else nothing ('none': a run reports
 * limitsNotEnforced).
 */
export function processCapMechanism(max: number, isRoot = process.getuid?.() === 0): 'rlimit' | 'pids-cgroup' | 'pid-max' | 'none' {
  if (!isRoot) return 'rlimit';
  if (pidsCgroupUsable()) return 'pids-cgroup';
  return pidNamespaceMax(max) === undefined ? 'none' : 'pid-max';
}

export interface PidsLimit {
  /** cgroup.procs of the cgroup, opened for the sandbox's first process to write "0" to. */
  fd: number;
  dir: string;
  /** Closes our descriptor; call once the native spawn has returned. */
  closeFd(): void;
  /** True when a fork was refused for the cap since the cgroup was handed out. */
  hit(): boolean;
  /** Hands the cgroup back once every process in it is gone (kept for the next run, or removed). */
  remove(): void;
}

let counter = 0;

// A cgroup's name: `zero-sandbox-<pid>-<n>` made by a process's main thread, and
// `zero-sandbox-<pid>-t<tid>.<start>-<n>` by a worker thread of it, with the thread's start time
// (each thread counts its own n: names of one process's threads must not meet, and a worker
// terminated with cgroups kept is told dead by its thread, even once a new thread has its id).
// Earlier versions neither make nor remove the second form.
const CGROUP_NAME = /^zero-sandbox-(\d+)-(?:t(\d+)\.(\d+)-)?\d+$/;

let ownPrefix: string | undefined;

/** This thread's name prefix (see CGROUP_NAME). */
function namePrefix(): string {
  if (ownPrefix === undefined) {
    const { tid, tidStart } = currentHolder();
    ownPrefix = `zero-sandbox-${process.pid}-${tid === undefined ? '' : `t${tid}.${tidStart ?? ''}-`}`;
  }
  return ownPrefix;
}

/** Whether the process or thread a cgroup's name names is gone. */
function ownerGone(pid: number, tid: string | undefined, tidStart: string | undefined): boolean {
  if (pid === process.pid) return tid !== undefined && threadStart(pid, Number(tid)) !== tidStart;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** Empty cgroups left by processes and worker threads that died before removing them (best effort). */
function removeOrphans(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = CGROUP_NAME.exec(name);
    if (match === null || !ownerGone(Number(match[1]), match[2], match[3])) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // still in use, or not ours to remove
    }
  }
}

let parentMemo: { value: string | undefined } | undefined;

/** findPidsCgroupParent() for this process, looked up once (our cgroup does not move). */
export function pidsCgroupParent(): string | undefined {
  parentMemo ??= { value: findPidsCgroupParent() };
  return parentMemo.value;
}

let usableMemo: boolean | undefined;

/**
 * Whether this process can make pids cgroups: a pids hierarchy we may write to, looked up once (our
 * cgroup does not move). Creating one can still fail later; the caller then falls back.
 */
export function pidsCgroupUsable(): boolean {
  if (usableMemo === undefined) {
    const parent = pidsCgroupParent();
    usableMemo = false;
    if (parent !== undefined) {
      try {
        accessSync(join(parent, 'cgroup.procs'), constants.W_OK);
        usableMemo = true;
      } catch {
        // read-only or gone
      }
    }
  }
  return usableMemo;
}

/** How many forks the cap refused so far ("max N" in pids.events); 0 when unreadable. */
function refusedForks(dir: string): number {
  try {
    return Number(/^max (\d+)/m.exec(readFileSync(join(dir, 'pids.events'), 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// Emptied cgroups kept for the next run of the same cap: creating and removing one costs more
// than a sandbox start on a loaded machine. Bounded; removed when the process exits. Those made
// ahead for starts that wait for one (pidsLimitMade) are kept here too, over the bound: each has a
// start waiting for it.
const IDLE_LIMIT = 8;
/**
 * A kept cgroup: its refused-fork count when it was kept, and `empty` once pids.current read 0. An
 * emptied cgroup nobody uses stays empty (a task enters one only by a write to its cgroup.procs,
 * which only a run that takes it makes, or by a fork of a member, and it has none), so that answer
 * is not asked of the kernel again.
 */
interface IdleCgroup {
  dir: string;
  refused: number;
  empty?: boolean;
}
const idle = new Map<string, IdleCgroup[]>();
let exitHook = false;

function removeIdleOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const dirs of idle.values()) {
      for (const { dir } of dirs) {
        try {
          rmdirSync(dir);
        } catch {
          // still busy: the next process removes it as an orphan
        }
      }
    }
  });
}

function isEmpty(dir: string): boolean {
  try {
    return readFileSync(join(dir, 'pids.current'), 'utf8').trim() === '0';
  } catch {
    return false;
  }
}

/** Whether a kept cgroup is empty now (asked of the kernel until it first is). */
function idleEmpty(entry: IdleCgroup): boolean {
  if (entry.empty !== true) entry.empty = isEmpty(entry.dir);
  return entry.empty;
}

/** An emptied cgroup of this cap kept from an earlier run (with its refused-fork count), or undefined. */
function takeIdle(key: string): IdleCgroup | undefined {
  const dirs = idle.get(key);
  if (dirs === undefined) return undefined;
  for (let i = 0; i < dirs.length; i++) {
    const entry = dirs[i] as IdleCgroup;
    if (idleEmpty(entry)) {
      dirs.splice(i, 1);
      return entry;
    }
  }
  return undefined;
}

/**
 * Whether createPidsLimit(max) finds a kept cgroup of this cap to take now, with no mkdir: one whose
 * processes are all gone (a kept one may still count the last processes of its run for a moment).
 * That one is put first, for createPidsLimit to take.
 */
export function pidsLimitKept(max: number, parent = pidsCgroupParent()): boolean {
  if (parent === undefined) return false;
  const dirs = idle.get(`${parent}\0${max}`);
  if (dirs === undefined) return false;
  for (let i = 0; i < dirs.length; i++) {
    const entry = dirs[i] as IdleCgroup;
    if (idleEmpty(entry)) {
      if (i > 0) {
        dirs.splice(i, 1);
        dirs.unshift(entry);
      }
      return true;
    }
  }
  return false;
}

/** A new cgroup's path under `parent` (removing other processes' orphans the first time). */
function nextDir(parent: string): string {
  if (counter === 0) removeOrphans(parent);
  return join(parent, `${namePrefix()}${++counter}`);
}

// A name taken already (made by a program of its own, say) is passed over: at most this many
// times in a row.
const NAME_TRIES = 16;

/** The name to try after a mkdir's `error`: rethrown unless the name was taken, at most NAME_TRIES times in a row. */
function nameAfter(error: unknown, tries: number, parent: string): string {
  if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= NAME_TRIES) throw error;
  return nextDir(parent);
}

// Cgroups are made ahead off the caller's thread, one at a time (cgroup creation and removal take
// one lock of the whole kernel, which a burst's sandboxes joining their cgroups hold too: a mkdir
// on the caller's thread waited milliseconds for it, holding the event loop): how many are wanted
// per cap, and the starts waiting for them.
const making = new Map<string, Array<() => void>>();

/**
 * Undefined when createPidsLimit(max) has a kept cgroup to take now (or there is no pids
 * hierarchy); else a promise settled once one has been made for it off the caller's thread, or
 * the making failed (createPidsLimit then makes one itself, or refuses, as it would have). A start
 * waits for it before the turn that decides it, so that no burst's mkdir blocks the event loop.
 */
export function pidsLimitMade(max: number, parent = pidsCgroupParent()): Promise<void> | undefined {
  if (parent === undefined) return undefined;
  if (pidsLimitKept(max, parent)) return undefined;
  const key = `${parent}\0${max}`;
  return new Promise((resolve) => {
    const waiting = making.get(key);
    if (waiting !== undefined) {
      waiting.push(resolve);
      return;
    }
    const queue = [resolve];
    making.set(key, queue);
    void makeAhead(key, parent, max, queue);
  });
}

const EBUSY = osConstants.errno.EBUSY;
const EEXIST = osConstants.errno.EEXIST;

/** The addon's cgroup calls, which run on its spawn lane (undefined where it is not loaded: the libuv pool then). */
function nativeCgroups(): Required<Pick<NativeBinding, 'cgroupMake' | 'cgroupRemove'>> | undefined {
  try {
    const binding = loadNative();
    if (binding.cgroupMake === undefined || binding.cgroupRemove === undefined) return undefined;
    return binding as Required<Pick<NativeBinding, 'cgroupMake' | 'cgroupRemove'>>;
  } catch {
    return undefined;
  }
}

/** fs.mkdir and fs.writeFile as promises (node:fs/promises is not loaded for this: a CLI run does without it). */
function onPool(call: (done: (error: NodeJS.ErrnoException | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => call((error) => (error === null ? resolve() : reject(error))));
}

/**
 * Makes `dir` with its pids.max off the caller's thread: on the addon's spawn lane, whose
 * hand-over never waits (the libuv pool's can, on a condition variable, while a burst's spawns
 * keep the CPUs busy), or on the pool where the addon is not loaded. Rejects when either step
 * failed; a directory made is removed again.
 */
async function makeCgroup(dir: string, max: number): Promise<void> {
  const native = nativeCgroups();
  if (native !== undefined) {
    const errno = await native.cgroupMake(dir, max);
    if (errno === EEXIST) throw Object.assign(new Error(`cgroupMake ${dir}: exists`), { code: 'EEXIST' });
    if (errno !== 0) throw new Error(`cgroupMake ${dir}: errno ${errno}`);
    return;
  }
  await onPool((done) => mkdir(dir, { mode: 0o755 }, done));
  try {
    await onPool((done) => writeFile(join(dir, 'pids.max'), `${max}\n`, done));
  } catch (error) {
    rmdir(dir, () => {});
    throw error;
  }
}

/** rmdir(dir) off the caller's thread, as makeCgroup runs; `done` says whether the cgroup was still busy. */
function removeCgroup(dir: string, done: (busy: boolean) => void): void {
  const native = nativeCgroups();
  if (native === undefined) rmdir(dir, (error) => done(error?.code === 'EBUSY'));
  else void native.cgroupRemove(dir).then((errno) => done(errno === EBUSY), () => done(false));
}

/** Makes cgroups of one cap until no start waits (see pidsLimitMade); a failure lets every waiter go. */
async function makeAhead(key: string, parent: string, max: number, queue: Array<() => void>): Promise<void> {
  try {
    while (queue.length > 0) {
      let dir = nextDir(parent);
      for (let tries = 1; ; tries++) {
        try {
          await makeCgroup(dir, max);
          break;
        } catch (error) {
          dir = nameAfter(error, tries, parent);
        }
      }
      const dirs = idle.get(key) ?? [];
      // Made now: no task has entered it.
      dirs.push({ dir, refused: 0, empty: true });
      idle.set(key, dirs);
      removeIdleOnExit();
      (queue.shift() as () => void)();
    }
  } catch {
    for (const resolve of queue.splice(0)) resolve();
  } finally {
    making.delete(key);
  }
}

function unavailable(): SandboxError {
  return new SandboxError(
    'sandbox_unavailable',
    'limits.processes cannot be enforced for a root caller: the kernel exempts root from RLIMIT_NPROC and no writable pids cgroup was found. Run as an ordinary user or drop the limit.',
    { layer: 'limits' },
  );
}

/**
 * A pids cgroup limited to `max` processes, or a refusal (fail closed) naming why. With
 * `required` false (the default cap rather than one the caller asked for), no writable pids
 * hierarchy gives undefined instead: the loss report states that edge.
 */
export function createPidsLimit(max: number, parent = pidsCgroupParent(), required = true): PidsLimit | undefined {
  if (parent === undefined || !existsSync(parent)) {
    if (!required) return undefined;
    throw unavailable();
  }
  const key = `${parent}\0${max}`;
  const reused = takeIdle(key);
  let dir = reused?.dir;
  // Whether `dir` is ours to remove on failure (not a name another thread took first).
  let ours = dir !== undefined;
  let fd = -1;
  try {
    if (dir === undefined) {
      dir = nextDir(parent);
      for (let tries = 1; ; tries++) {
        try {
          mkdirSync(dir, { mode: 0o755 });
          ours = true;
          break;
        } catch (error) {
          dir = nameAfter(error, tries, parent);
        }
      }
      writeFileSync(join(dir, 'pids.max'), `${max}\n`);
    }
    fd = openSync(join(dir, 'cgroup.procs'), 'w');
  } catch (error) {
    try {
      if (ours && dir !== undefined) rmdirSync(dir);
    } catch {
      // nothing was created
    }
    if (!required) return undefined;
    throw new SandboxError('sandbox_unavailable', `limits.processes: cannot set up the pids cgroup ${dir ?? parent}: ${(error as Error).message}`, {
      layer: 'limits',
      path: dir ?? parent,
      cause: error,
    });
  }
  const cgroup = dir;
  const refusedBefore = reused?.refused ?? 0;
  let refusedAfter = refusedBefore;
  removeIdleOnExit();
  const closeFd = () => {
    if (fd >= 0) closeSync(fd);
    fd = -1;
  };
  const hit = () => {
    refusedAfter = refusedForks(cgroup);
    return refusedAfter > refusedBefore;
  };
  // Off the caller's thread (the kernel-wide lock of pidsLimitMade), retried while still busy.
  const removeDir = (attempt: number): void =>
    removeCgroup(cgroup, (busy) => {
      if (busy && attempt < 100) setTimeout(() => removeDir(attempt + 1), 10).unref();
    });
  const remove = (): void => {
    const dirs = idle.get(key) ?? [];
    if (dirs.length < IDLE_LIMIT) {
      dirs.push({ dir: cgroup, refused: refusedAfter });
      idle.set(key, dirs);
      return;
    }
    removeDir(0);
  };
  return { fd, dir: cgroup, closeFd, hit, remove: () => remove() };
}
