// SPDX-License-Identifier: MIT
// The Windows starter: the prepared plan in an AppContainer through the addon, its stdio over
// named pipes we listen on (each verified by a nonce). Timeout, abort, output capture and the
// result are the shared lifecycle's (lib/sandbox/process.ts).
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { PassThrough, type Readable, type Writable } from 'node:stream';

import { SandboxError } from '../../errors.js';
import { callNative, callNativeAsync } from '../../native/load.js';
import type { NativeBinding } from '../../native/types.js';
import type { AsyncStarter, OsExit, OsProcess, PreparedRun, StartIo, Starter } from '../../sandbox/contract.js';
import { deferredProcess } from '../../sandbox/deferred-start.js';
import { checkProtectedPaths, guardProtectedPaths } from '../../sandbox/protected.js';
import type { SandboxPlan } from '../types.js';
import { buildAclJournalRecord, planAclChanges, type AclChangePlan } from './acl-journal.js';
import { beginPropagation, defaultAclJournalDir, dropMarkers, readAclJournal, writeAclJournal } from './acl-journal-store.js';
import { activeContainers, revertContainer } from './acl-revert.js';
import { buildWindowsSpawnSpec, resolveWindowsProgram, type WindowsSpawnSpec, type WindowsStdioEntry } from './launch-spec.js';

/** What the Windows starter depends on; injectable so tests run on any OS. */
export interface WindowsStartDeps {
  /** The addon's spawn, kill and windowsAcl (default: the loaded addon, errors mapped by `callNative`). */
  binding?: Pick<NativeBinding, 'spawn' | 'kill' | 'windowsAcl'>;
  /** The ACL journal directory (default: zero-sandbox's state in the user cache dir). */
  aclJournalDir?: string;
  /** Tests only: the listening address of stdio pipe `index` (default: a random named pipe). */
  pipeAddress?: (index: number) => string;
}

/**
 * Waits on `server` for the connection that starts with `nonce` (the glue writes it on the end it
 * hands to the command): any other client of the pipe name is dropped, never trusted.
 */
function acceptVerified(server: Server, nonce: string): Promise<Socket> {
  return new Promise((resolve) => {
    server.on('connection', (socket) => {
      let got = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        got = Buffer.concat([got, chunk]);
        if (got.length < nonce.length) return;
        socket.off('data', onData);
        socket.pause();
        if (got.subarray(0, nonce.length).toString('latin1') !== nonce) {
          socket.destroy();
          return;
        }
        const rest = got.subarray(nonce.length);
        if (rest.length > 0) socket.unshift(rest);
        server.close();
        resolve(socket);
      };
      socket.on('data', onData);
      socket.on('error', () => {});
    });
  });
}

interface PipeSet {
  entries: WindowsSpawnSpec['stdio'];
  streams: [Writable | null, Readable | null, Readable | null];
  close: () => void;
}

/**
 * Listens on one pipe per 'pipe' stream; returns the entries for the glue, our stream ends, and
 * `close` (stops listening; ends the streams never connected).
 */
function openPipes(modes: StartIo['stdio'], deps: WindowsStartDeps): PipeSet {
  const servers: Server[] = [];
  const unconnected = new Set<PassThrough>();
  const entries: WindowsStdioEntry[] = [];
  const streams: Array<Writable | Readable | null> = [];
  const id = randomBytes(16).toString('hex');
  modes.forEach((mode, i) => {
    if (mode !== 'pipe') {
      entries.push(mode === 'inherit' ? i : 'ignore');
      streams.push(null);
      return;
    }
    const address = deps.pipeAddress?.(i) ?? `\\\\.\\pipe\\zero-sandbox-${process.pid}-${id}-${i}`;
    const nonce = randomBytes(16).toString('hex');
    const server = createServer();
    server.on('error', () => {});
    server.listen(address);
    servers.push(server);
    const ours = new PassThrough();
    unconnected.add(ours);
    void acceptVerified(server, nonce).then((socket) => {
      unconnected.delete(ours);
      if (i === 0) ours.pipe(socket);
      else socket.pipe(ours);
    });
    entries.push({ pipe: address, nonce });
    streams.push(ours);
  });
  return {
    entries: entries as WindowsSpawnSpec['stdio'],
    streams: streams as PipeSet['streams'],
    close: () => {
      servers.forEach((s) => s.close());
      // A stream the command never connected ends here, else nothing would end it.
      for (const stream of unconnected) stream.end();
      unconnected.clear();
    },
  };
}

/**
 * The Windows `Starter` (spawnSandboxed), with its dependencies bound. It returns at once with the
 * streams, as child_process.spawn does: every decision of the start is made within the call, the
 * ACL plan is then applied on the thread pool and the process spawned after it (`pid` and the
 * `spawn` event come then). An addon without the off-thread verb applies the plan within spawn.
 */
export function windowsStarter(deps: WindowsStartDeps = {}): Starter {
  return (prepared, io, onExit) => startWindowsProcess(prepared, io, onExit, deps, 'deferred') as OsProcess;
}

/**
 * The Windows `AsyncStarter`: the ACL plan is applied on the thread pool first (an inheritable ACE
 * on a large tree is propagated to every file below it, which can take long), then the process is
 * spawned with nothing left to apply.
 */
export function windowsAsyncStarter(deps: WindowsStartDeps = {}): AsyncStarter {
  return async (prepared, io, onExit) => startWindowsProcess(prepared, io, onExit, deps, 'async');
}

/**
 * Where the ACL plan is applied: `async` on the thread pool before the spawn, the promise resolving
 * with the process (runSandboxed); `deferred` the same behind a process returned at once
 * (spawnSandboxed); within the addon's spawn, on this thread, when the addon has no off-thread verb.
 */
type AclMode = 'async' | 'deferred';

type Call = <T>(fn: (b: Pick<NativeBinding, 'spawn' | 'kill' | 'windowsAcl'>) => T) => T;
type CallAsync = <T>(fn: (b: Pick<NativeBinding, 'spawn' | 'kill' | 'windowsAcl'>) => Promise<T>) => Promise<T>;


/** The journal side of one start: the record written and the propagation marked before any ACE. */
interface AclJournalRun {
  changes: AclChangePlan;
  /** The marker file names found at the start. */
  markers: readonly string[];
  /** Marks the propagation complete; with `redone`, drops the markers of the runs that stopped. */
  end(redone: boolean): void;
}

function openAclJournal(dir: string, plan: SandboxPlan, tmpDir: string, spec: WindowsSpawnSpec): AclJournalRun {
  const { containerName, aclKinds, aclPaths } = spec.windows;
  const state = readAclJournal(dir);
  const record = buildAclJournalRecord(containerName, plan.workspace, aclKinds, aclPaths, tmpDir);
  const changes = planAclChanges(record, state.records, state.propagating);
  changes.revert = changes.revert.filter((r) => !activeContainers.has(r.container));
  writeAclJournal(dir, record);
  const done = beginPropagation(dir, containerName);
  return {
    changes,
    markers: state.markers,
    end: (redone) => {
      done();
      if (redone) dropMarkers(dir, containerName, state.markers);
    },
  };
}

/**
 * Strips the ACEs of containers of superseded policies and deletes their profiles, one after the
 * other, off the JavaScript thread. A failure keeps the record, so a later run tries again; it
 * never refuses this run (those ACEs name another SID than this run's).
 */
async function revertStale(dir: string, revert: AclChangePlan['revert'], markers: readonly string[], callAsync: CallAsync): Promise<void> {
  for (const { container, paths } of revert) {
    try {
      await revertContainer(dir, container, paths, markers, callAsync);
    } catch {
      // Kept for the next run.
    }
  }
}

function startWindowsProcess(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void, deps: WindowsStartDeps, mode: AclMode): OsProcess | Promise<OsProcess> {
  // Every git file that could make host git run code later, the agent and editor configs, .zero
  // and .agents: the existing ones get deny ACEs, and everything is noted for the check once the
  // job is empty (the same guard and check as on Linux). The notes are held for runs of the same
  // write roots started meanwhile until release().
  const guarded = guardProtectedPaths(prepared.plan);
  const { plan, release } = guarded;
  const check = (): ReturnType<OsProcess['checkProtectedPaths']> => {
    try {
      return checkProtectedPaths(guarded.guard);
    } finally {
      release();
    }
  };
  try {
    const started = spawnWindows(prepared, plan, io, onExit, deps, check, mode, release);
    if (started instanceof Promise) {
      return started.catch((error: unknown) => {
        release();
        throw error;
      });
    }
    return started;
  } catch (error) {
    release();
    throw error;
  }
}

function spawnWindows(
  prepared: PreparedRun,
  plan: SandboxPlan,
  io: StartIo,
  onExit: (exit: OsExit) => void,
  deps: WindowsStartDeps,
  check: OsProcess['checkProtectedPaths'],
  mode: AclMode,
  release: () => void,
): OsProcess | Promise<OsProcess> {
  const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();
  const program = resolveWindowsProgram(plan.argv[0] ?? '', plan.env, plan.cwd, isFile);
  const resolved: SandboxPlan = { ...plan, argv: [program, ...plan.argv.slice(1)] };
  if (prepared.tmpDir === undefined) throw new SandboxError('internal_error', 'windows-appcontainer: the prepared run has no private temp dir');
  const tmpDir = prepared.tmpDir;
  const pipes = openPipes(io.stdio, deps);
  const call: Call = (fn) => (deps.binding === undefined ? callNative(fn) : fn(deps.binding));
  const callAsync: CallAsync = (fn) => (deps.binding === undefined ? callNativeAsync(fn) : fn(deps.binding));
  const dir = deps.aclJournalDir ?? defaultAclJournalDir();
  let spec: WindowsSpawnSpec;
  let journal: AclJournalRun;
  try {
    spec = buildWindowsSpawnSpec(resolved, tmpDir, pipes.entries);
    // Recorded before any ACE is added: a run that dies from here on leaves what a later one needs.
    journal = openAclJournal(dir, plan, tmpDir, spec);
  } catch (error) {
    pipes.close();
    throw error;
  }
  const { containerName } = spec.windows;
  activeContainers.set(containerName, (activeContainers.get(containerName) ?? 0) + 1);
  let left = false;
  const leave = (): void => {
    if (left) return;
    left = true;
    const n = (activeContainers.get(containerName) ?? 1) - 1;
    if (n > 0) activeContainers.set(containerName, n);
    else activeContainers.delete(containerName);
  };
  const spawn = (): OsProcess => {
    let spawned: { pid: number };
    try {
      spawned = call((b) => b.spawn(spec, (raw) => {
        // The job is empty (the addon waited until no process of it was left): pipes the command
        // never connected end now, so nothing waits for them.
        pipes.close();
        leave();
        onExit({ exitCode: raw.exitCode, signal: raw.signal === null ? null : 'SIGKILL' });
      }));
    } catch (error) {
      pipes.close();
      leave();
      throw error;
    }
    void revertStale(dir, journal.changes.revert, journal.markers, callAsync);
    return {
      pid: spawned.pid,
      stdio: pipes.streams,
      capturesOutput: false,
      prewarmed: false,
      // Windows has no signals: any of them terminates the job (every process of the command).
      kill: () => call((b) => b.kill(spawned.pid, 9)),
      checkProtectedPaths: check,
    };
  };
  const redo = journal.changes.redo;
  if (deps.binding !== undefined && deps.binding.windowsAcl === undefined) {
    // Applied within spawn, on this thread; the marker stays if the process dies meanwhile.
    spec.windows.aclRedo = redo;
    let ok = false;
    try {
      const os = spawn();
      ok = true;
      return os;
    } finally {
      journal.end(ok && redo);
    }
  }
  const { aclKinds, aclPaths } = spec.windows;
  // `cancelled`: a kill came while the ACLs were applied (deferred start only): nothing is spawned.
  const applyThenSpawn = (cancelled: () => boolean): Promise<OsProcess | undefined> =>
    callAsync((b) => b.windowsAcl!({ op: 'apply', container: containerName, kinds: aclKinds, paths: aclPaths, redo })).then(
      () => {
        journal.end(redo);
        spec.windows.aclKinds = [];
        spec.windows.aclPaths = [];
        if (cancelled()) {
          pipes.close();
          leave();
          return undefined;
        }
        return spawn();
      },
      (error: unknown) => {
        // The native side rolled back what it set: the propagation is over either way.
        journal.end(false);
        pipes.close();
        leave();
        throw error;
      },
    );
  if (mode === 'async') return applyThenSpawn(() => false) as Promise<OsProcess>;
  // No process came to exist: nothing ran, so there is nothing to check; the guard is released.
  const withoutProcess = (): ReturnType<OsProcess['checkProtectedPaths']> => {
    release();
    return [];
  };
  return deferredProcess({ stdio: pipes.streams, finish: applyThenSpawn, checkWithoutProcess: withoutProcess }, onExit);
}
