// SPDX-License-Identifier: MIT
// spawnSandboxed(): the streaming form. Resolves the plan, refuses to run weaker than asked, starts
// the sandbox through the native backend and exposes stdio streams, kill() and the exit.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';

import { SandboxError } from '../errors.js';
import { buildSandboxEnv } from '../env.js';
import { callNative, nativeBindingPath } from '../native/load.js';
import { layersDisabledForTesting, probeSync, type LayerName, type ProbeReport } from '../probe.js';
import { buildLinuxSpec, hostViewOf, type StdioMode } from '../backend/linux/spec.js';
import { HostFacts, attachHostFacts, takeHostFacts } from '../host-facts.js';
import type { BackendInfo, SandboxBackendName, SandboxPlan } from '../backend/types.js';
import { checkOptions, commandScript, normalizeCommand, validateOptions, type SandboxCommand, type SandboxOptions, type SpawnSandboxedOptions } from './options.js';
import { resolvePlan, resolveWorkspace } from './plan.js';
import { createPidsLimit, pidNamespaceMax } from './cgroup.js';
import { DEFAULT_PROCESSES } from './default-limits.js';
import { checkProtectedPaths, guardProtectedPaths, type ProtectedPathViolation } from './protected.js';
import { buildPrewarmKey, prewarmEnabled, prewarmPool } from './prewarm.js';
import type { NativeExit, NativeSpawned } from '../native/types.js';
import { spawnOnPlatform } from './platforms.js';
import { acquireRuntimeState, attachRuntimeState, releaseRuntimeState } from './runtime-state.js';
import { noteWriteRoots } from './earlier-roots.js';

/** How a sandboxed process ended. */
export interface SandboxExit {
  /** The command's exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it (e.g. 'SIGKILL'), or null. */
  signal: NodeJS.Signals | null;
  /** Set when the command could not be executed inside the sandbox (126/127). */
  execError?: { errno: number; code: string };
  /** The sandbox was killed because `timeoutMs` passed. */
  timedOut: boolean;
  /** The sandbox was killed because the AbortSignal fired. */
  aborted: boolean;
  /** With `aborted`: the signal's `reason` (an AbortError DOMException unless the caller gave one). */
  abortReason?: unknown;
  /**
   * Protected paths (.zero, .agents, git hooks, configs and pointer files host git would run or
   * follow) the command created or changed; they were removed, and the exit code is non-zero.
   */
  protectedPathViolations: string[];
  /** Caps the command ran into (`processes`: a fork was refused), when the kernel tells. */
  limitsHit?: string[];
  /**
   * With the network denied: how many packets the command sent that had no route out of the
   * sandbox's network namespace (the kernel's count; see native/linux/net_counters.h).
   */
  networkRefusals?: number;
  /** The same with the reason for each (RunResult turns them into `protected_metadata` denials). */
  protectedPathDetails?: ProtectedPathViolation[];
}

/** @internal spawnSandboxed's options plus what runSandboxed and the CLI hand over internally. */
export interface InternalSpawnOptions extends Omit<SpawnSandboxedOptions, 'stdio'> {
  stdio?: SpawnSandboxedOptions['stdio'];
  /**
   * runSandboxed: the addon collects stdout and stderr itself and delivers them with the exit (see
   * `capturedOutput()`); stdin gets `input` (then EOF). `stdio` is ignored.
   */
  capture?: { input: Uint8Array; maxBuffer: number; overflowKill?: boolean; inheritStdin?: boolean; spill?: number };
}

/** One captured stream: all of it, or its head and tail with the byte count in between. */
export interface CapturedStream {
  /** The whole stream, or its head when `tail` is set (ends on a character boundary). */
  head: string;
  /** Set when the stream went over maxBuffer: its kept end. */
  tail?: string;
  /** Bytes the stream produced in all. */
  bytes: number;
}

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
  /** Reserved for errors after the spawn (none today: spawn errors throw synchronously). */
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

/** Output collected by the addon for a process spawned with `capture`. */
export interface CapturedOutput {
  stdout: CapturedStream;
  stderr: CapturedStream;
  /** With overflowKill: the stream that went over maxBuffer first (the sandbox was killed), if any. */
  overflow?: 'stdout' | 'stderr';
  /** With a spill file: a write to it failed, so it holds only part of the output. */
  spillFailed?: boolean;
}

function capturedStream(head: string | undefined, tail: string | undefined, bytes: number | undefined): CapturedStream {
  const stream: CapturedStream = { head: head ?? '', bytes: bytes ?? 0 };
  if (tail !== undefined) stream.tail = tail;
  return stream;
}

/** The largest input handed to the addon with the launch; more goes through a stdin stream. */
const DIRECT_INPUT_BYTES = 4096;

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, value]) => [value, name as NodeJS.Signals]),
);

/** The layers a plan needs on Linux. */
export function requiredLayers(plan: Pick<SandboxPlan, 'network'>): LayerName[] {
  const layers: LayerName[] = ['userns', 'mountns', 'pidns', 'ipcns', 'utsns', 'landlock', 'seccomp'];
  if (plan.network === 'deny') layers.push('netns');
  return layers;
}

function unavailable(missing: LayerName[], report: ProbeReport): SandboxError {
  const details = missing
    .map((name) => `${name}: ${report.layers[name]?.reason ?? 'not available'} (fix: ${report.layers[name]?.fix ?? 'n/a'})`)
    .join('; ');
  return new SandboxError('sandbox_unavailable', `the sandbox cannot enforce the policy here, so nothing ran. Missing ${details}`, { layer: missing[0] as string });
}

/**
 * Fails closed before anything runs, on what is cheap to know: the platform, the Landlock ABI (one
 * system call) and layers switched off for testing. The spawn itself is the real test of every
 * other layer; when it fails, `explainSpawnFailure` runs the full probe to say why.
 */
export function assertEnforceable(plan: Pick<SandboxPlan, 'network'>): { abi: number; isRoot: boolean; arch: string } {
  if (process.platform !== 'linux') {
    throw new SandboxError('sandbox_unavailable', `no native sandbox backend is available on ${process.platform} yet; refusing to run unsandboxed`, { layer: 'backend' });
  }
  const required = requiredLayers(plan);
  const disabled = layersDisabledForTesting().filter((name) => required.includes(name));
  const abi = callNative((binding) => binding.landlockAbi());
  if (disabled.length > 0 || abi < 1) {
    const report = probeSync();
    const missing = required.filter((name) => report.layers[name]?.available !== true);
    throw unavailable(missing.length > 0 ? missing : ['landlock'], report);
  }
  return { abi, isRoot: process.getuid?.() === 0, arch: process.arch };
}

/**
 * What the engine needs to know about the backend, from the same cheap checks: the spawn itself
 * proves the rest (and a failing layer then refuses with the probe's explanation).
 */
export function quickBackendInfo(): BackendInfo {
  if (process.platform !== 'linux') {
    // macOS and Windows: the backend selection over the measured probe facts.
    const report = probeSync();
    const name = report.platform === 'darwin' ? 'macos-seatbelt' : report.platform === 'win32' ? 'windows-appcontainer' : 'unavailable';
    return {
      name, platform: process.platform, nativeIsolation: true, commandWrapping: true, setupInitialized: true,
      available: report.canEnforceDefaultPolicy,
      ...(report.canEnforceDefaultPolicy ? {} : { message: report.missing.map((m) => `${m.layer}: ${m.reason}`).join('; ') }),
    };
  }
  const base = { name: 'linux-native' as const, platform: process.platform, nativeIsolation: true, commandWrapping: true, setupInitialized: true };
  try {
    assertEnforceable({ network: 'deny' });
    return { ...base, available: true };
  } catch (error) {
    return { ...base, available: false, message: error instanceof Error ? error.message : String(error) };
  }
}

const SPAWN_LAYERS = new Set<string>(['userns', 'mount', 'netns', 'landlock', 'seccomp', 'capabilities']);

/** A spawn that failed in a sandbox layer becomes sandbox_unavailable, explained by the probe. */
export function explainSpawnFailure(error: unknown, plan: Pick<SandboxPlan, 'network'>): unknown {
  if (!(error instanceof SandboxError) || error.layer === undefined || !SPAWN_LAYERS.has(error.layer)) return error;
  const report = probeSync();
  const missing = requiredLayers(plan).filter((name) => report.layers[name]?.available !== true);
  if (missing.length === 0) return error;
  const wrapped = unavailable(missing, report);
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

/** node:net (and node:stream with it) loads only for piped stdio: `zero-sandbox run` inherits its stdio (~2 ms of start). */
let net: typeof import('node:net') | undefined;
function pipeSocket(fd: number, readable: boolean): import('node:net').Socket {
  net ??= createRequire(import.meta.url)('node:net') as typeof import('node:net');
  return new net.Socket({ fd, readable, writable: !readable });
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

/**
 * A command running in a sandbox. Like `child_process`: `exit` when the sandbox is gone, then
 * `close` once stdout and stderr have delivered everything; `exited` resolves with `close`.
 */
export class SandboxedProcess extends EventEmitter<SandboxedProcessEvents> {
  readonly pid: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly backend: SandboxBackendName = 'linux-native';
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
   * discarded when the sandbox exits, as in `child_process`. Rejects with a SandboxError only when
   * the host-side work after the exit (protected-path cleanup) failed: the workspace was then not
   * fully checked.
   */
  readonly exited: Promise<SandboxExit>;
  /** The exit once the sandbox is gone (the `exit` event), else null. */
  exit: SandboxExit | null = null;
  #done = false;
  #graceTimer: NodeJS.Timeout | undefined;
  #timedOut = false;
  #aborted = false;
  #captured: CapturedOutput | undefined;

  /** @internal */
  constructor(plan: SandboxPlan, options: InternalSpawnOptions, context: ReturnType<typeof assertEnforceable>, script?: Buffer) {
    super();
    this.network = plan.network;
    this.scrubbedEnv = plan.scrubbedEnv ?? [];
    const capture = options.capture;
    const given = options.stdio ?? 'pipe';
    const modes = typeof given === 'string' ? [given, given, given] : given;
    const stdio: [StdioMode, StdioMode, StdioMode] = capture === undefined
      ? modes.map((mode, i): StdioMode => (mode === 'inherit' ? i : mode)) as [StdioMode, StdioMode, StdioMode]
      : [capture.inheritStdin === true ? 0 : capture.input.length <= DIRECT_INPUT_BYTES ? capture.input : 'pipe', 'capture', 'capture'];
    // A root caller's process limit (RLIMIT_NPROC does not bind root) is a pids cgroup where a
    // writable pids hierarchy exists, else the sandbox PID namespace's own pid_max (Linux 6.14+).
    // With neither, a cap the caller set is refused (buildRlimits) and the default cap is reported
    // as not enforced (limitsNotEnforced), never dropped silently.
    const processes = plan.limits.processes ?? DEFAULT_PROCESSES;
    const pids = context.isRoot ? createPidsLimit(processes, undefined, false) : undefined;
    const pidMax = context.isRoot && pids === undefined ? pidNamespaceMax(processes) : undefined;
    this.limitsNotEnforced = context.isRoot && pids === undefined && pidMax === undefined ? ['processes'] : [];
    // The filesystem facts the plan was resolved with (this call only): each path looked up once.
    const facts = takeHostFacts(plan);
    // Every git file that could make host git run code later: read-only now, checked after the run.
    const guarded = guardProtectedPaths(plan);
    let spec;
    try {
      spec = buildLinuxSpec(guarded.plan, stdio, {
        landlockAbi: context.abi,
        isRoot: context.isRoot,
        arch: context.arch,
        bindingPath: nativeBindingPath() ?? '',
        ...(pids === undefined ? {} : { cgroupProcsFd: pids.fd }),
        ...(pidMax === undefined ? {} : { pidMax }),
      }, hostViewOf(facts));
    } catch (error) {
      pids?.closeFd();
      pids?.remove();
      throw error;
    }
    let resolveExit!: (exit: SandboxExit) => void;
    let rejectExit!: (error: SandboxError) => void;
    this.exited = new Promise((resolve, reject) => {
      resolveExit = resolve;
      rejectExit = reject;
    });
    // The host-side work once the sandbox is gone: the exit as the caller sees it.
    const settle = (raw: NativeExit): SandboxExit => {
      this.#done = true;
      clearTimeout(this.#graceTimer);
      if (capture !== undefined) {
        this.#captured = {
          stdout: capturedStream(raw.stdout, raw.stdoutTail, raw.stdoutBytes),
          stderr: capturedStream(raw.stderr, raw.stderrTail, raw.stderrBytes),
        };
        if (raw.overflow !== undefined) this.#captured.overflow = raw.overflow;
        if (raw.spillFailed === true) this.#captured.spillFailed = true;
      }
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // The sandbox is gone (pid 1 reaped, its namespace emptied): nothing can race the check.
      const violations = checkProtectedPaths(guarded.guard);
      const exit: SandboxExit = {
        // A command that left something for host git to run has failed, whatever it returned.
        exitCode: violations.length > 0 && raw.exitCode === 0 ? 1 : raw.exitCode,
        signal: raw.signal === null ? null : (SIGNAL_NAMES.get(raw.signal) ?? null),
        timedOut: this.#timedOut,
        aborted: this.#aborted,
        ...(this.#aborted ? { abortReason: options.signal?.reason } : {}),
        protectedPathViolations: violations.map((v) => v.path),
        protectedPathDetails: violations,
      };
      if (pids?.hit() === true) exit.limitsHit = ['processes'];
      // Only a denied network means these packets were refused by the sandbox.
      if (this.network === 'deny' && raw.noRouteSends !== undefined && raw.noRouteSends > 0) exit.networkRefusals = raw.noRouteSends;
      pids?.remove();
      if (raw.execErrno !== 0) {
        const code = Object.entries(constants.errno).find(([, value]) => value === raw.execErrno)?.[0] ?? `errno ${raw.execErrno}`;
        exit.execError = { errno: raw.execErrno, code };
      }
      return exit;
    };
    // The exit arrives in a native callback: a failure of the host-side work after it (protected
    // path cleanup, ...) must not escape into the addon. It becomes a SandboxError: `exited`
    // rejects and `error` listeners hear it. A listener's own error stays the caller's: an
    // uncaught exception, as with Node's own events (`close` and `exited` still follow).
    const onExit = (raw: NativeExit) => {
      let exit: SandboxExit;
      try {
        exit = settle(raw);
      } catch (error) {
        this.#done = true;
        clearTimeout(timer);
        const failure = exitFailure(error);
        rejectExit(failure);
        if (this.listenerCount('error') > 0) this.emit('error', failure);
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
    // A pids cgroup is joined at clone time (a prewarmed sandbox's init and waiting command
    // process, which have started nothing yet, are moved into it before the launch); a long
    // script's descriptor is installed at clone time: such a run never uses a prewarmed sandbox.
    const key = prewarmEnabled(options.prewarm) && script === undefined ? buildPrewarmKey(spec) : undefined;
    let native: NativeSpawned | null = null;
    let warm = key === undefined ? undefined : prewarmPool.take(key);
    if (warm !== undefined && pids !== undefined) {
      try {
        pids.adopt(warm.pid);
      } catch {
        const stale = warm;
        callNative((binding) => binding.kill(stale.pid, 9));
        warm = undefined; // start cold instead
      }
    }
    if (warm !== undefined) {
      warm.listener = onExit;
      const launch = { argv: spec.argv, env: spec.env, cwd: spec.cwd, stdio: spec.stdio, rlimits: spec.linux.rlimits, maxBuffer: capture?.maxBuffer, overflowKill: capture?.overflowKill === true, ...(capture?.spill === undefined ? {} : { spill: capture.spill }) };
      native = callNative((binding) => binding.launch(warm.pid, launch));
      if (native === null) {
        warm.listener = undefined; // it died before it could be used: start cold instead
        const dead = warm;
        callNative((binding) => binding.kill(dead.pid, 9));
      }
    }
    this.prewarmed = native !== null && warm !== undefined;
    if (native === null) {
      try {
        const full = {
          ...spec,
          ...(capture === undefined ? {} : { maxBuffer: capture.maxBuffer, overflowKill: capture.overflowKill === true }),
          ...(capture?.spill === undefined ? {} : { spill: capture.spill }),
          ...(script === undefined ? {} : { script }),
        };
        native = callNative((binding) => binding.spawn(full, onExit));
      } catch (error) {
        pids?.closeFd();
        pids?.remove();
        throw explainSpawnFailure(error, plan);
      }
    }
    pids?.closeFd();
    // Warming the next sandbox waits until this call has returned its process.
    if (key !== undefined) {
      const generation = prewarmPool.generation;
      setImmediate(() => prewarmPool.noteUse(key, spec, generation));
    }
    this.pid = native.pid;
    this.stdin = native.stdin === undefined ? null : pipeSocket(native.stdin, false);
    this.stdout = native.stdout === undefined ? null : pipeSocket(native.stdout, true);
    this.stderr = native.stderr === undefined ? null : pipeSocket(native.stderr, true);
    // A closed stdin on the other side is not an error for us.
    this.stdin?.on('error', () => {});
    const timeoutMs = options.timeoutMs;
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
      this.#timedOut = true;
      this.kill('SIGKILL');
    }, timeoutMs);
    const onAbort = () => {
      this.#aborted = true;
      this.kill('SIGKILL');
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
  }

  /** @internal With `capture`: the collected output, once `exited` has resolved. */
  capturedOutput(): CapturedOutput | undefined {
    return this.#captured;
  }

  /**
   * Sends `signal` (default SIGTERM) to the command's process group; unless the sandbox is gone
   * within `graceMs` (default 5000), every process in it is then killed with SIGKILL, like
   * `timeout -k`. SIGKILL kills every process in the sandbox at once. Returns false when the
   * sandbox is already gone.
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
    const sent = callNative((binding) => binding.kill(this.pid, number));
    if (number !== constants.signals.SIGKILL && number !== 0 && graceMs > 0 && this.#graceTimer === undefined) {
      this.#graceTimer = setTimeout(() => this.kill('SIGKILL'), graceMs);
      this.#graceTimer.unref();
    }
    return sent;
  }
}

/** Prepares a plan from a command and options (validation, env scrub, credential baseline). */
export function prepareSandbox(command: SandboxCommand, options: SandboxOptions): SandboxPlan {
  const argv = normalizeCommand(command, options.shell);
  const checked = checkOptions(options);
  const source = options.env ?? process.env;
  // Managed runtime state: per-workspace tool caches outside the workspace become write
  // roots and the env points tools at them; leased until releaseRuntimeState(plan).
  // The lease lingers briefly after a run, so a burst in one workspace prepares the state once.
  const facts = new HostFacts();
  // Refused before any state is made for it (the plan below checks it again, from the memo).
  resolveWorkspace(checked.workspace, facts);
  const runtime = acquireRuntimeState(checked.workspace ?? process.cwd(), { argv, lingerMs: 3000, facts });
  try {
    const scrubbedEnv: string[] = [];
    const commandEnv = buildSandboxEnv(source, { backend: 'linux-native', network: checked.network, pass: checked.envPass, tmpDir: '/tmp', overrides: runtime?.env ?? {}, scrubbed: scrubbedEnv });
    const plan = resolvePlan({ argv, options: checked, envs: options.env === undefined ? [process.env] : [process.env, options.env], commandEnv, scrubbedEnv, runtimeWriteRoots: runtime?.writeRoots ?? [], facts });
    attachRuntimeState(plan, runtime);
    attachHostFacts(plan, facts);
    // Remembered so that a later run refuses a workspace reached through a link planted in one.
    noteWriteRoots(plan.writeRoots.map((w) => w.root).filter((root) => root !== plan.workspace && !(runtime?.writeRoots ?? []).includes(root)));
    return plan;
  } catch (error) {
    runtime?.release();
    throw error;
  }
}

/**
 * Starts a command inside the sandbox and returns at once with its streams. Options are validated
 * first: a bad one throws SandboxError `invalid_argument` and nothing runs.
 */
export function spawnSandboxed(command: SandboxCommand, options: SpawnSandboxedOptions = {}): SandboxedProcess {
  validateOptions('spawn', options);
  return startSandboxed(command, options);
}

/** @internal spawnSandboxed without the schema check, for options this package built itself. */
export function startSandboxed(command: SandboxCommand, options: InternalSpawnOptions): SandboxedProcess {
  if (process.platform !== 'linux') return spawnOnPlatform(command, options);
  const plan = prepareSandbox(command, options);
  try {
    const child = new SandboxedProcess(plan, options, assertEnforceable(plan), commandScript(command));
    const release = () => releaseRuntimeState(plan);
    void child.exited.then(release, release);
    return child;
  } catch (error) {
    releaseRuntimeState(plan);
    throw error;
  }
}
