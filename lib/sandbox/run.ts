// SPDX-License-Identifier: MIT
// runSandboxed(): run a command inside the sandbox to completion and collect its output.
import { closeSync, constants, mkdtempSync, openSync, rmdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import type { SandboxBackendName } from '../backend/types.js';
import { SandboxError } from '../errors.js';
import { normalizeCommand, validateOptions, type RunOptions, type SandboxCommand } from './options.js';
import { execExhausted, execFailureMessage, startSandboxedAsync, type SandboxedProcess } from './process.js';
import type { CaptureRequest, CapturedOutput, CapturedStream, SandboxBackend, SandboxExit } from './contract.js';
import { collectStreams } from './capture.js';
import { loadCurrentBackend, loadedCurrentBackend } from '../backend/current.js';
import { truncationMarker } from './truncation.js';
import { endTurn, startTurn } from './start-pacing.js';
import { prewarmPool } from './prewarm.js';
import { ALONE_PAUSES_MS, runAdmission } from './run-admission.js';
import { networkDenial, outputCapDenial, protectedPathDenial, timeoutDenial, processCapDenial, tmpfsCapDenial, type SandboxDenial } from './denials.js';

/** What runSandboxed resolves with. */
export interface RunResult {
  /** The command's exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null;
  /** stdout, also partial on timeout or abort; past maxBuffer its head and tail joined by the truncation marker. */
  stdout: string;
  /** stderr, likewise; an exec failure adds a shell-style line ("NAME: command not found"). */
  stderr: string;
  /** True when stdout or stderr went over maxBuffer and its middle was dropped. */
  truncated: boolean;
  /** Bytes the command wrote to each stream in all (more than kept when truncated). */
  outputBytes: { stdout: number; stderr: number };
  /**
   * What the sandbox blocked and can attribute (protected paths, caps that were hit, ...): typed,
   * never inferred from the output. Empty when nothing was blocked.
   */
  denials: SandboxDenial[];
  /** The sandbox was killed because `timeoutMs` passed. */
  timedOut: boolean;
  /** The sandbox was killed because `signal` aborted (runSandboxed resolves, as on timeout). */
  aborted: boolean;
  /** With `aborted`: the AbortSignal's reason. */
  abortReason?: unknown;
  /**
   * Wall time of the run in milliseconds, from its last start: not counting waits for other runs to
   * end (under a low descriptor limit, or after a start that ran out of a resource).
   */
  durationMs: number;
  /** The backend that ran it. */
  backend: SandboxBackendName;
  /** The network mode it ran with (`allow` after an approved network prompt). */
  network: 'deny' | 'allow';
  /** Set when the command could not be executed inside the sandbox. */
  execError?: SandboxExit['execError'];
  /** Protected paths the command created or changed; they were removed when it ended (exit non-zero). */
  protectedPathViolations: string[];
  /**
   * What the after-run checks of earlier runs of these write roots, whose process was killed before
   * they ran, removed or put back before this run started: each path, why, and the write roots of
   * that run. This command did none of it; its exit code does not change.
   */
  interruptedRunRepairs?: Array<{ path: string; reason: string; interruptedRun: string[] }>;
  /** The same as structured denials (kind `protected_metadata`, scope, reason). */
  /** A sandbox prewarmed for the same plan ran the command. */
  prewarmed: boolean;
  /** With keepOutputFile: the file holding all of the output, and whether every byte got there. */
  outputFile?: { path: string; complete: boolean };
  /** Names of the caller's environment variables scrubbed as secrets (never their values). */
  scrubbedEnv: string[];
  /**
   * Caps the command ran into, by their `limits` names: `processes` (a fork was refused: the pids
   * cgroup's count, or the init's probe fork refused at the PID namespace's pid_max), `tmpBytes` /
   * `shmBytes` (the private /tmp or /dev/shm was full when the command had ended). Measured by the
   * kernel and the sandbox's init, never read from the output.
   */
  limitsHit?: string[];
  /**
   * Default caps the run went without because nothing here can enforce them (`processes`: a root
   * caller with no writable pids cgroup on a kernel before 6.14). Absent when every cap held.
   */
  limitsNotEnforced?: string[];
}

const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;
const EMPTY = new Uint8Array(0);

/**
 * A new file for all of a run's output, in a new private directory under the OS temp dir: created
 * here (exclusive, no symlink followed, mode 0600) before the command exists, so nothing the
 * command does decides where the host writes.
 */
function openOutputFile(): { fd: number; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'zero-sandbox-output-'));
  const path = join(dir, 'output.log');
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_APPEND;
  return { fd: openSync(path, flags, 0o600), path };
}

/** A captured stream as text: whole, or head + marker + tail. */
export function joinCaptured(stream: CapturedStream): string {
  if (stream.tail === undefined) return stream.head;
  const omitted = stream.bytes - Buffer.byteLength(stream.head) - Buffer.byteLength(stream.tail);
  return stream.head + truncationMarker(omitted) + stream.tail;
}

/**
 * Runs `command` sandboxed; resolves when every process in the sandbox is gone and its output is
 * collected, also on timeout (`timedOut`) and abort (`aborted`, `abortReason`), with the output
 * written until then. Rejects with SandboxError: `invalid_argument` for a bad option (nothing
 * ran), `sandbox_unavailable`, `max_buffer_exceeded`, `resource_exhausted` (out of descriptors,
 * processes or namespaces: started again after another run's end, beside runs that do not end
 * after a second of none ending, or alone after pauses of about 8 s in all, within `timeoutMs`),
 * and with `engine` `permission_denied`, `approval_required` (a prompt and no responder) or
 * `aborted` (abort before the command started, or a `cancel` answer). With `engine`, the
 * permission engine evaluates the command first and an approved network prompt
 * runs the command with network allowed, still inside the sandbox.
 */
export async function runSandboxed(command: SandboxCommand, options: RunOptions = {}): Promise<RunResult> {
  // With a loaded backend the schema check is the first thing of the start's turn (start-pacing.ts):
  // a burst of a thousand calls in one tick does not run a thousand checks in the caller's own loop.
  // Nothing has run before it either way, and a bad option rejects the same.
  const backend = loadedCurrentBackend();
  if (backend !== undefined && (options as RunOptions | undefined)?.engine === undefined) {
    return runWith(command, options, backend, () => validateOptions('run', options));
  }
  validateOptions('run', options);
  return runValidated(command, options);
}

/** @internal runSandboxed without the schema check, for options this package built itself. */
export async function runValidated(command: SandboxCommand, options: RunOptions): Promise<RunResult> {
  if (options.engine === undefined) return runDirect(command, options);
  const { authorizeRun } = await import('./authorize.js');
  const authorized = await authorizeRun(command, options);
  try {
    return await runDirect(command, authorized.options);
  } finally {
    authorized.cleanup();
  }
}

async function runDirect(command: SandboxCommand, options: RunOptions): Promise<RunResult> {
  // A loaded backend (Linux's always is) starts the command within this call, with no await in
  // between: what the caller does right after (prewarmPool.clear(), an abort) comes after the start.
  // Only a call within a burst of starts that has used up this turn of the event loop waits for
  // the next one (start-pacing.ts).
  return runWith(command, options, loadedCurrentBackend() ?? (await loadCurrentBackend()));
}

/**
 * @internal runSandboxed's collection on a given backend: starts the command with its output
 * captured (by the addon on Linux, from the pipes elsewhere, with the same head-and-tail rule) and
 * assembles the RunResult.
 */
export async function runWith(command: SandboxCommand, options: RunOptions, backend: SandboxBackend, check?: () => void): Promise<RunResult> {
  // A run over what the caller's descriptor limit holds waits for another to end, and so does a
  // start that ran out of a resource with nothing run, then starts again (run-admission.ts). The
  // options are not checked yet (that is the start's first step): read with care.
  const given = (options as RunOptions | null | undefined)?.signal;
  const signal = given instanceof AbortSignal ? given : undefined;
  // A wait that rejects (aborted) was not counted, so releases nothing.
  let admitted = runAdmission.take(signal);
  let pauses = 0;
  let window: RetryWindow | undefined;
  let refused: SandboxError | undefined;
  try {
    for (;;) {
      if (admitted !== undefined) {
        try {
          await admitted;
        } catch (error) {
          // timeoutMs passed while waiting to start again: the refusal is the answer.
          if (window?.expired === true && refused !== undefined) throw withWait(refused, window.timeoutMs);
          throw error;
        }
      }
      let again: Promise<void> | undefined;
      try {
        return await runAdmitted(command, options, backend, check);
      } catch (error) {
        if (error instanceof SandboxError && exhaustedStarts.has(error)) {
          refused = error;
          window ??= retryWindow(signal, (options as RunOptions | null | undefined)?.timeoutMs);
          // The pauses count the failures in a row with no other run in flight.
          const alone = runAdmission.inFlight <= 1;
          again = runAdmission.retryAfterAnEnd(window.signal, ALONE_PAUSES_MS[pauses]);
          pauses = alone ? pauses + 1 : 0;
        }
        if (again === undefined) throw error;
      } finally {
        if (again === undefined) runAdmission.release();
      }
      admitted = again;
    }
  } finally {
    window?.dispose();
  }
}

/**
 * The wait of a refused start to start again: ended by the caller's signal, or once the run's
 * `timeoutMs` has passed since the first refusal (the command never started, but the caller gave
 * the run no longer than that: its other runs may not end for hours).
 */
interface RetryWindow {
  readonly signal: AbortSignal | undefined;
  readonly expired: boolean;
  readonly timeoutMs: number;
  dispose(): void;
}

function retryWindow(caller: AbortSignal | undefined, timeoutMs: unknown): RetryWindow {
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return { signal: caller, expired: false, timeoutMs: 0, dispose: () => {} };
  }
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort();
  }, timeoutMs);
  const forward = (): void => controller.abort(caller?.reason);
  if (caller?.aborted === true) forward();
  else caller?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    timeoutMs,
    dispose: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', forward);
    },
  };
}

/** A refusal reported once the run's timeoutMs passed while it waited to start again. */
function withWait(refused: SandboxError, timeoutMs: number): SandboxError {
  return new SandboxError('resource_exhausted', `${refused.message}; timeoutMs (${timeoutMs} ms) passed while the run waited to start again`, {
    cause: refused,
    ...(refused.errno === undefined ? {} : { errno: refused.errno }),
    ...(refused.syscall === undefined ? {} : { syscall: refused.syscall }),
    ...(refused.layer === undefined ? {} : { layer: refused.layer }),
  });
}

/** Start failures of runAdmitted that ran out of a resource (the command never ran). */
const exhaustedStarts = new WeakSet<SandboxError>();

/**
 * A start that failed, nothing run: the output file it made goes (the caller never hears of it),
 * and a failure for want of a resource is marked as one to start again.
 */
function failedStart(error: unknown, spill: { path: string } | undefined): unknown {
  if (spill !== undefined) {
    try {
      unlinkSync(spill.path);
      rmdirSync(dirname(spill.path));
    } catch {
      // already gone, or something else was put there: left as it is
    }
  }
  if (error instanceof SandboxError && error.code === 'resource_exhausted') exhaustedStarts.add(error);
  return error;
}

async function runAdmitted(command: SandboxCommand, options: RunOptions, backend: SandboxBackend, check?: () => void): Promise<RunResult> {
  const started = performance.now();
  // A burst's later starts wait for the event loop's next turn (start-pacing.ts); such a start
  // still belongs to the prewarm generation of this call.
  const prewarmGeneration = prewarmPool.generation;
  const turn = startTurn();
  if (turn !== undefined) await turn;
  let maxBuffer: number;
  let spill: { fd: number; path: string } | undefined;
  let capture: CaptureRequest;
  let child: SandboxedProcess;
  let collected: ReturnType<typeof collectStreams> | undefined;
  try {
    // Everything that decides the start happens within this turn; the clone (Linux) then runs
    // off the caller's thread, so the next start of a burst does not wait for it.
    let starting: Promise<SandboxedProcess>;
    try {
      check?.();
      maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
      if (!Number.isSafeInteger(maxBuffer) || maxBuffer <= 0) {
        throw new SandboxError('invalid_argument', 'options.maxBuffer must be a positive integer');
      }
      const input = options.input === undefined ? EMPTY : typeof options.input === 'string' ? Buffer.from(options.input) : options.input;
      const overflowKill = options.onMaxBuffer === 'kill';
      spill = options.keepOutputFile === true ? openOutputFile() : undefined;
      capture = { input, maxBuffer, overflowKill, inheritStdin: options.inheritStdin === true, prewarmGeneration, ...(spill === undefined ? {} : { spill: spill.fd }) };
      starting = startSandboxedAsync(command, { ...options, capture }, backend);
    } finally {
      endTurn();
    }
    try {
      child = await starting;
    } catch (error) {
      throw failedStart(error, spill);
    }
    // The addon reads stdout and stderr itself and hands them over with the exit; elsewhere the
    // pipes are read here, under the same rule.
    if (child.capturesOutput) child.stdin?.end(capture.input);
    else collected = collectStreams([child.stdin, child.stdout, child.stderr], capture, () => child?.kill('SIGKILL'));
  } finally {
    // The addon holds its own descriptors for the file; a collection here writes it until the end.
    if (spill !== undefined && collected === undefined) closeSync(spill.fd);
  }
  let exit: SandboxExit;
  try {
    exit = await child.exited;
  } finally {
    if (spill !== undefined && collected !== undefined) closeSync(spill.fd);
  }
  const none: CapturedStream = { head: '', bytes: 0 };
  const output: CapturedOutput = collected?.output() ?? child.capturedOutput() ?? { stdout: none, stderr: none };
  const startFailure = child.startFailure(output.stderr.head) ?? execExhausted(normalizeCommand(command, options.shell)[0] as string, exit);
  if (startFailure !== undefined) throw failedStart(startFailure, spill);
  if (output.overflow !== undefined) {
    throw new SandboxError('max_buffer_exceeded', `${output.overflow} exceeded maxBuffer (${maxBuffer} bytes); the sandbox was killed`);
  }
  const denials: SandboxDenial[] = exit.protectedPathDetails?.map((v) => protectedPathDenial(v.path, v.reason)) ?? exit.protectedPathViolations.map((path) => protectedPathDenial(path));
  for (const stream of ['stdout', 'stderr'] as const) {
    if (output[stream].tail !== undefined) denials.push(outputCapDenial(stream, maxBuffer, false));
  }
  if (exit.timedOut && options.timeoutMs !== undefined) denials.push(timeoutDenial(options.timeoutMs));
  if (exit.limitsHit?.includes('processes') === true) denials.push(processCapDenial());
  for (const cap of ['tmpBytes', 'shmBytes'] as const) if (exit.limitsHit?.includes(cap) === true) denials.push(tmpfsCapDenial(cap));
  if (exit.networkRefusals !== undefined) denials.push(networkDenial(exit.networkRefusals));
  if (exit.platformDenials !== undefined) denials.push(...exit.platformDenials);
  const result: RunResult = {
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: joinCaptured(output.stdout),
    stderr: joinCaptured(output.stderr),
    truncated: output.stdout.tail !== undefined || output.stderr.tail !== undefined,
    outputBytes: { stdout: output.stdout.bytes, stderr: output.stderr.bytes },
    denials,
    timedOut: exit.timedOut,
    aborted: exit.aborted,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    backend: child.backend,
    network: child.network,
    protectedPathViolations: exit.protectedPathViolations,
    prewarmed: child.prewarmed,
    scrubbedEnv: [...child.scrubbedEnv],
  };
  if (exit.aborted) result.abortReason = exit.abortReason;
  if (exit.execError !== undefined) {
    result.execError = exit.execError;
    result.stderr += execFailureMessage(normalizeCommand(command, options.shell)[0] as string, exit.execError);
  }
  if (spill !== undefined) result.outputFile = { path: spill.path, complete: output.spillFailed !== true };
  if (exit.limitsHit !== undefined) result.limitsHit = [...exit.limitsHit];
  if (exit.interruptedRunRepairs !== undefined) result.interruptedRunRepairs = exit.interruptedRunRepairs.map((v) => ({ path: v.path, reason: v.reason ?? '', interruptedRun: [...(v.interruptedRun ?? [])] }));
  if (child.limitsNotEnforced.length > 0) result.limitsNotEnforced = [...child.limitsNotEnforced];
  return result;
}
