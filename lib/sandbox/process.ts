// SPDX-License-Identifier: MIT
// spawnSandboxed(): the streaming form, and the lifecycle every backend shares. The backend
// prepares the run and starts its process (lib/backend/<os>/start.ts); here, written once: the
// timeout, the abort, kill() with its grace period, the exit record with the protected-path
// check, `exit` then `close`, and the release of what preparing took.
import { EventEmitter } from 'node:events';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';

import { SandboxError } from '../errors.js';
import type { SandboxBackendName } from '../backend/types.js';
import type { HostFacts } from '../host-facts.js';
import type { AsyncStarter, CapturedOutput, InternalSpawnOptions, OsExit, OsProcess, PreparedRun, SandboxBackend, SandboxExit, StartIo, StdioChoice } from './contract.js';
import { validateOptions, type SandboxCommand, type SpawnSandboxedOptions } from './options.js';
import { currentBackend } from '../backend/current.js';
import { nextPiece, paced } from './start-pacing.js';
import { runAdmission } from './run-admission.js';

export type { CapturedOutput, CapturedStream, InternalSpawnOptions, SandboxExit } from './contract.js';

/** Options of SandboxedProcess.kill(). */
export interface KillOptions {
  /**
   * Milliseconds to wait after a signal other than SIGKILL before the whole sandbox is killed with
   * SIGKILL, like `timeout -k`. Default 5000; 0 waits forever.
   */
  graceMs?: number;
}

/** Events of a SandboxedProcess (the `child_process` order: `exit`, then `close`). */
export interface SandboxedProcessEvents {
  /** The sandbox is gone (every process in it ended); stdout/stderr may still hold unread output. */
  exit: [exit: SandboxExit];
  /** After `exit`, once stdout and stderr have ended: every byte of output has been delivered. */
  close: [exit: SandboxExit];
  /**
   * The command's process exists and `pid` is set: on the next tick after spawnSandboxed returns,
   * or on Windows once the ACLs are applied off the caller's thread.
   */
  spawn: [];
  /**
   * The sandbox could not start after spawnSandboxed returned (Windows: applying the ACLs failed;
   * nothing ran; `exited` rejects with the same error), or the host-side work after the exit failed.
   */
  error: [error: Error];
}

/** The default grace period of kill() before SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 5000;

/**
 * The shell-style line for a command that could not be executed ("NAME: command not found"), as
 * runSandboxed puts it on stderr and `zero-sandbox run` prints it. `argv0` is the program the
 * sandbox tried to execute (/bin/sh for the shell-string form).
 */
export function execFailureMessage(argv0: string, execError: NonNullable<SandboxExit['execError']>): string {
  const what =
    execError.code === 'ENOENT' ? 'command not found'
    : execError.code === 'EACCES' || execError.code === 'EPERM' ? 'Permission denied'
    : execError.code === 'ENOEXEC' ? 'cannot execute binary file: Exec format error'
    : execError.code === 'EISDIR' ? 'Is a directory'
    : `cannot execute (${execError.code})`;
  return `${argv0}: ${what}\n`;
}

/**
 * execve's EAGAIN: the user's process limit (RLIMIT_NPROC) was over when the command's process
 * was to become the command. The command never ran, so it is no failure of the command's own
 * (126 or 127, as "command not found") but of the start.
 */
export function execExhausted(argv0: string, exit: SandboxExit): SandboxError | undefined {
  if (exit.execError?.code !== 'EAGAIN') return undefined;
  return new SandboxError('resource_exhausted', `${argv0} could not be executed (execve: EAGAIN): the process limit (RLIMIT_NPROC) is reached: nothing ran`, { errno: exit.execError.errno, syscall: 'execve' });
}

/** What a failure of the host-side work after a sandbox's exit becomes. */
function exitFailure(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const { message, path } = (error ?? {}) as { message?: string; path?: string };
  return new SandboxError('internal_error', `the sandbox exited, but the host-side checks after it failed${path === undefined ? '' : ` on ${path}`}: ${message ?? String(error)}. The workspace was not fully checked`, {
    cause: error,
    ...(path === undefined ? {} : { path }),
  });
}

/** Resolves when a stream has ended or closed (at once for none or an already finished one). */
function streamDone(stream: Readable | null): Promise<void> {
  if (stream === null || stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
  });
}

/** The streams a start sets up for the caller's options. */
function startIo(options: InternalSpawnOptions): StartIo {
  const capture = options.capture;
  if (capture !== undefined) return { stdio: [capture.inheritStdin === true ? 'inherit' : 'pipe', 'pipe', 'pipe'], capture, prewarm: options.prewarm };
  const given = options.stdio ?? 'pipe';
  const stdio = (typeof given === 'string' ? [given, given, given] : [...given]) as [StdioChoice, StdioChoice, StdioChoice];
  return { stdio, prewarm: options.prewarm };
}

/**
 * A command running in a sandbox, on every OS. Like `child_process`: `exit` when the sandbox is
 * gone, then `close` once stdout and stderr have delivered everything; `exited` resolves with
 * `close`.
 */
export class SandboxedProcess extends EventEmitter<SandboxedProcessEvents> {
  /** The command's standard input (a pipe), closed once the sandbox is gone. */
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** The backend that runs the command. */
  readonly backend: SandboxBackendName;
  readonly network: 'deny' | 'allow';
  /** True when a prewarmed sandbox (set up ahead of time for the same plan) runs the command. */
  readonly prewarmed: boolean;
  /** Names of the caller's variables scrubbed as secrets (never their values). */
  readonly scrubbedEnv: readonly string[];
  /**
   * Default caps this run goes without because no mechanism can enforce them here: `processes`
   * for a root caller with no writable pids cgroup on a kernel before 6.14. Empty otherwise.
   */
  readonly limitsNotEnforced: readonly string[];
  /**
   * Resolves after the sandbox is gone (every process in it ended) and stdout and stderr have
   * ended: all output has been delivered (the `close` event). Streams nobody reads are drained and
   * discarded when the sandbox exits, as in `child_process`. Rejects with a SandboxError when the
   * sandbox could not start after spawnSandboxed returned (nothing ran; no `exit` or `close`), or
   * when the host-side work after the exit (protected-path cleanup) failed: the workspace was then
   * not fully checked.
   */
  readonly exited: Promise<SandboxExit>;
  /** The exit once the sandbox is gone (the `exit` event), else null. */
  exit: SandboxExit | null = null;
  readonly #os: OsProcess;
  #done = false;
  #graceTimer: NodeJS.Timeout | undefined;
  #timedOut = false;
  #aborted = false;
  #captured: CapturedOutput | undefined;
  #startFailure: SandboxError | undefined;

  /** @internal Use spawnSandboxed (or runSandboxed). */
  constructor(prepared: PreparedRun, options: InternalSpawnOptions, backend: Pick<SandboxBackend, 'start'>) {
    super();
    const { plan } = prepared;
    this.backend = prepared.backend;
    this.network = plan.network;
    this.scrubbedEnv = plan.scrubbedEnv ?? [];
    let resolveExit!: (exit: SandboxExit) => void;
    let rejectExit!: (error: SandboxError) => void;
    this.exited = new Promise((resolve, reject) => {
      resolveExit = resolve;
      rejectExit = reject;
    });
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      this.#aborted = true;
      this.kill('SIGKILL');
    };
    // The host-side work once the sandbox is gone: the exit as the caller sees it.
    const settle = (raw: OsExit): SandboxExit => {
      if (raw.captured !== undefined) this.#captured = raw.captured;
      if (raw.startFailure !== undefined) this.#startFailure = raw.startFailure;
      // The sandbox is gone (every process of it ended): nothing can race the check.
      const reports = this.#os.checkProtectedPaths();
      const violations = reports.filter((v) => v.interruptedRun === undefined);
      const interrupted = reports.filter((v) => v.interruptedRun !== undefined);
      const exit: SandboxExit = {
        // A command that left something for host git to run has failed, whatever it returned.
        exitCode: violations.length > 0 && raw.exitCode === 0 ? 1 : raw.exitCode,
        signal: raw.signal,
        timedOut: this.#timedOut,
        aborted: this.#aborted,
        ...(this.#aborted ? { abortReason: options.signal?.reason } : {}),
        protectedPathViolations: violations.map((v) => v.path),
      };
      if (violations.length > 0) exit.protectedPathDetails = violations;
      if (interrupted.length > 0) exit.interruptedRunRepairs = interrupted;
      if (raw.limitsHit !== undefined) exit.limitsHit = raw.limitsHit;
      // Only a denied network means these packets were refused by the sandbox.
      if (this.network === 'deny' && raw.networkRefusals !== undefined && raw.networkRefusals > 0) exit.networkRefusals = raw.networkRefusals;
      if (raw.execError !== undefined) exit.execError = raw.execError;
      if (raw.platformDenials !== undefined && raw.platformDenials.length > 0) exit.platformDenials = raw.platformDenials;
      return exit;
    };
    // The exit may arrive in a native callback: a failure of the host-side work after it
    // (protected path cleanup, ...) must not escape into the addon. It becomes a SandboxError:
    // `exited` rejects and `error` listeners hear it. A listener's own error stays the caller's:
    // an uncaught exception, as with Node's own events (`close` and `exited` still follow).
    const fail = (failure: SandboxError): void => {
      rejectExit(failure);
      if (this.listenerCount('error') > 0) this.emit('error', failure);
    };
    const finishExit = (raw: OsExit): void => {
      // Nothing is left to read stdin: its pipe is closed, as child_process does at an exit, or a
      // caller that never ends it would hold one descriptor per run for good.
      this.stdin?.destroy();
      let exit: SandboxExit;
      try {
        exit = settle(raw);
      } catch (error) {
        fail(exitFailure(error));
        return;
      }
      // Nothing ran (a start that finished after the call failed): that is what the caller hears.
      if (raw.startFailure !== undefined && raw.exitCode === null && raw.signal === null) {
        fail(raw.startFailure);
        return;
      }
      this.exit = exit;
      // Every writer of the pipes is gone with the sandbox, so the streams end once read; a stream
      // nobody has read by the next tick after `exit` is drained (as child_process does), else
      // `close` would never come.
      void Promise.all([streamDone(this.stdout), streamDone(this.stderr)]).then(() => {
        resolveExit(exit);
        this.emit('close', exit);
      });
      process.nextTick(() => {
        for (const stream of [this.stdout, this.stderr]) if (stream !== null && stream.readableFlowing === null) stream.resume();
      });
      this.emit('exit', exit);
    };
    // The sandbox is gone: from now on a timeout or an abort has nothing to kill and is not
    // reported. The host-side work after it takes turns with the starts and exits of other runs
    // (start-pacing.ts): exits arriving together (a burst's sandboxes end in the same poll of the
    // event loop, each delivered by its own callback) do not hold the caller's event loop
    // together. Two pieces: what of the check can run off the caller's thread is set going (the
    // sandbox is gone); the rest takes its turn once that has settled.
    const onExit = (raw: OsExit): void => {
      this.#done = true;
      clearTimeout(this.#graceTimer);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      paced(() => {
        let prepared: Promise<void> | undefined;
        try {
          prepared = this.#os.prepareCheck?.();
        } catch {
          prepared = undefined; // the check then does all of its work itself
        }
        const finish = (): void => paced(() => finishExit(raw));
        if (prepared === undefined) finish();
        else void prepared.then(finish, finish);
      });
    };
    this.#os = backend.start(prepared, startIo(options), onExit);
    const started = this.#os.started;
    if (started === undefined) process.nextTick(() => this.#os.pid > 0 && this.emit('spawn'));
    else void started.then((ok) => ok && this.emit('spawn'));
    this.prewarmed = this.#os.prewarmed;
    this.limitsNotEnforced = this.#os.limitsNotEnforced ?? [];
    [this.stdin, this.stdout, this.stderr] = this.#os.stdio;
    // A closed stdin on the other side is not an error for us.
    this.stdin?.on('error', () => {});
    const timeoutMs = options.timeoutMs;
    if (timeoutMs !== undefined && !this.#done) {
      timer = setTimeout(() => {
        this.#timedOut = true;
        this.kill('SIGKILL');
      }, timeoutMs);
    }
    if (options.signal?.aborted) onAbort();
    else if (!this.#done) options.signal?.addEventListener('abort', onAbort, { once: true });
  }

  /** The process id: 0 until the process exists (on Windows, until the ACLs are applied: `spawn`). */
  get pid(): number {
    return this.#os.pid;
  }

  /** @internal With `capture`: the collected output (complete once `exited` has resolved). */
  capturedOutput(): CapturedOutput | undefined {
    return this.#captured;
  }

  /** @internal With `capture`, when the starter does not collect the output: our ends of the pipes. */
  get capturesOutput(): boolean {
    return this.#os.capturesOutput;
  }

  /**
   * @internal After `exited`, with the collected stderr: the OS launcher's own failure (nothing
   * ran), if any.
   */
  startFailure(stderr: string): SandboxError | undefined {
    return this.#startFailure ?? this.#os.setupFailure?.(this.exit?.exitCode ?? null, stderr);
  }

  /**
   * Sends `signal` (default SIGTERM) to the command's process group; unless the sandbox is gone
   * within `graceMs` (default 5000), every process in it is then killed with SIGKILL, like
   * `timeout -k`. SIGKILL kills every process in the sandbox at once. Returns false when the
   * sandbox is already gone. (Windows has no signals: any signal terminates the job at once.)
   */
  kill(signal: NodeJS.Signals | number = 'SIGTERM', options: KillOptions = {}): boolean {
    if (this.#done) return false;
    const number = typeof signal === 'number' ? signal : constants.signals[signal];
    if (number === undefined || !Number.isInteger(number) || number < 0 || number > 64) {
      throw new SandboxError('invalid_argument', `kill(): unknown signal ${String(signal)}; accepted: a signal name such as 'SIGTERM' or its number`);
    }
    const graceMs = options.graceMs ?? DEFAULT_KILL_GRACE_MS;
    if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
      throw new SandboxError('invalid_argument', `kill(): options.graceMs must be a non-negative integer (got ${String(graceMs)})`);
    }
    const sent = this.#os.kill(number);
    if (number !== SIGKILL && number !== 0 && graceMs > 0 && this.#graceTimer === undefined && !this.#done) {
      this.#graceTimer = setTimeout(() => this.kill('SIGKILL'), graceMs);
      this.#graceTimer.unref();
    }
    return sent;
  }
}

/** SIGKILL's number (9 everywhere; Windows' os.constants list it too). */
const SIGKILL = 9;

/**
 * Starts a command inside the sandbox and returns at once with its streams. Options are validated
 * first: a bad one throws SandboxError `invalid_argument` and nothing runs.
 */
export function spawnSandboxed(command: SandboxCommand, options: SpawnSandboxedOptions = {}): SandboxedProcess {
  validateOptions('spawn', options);
  const child = startSandboxed(command, options);
  // Counted with the runs in flight, whose descriptors it holds as they do, but never made to wait:
  // the process is returned at once (run-admission.ts).
  runAdmission.count();
  const release = (): void => runAdmission.release();
  void child.exited.then(release, release);
  return child;
}

/** @internal spawnSandboxed without the schema check, for options this package built itself. */
export function startSandboxed(command: SandboxCommand, options: InternalSpawnOptions, backend: SandboxBackend = currentBackend()): SandboxedProcess {
  for (let attempt = 1; ; attempt++) {
    const prepared = backend.prepare(command, options);
    try {
      return startPrepared(prepared, options, backend);
    } catch (error) {
      if (!preparedAgain(error, attempt)) throw error;
    }
  }
}

/** How many times a run is prepared when what its plan mounts keeps vanishing before the mount. */
export const MAX_START_ATTEMPTS = 3;

/**
 * Whether a start that failed is prepared and tried again: a path the plan hides or makes
 * read-only was there when the plan was made and gone when the sandbox mounted over it (a program
 * on the host rewrote it by rename, as less and vim do with their history files). Nothing ran
 * (mounts are made before the command is executed) and the next attempt is planned from scratch
 * on what is there then, so it is never weaker than the first; after a few attempts the error
 * stands, naming the path.
 */
function preparedAgain(error: unknown, attempt: number): boolean {
  return attempt < MAX_START_ATTEMPTS && error instanceof SandboxError && error.code === 'mount_failed' && error.errno === constants.errno.ENOENT && error.path !== undefined;
}

/**
 * @internal startSandboxed through the backend's `startAsync` where it has one: the preparation
 * and every decision of the start happen within the call, the OS work (Linux: the clone) does not
 * hold the caller's thread, and the process is there once the promise resolves.
 */
export async function startSandboxedAsync(command: SandboxCommand, options: InternalSpawnOptions, backend: SandboxBackend = currentBackend()): Promise<SandboxedProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(command, options, backend);
    } catch (error) {
      if (!preparedAgain(error, attempt)) throw error;
    }
  }
}

async function startOnce(command: SandboxCommand, options: InternalSpawnOptions, backend: SandboxBackend): Promise<SandboxedProcess> {
  const prepared = backend.prepare(command, options);
  const startAsync = backend.startAsync;
  if (startAsync === undefined) return startPrepared(prepared, options, backend);
  // The exit is handed to the lifecycle once it exists (an exit before that is kept for it).
  let deliver: ((exit: OsExit) => void) | undefined;
  let early: OsExit | undefined;
  const forward = (exit: OsExit): void => {
    if (deliver === undefined) early = exit;
    else deliver(exit);
  };
  // The facts the plan was resolved with serve the rest of this start even when a burst defers it
  // to a later turn (start-pacing.ts), as they would within the call: taken now, before their
  // hand-over lapses, and given to this start once. Without them a large policy's start would look
  // up every path of its mount plan again (1,000 write roots: some 26,000 lstat calls).
  // Let go of once given (factsTakenNow).
  let os: OsProcess;
  try {
    // In a burst, the start after the plan may wait for the event loop's next turn (start-pacing.ts).
    os = await nextPiece(startPiece(startAsync, factsTakenNow(prepared), startIo(options), forward));
  } catch (error) {
    prepared.release();
    throw error;
  }
  return startPrepared(prepared, options, {
    start: (_prepared, _io, onExit) => {
      deliver = onExit;
      if (early !== undefined) {
        const exit = early;
        process.nextTick(() => onExit(exit));
      }
      return os;
    },
  });
}

/**
 * The start's piece as a closure made here: one made in startOnce would share its scope with
 * `forward`, which lives until the exit, and keep what it holds (the prepared run, its plan).
 */
function startPiece(startAsync: AsyncStarter, run: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void): () => Promise<OsProcess> {
  return () => startAsync(run, io, onExit);
}

/**
 * `prepared` with its facts taken now and given to its start once (see startOnce), then let go of.
 * A function of its own: the closures of startOnce live as long as the run (`forward` until its
 * exit) and hold whatever their scope holds, never the prepared run (its plan) with them.
 */
function factsTakenNow(prepared: PreparedRun): PreparedRun {
  let facts: HostFacts | undefined = prepared.takeFacts();
  return {
    ...prepared,
    takeFacts: () => {
      const given = facts ?? prepared.takeFacts();
      facts = undefined;
      return given;
    },
  };
}

/** @internal Starts a prepared run under the lifecycle; what preparing took is released when it ends. */
export function startPrepared(prepared: PreparedRun, options: InternalSpawnOptions, backend: Pick<SandboxBackend, 'start'>): SandboxedProcess {
  try {
    const child = new SandboxedProcess(prepared, options, backend);
    // The release alone is kept until the exit, not the prepared run with its plan (a run in
    // flight holds what its closures hold). A PreparedRun's release is a closure of its own
    // (copies made by spreading one call it too), never a method that needs its object.
    const { release: releasePrepared } = prepared;
    const release = (): void => releasePrepared();
    void child.exited.then(release, release);
    return child;
  } catch (error) {
    prepared.release();
    throw error;
  }
}
