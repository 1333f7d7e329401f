// SPDX-License-Identifier: MIT
// The backend contract: what the OS-independent lifecycle (process.ts) and each OS's starter
// (lib/backend/<os>/start.ts) exchange. Types only, so every side can import it without cycles.
import type { Readable, Writable } from 'node:stream';

import type { SandboxError } from '../errors.js';
import type { HostFacts } from '../host-facts.js';
import type { SandboxBackendName, SandboxPlan } from '../backend/types.js';
import type { SandboxDenial } from './denials.js';
import type { RunOptions, SandboxCommand, SpawnSandboxedOptions } from './options.js';

/** A protected path the command created or changed (now removed), with the reason when known. */
export interface ProtectedPathReport {
  path: string;
  /** What it was (for example a git config with a key that runs a program). */
  reason?: string;
  /** Set when it was done for an earlier run killed before its own check: that run's write roots. */
  interruptedRun?: string[];
}

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
  /** The same with the reason for each, when there are any (RunResult turns them into `protected_metadata` denials). */
  protectedPathDetails?: ProtectedPathReport[];
  /**
   * What the after-run checks of earlier runs of these write roots, whose process was killed before
   * they ran, removed or put back before this run started (this command did none of it).
   */
  interruptedRunRepairs?: ProtectedPathReport[];
  /** Refusals the OS sandbox itself reported for this run (macOS: the unified log's seatbelt lines). */
  platformDenials?: SandboxDenial[];
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

/** Output collected for a process spawned with `capture`. */
export interface CapturedOutput {
  stdout: CapturedStream;
  stderr: CapturedStream;
  /** With overflowKill: the stream that went over maxBuffer first (the sandbox was killed), if any. */
  overflow?: 'stdout' | 'stderr';
  /** With a spill file: a write to it failed, so it holds only part of the output. */
  spillFailed?: boolean;
}

/** What runSandboxed asks of a start: the output collected for a result instead of streams. */
export interface CaptureRequest {
  /** Written to stdin, then EOF. */
  input: Uint8Array;
  /** Bytes kept of each stream: past it, its head and tail (or, with overflowKill, a kill). */
  maxBuffer: number;
  /** Kill the sandbox when a stream goes over maxBuffer instead of truncating it. */
  overflowKill?: boolean;
  /** The command reads the caller's stdin instead of `input`. */
  inheritStdin?: boolean;
  /** A descriptor that receives every byte of stdout and stderr as it arrives. */
  spill?: number;
  /**
   * The prewarm pool's generation when runSandboxed was called: a start paced to a later turn of
   * the event loop (start-pacing.ts) still counts as made before a clear() that came in between,
   * and warms nothing after it.
   */
  prewarmGeneration?: number;
}

/** @internal spawnSandboxed's options plus what runSandboxed and the CLI hand over internally. */
export interface InternalSpawnOptions extends Omit<SpawnSandboxedOptions, 'stdio'> {
  stdio?: SpawnSandboxedOptions['stdio'];
  /** runSandboxed: stdout and stderr are collected (see `capturedOutput()`); `stdio` is ignored. */
  capture?: CaptureRequest;
}

/** One standard stream as the caller asked for it. */
export type StdioChoice = 'pipe' | 'inherit' | 'ignore';

/** The streams a starter sets up. */
export interface StartIo {
  /** stdin, stdout, stderr as the caller asked (with `capture`: what the capture needs). */
  stdio: [StdioChoice, StdioChoice, StdioChoice];
  /** runSandboxed's capture; a starter that cannot collect natively leaves it to the caller's streams. */
  capture?: CaptureRequest;
  /** The caller's prewarm choice (Linux serves a matching run from a sandbox set up ahead). */
  prewarm?: boolean | undefined;
}

/** How the OS says a sandbox ended, before the lifecycle adds timeout, abort and protected paths. */
export interface OsExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The command (or the OS's launcher) could not be executed. */
  execError?: { errno: number; code: string };
  /** The output, when the starter collected it itself (`OsProcess.capturesOutput`). */
  captured?: CapturedOutput;
  /** Caps the command ran into. */
  limitsHit?: string[];
  /** With the network denied: packets the sandbox refused to route out (Linux counts them). */
  networkRefusals?: number;
  /** The sandbox itself could not start, so nothing ran: runSandboxed rejects with it. */
  startFailure?: SandboxError;
  /** Refusals the OS sandbox itself reported for this run (macOS: the unified log's seatbelt lines). */
  platformDenials?: SandboxDenial[];
}

/** The process an OS starter returns: everything the lifecycle needs to drive it. */
export interface OsProcess {
  /**
   * The pid the caller sees (the sandbox's init on Linux, the command's group leader on macOS); 0
   * until the process exists when its start finishes later (`started`).
   */
  readonly pid: number;
  /**
   * Set when the OS start finishes after the call (Windows' spawnSandboxed: the ACLs are applied
   * off the caller's thread first): true once the process exists, false when it never will (the
   * start failed or was cancelled by a kill; the exit says which).
   */
  readonly started?: Promise<boolean>;
  /** Our ends of stdin, stdout and stderr ('pipe' streams), else null. */
  readonly stdio: [Writable | null, Readable | null, Readable | null];
  /** True when the starter collects the output itself and hands it over with the exit. */
  readonly capturesOutput: boolean;
  /** True when a prewarmed sandbox runs the command. */
  readonly prewarmed: boolean;
  /** Default caps this run goes without because no mechanism can enforce them here (Linux: `processes`). */
  readonly limitsNotEnforced?: readonly string[];
  /** Sends a signal number; SIGKILL (9) kills every process of the sandbox. False when gone. */
  kill(signal: number): boolean;
  /**
   * Once every process of the sandbox is gone: removes what the command created at protected
   * paths or left for host git to run, and says what and why.
   */
  checkProtectedPaths(): ProtectedPathReport[];
  /**
   * Once every process of the sandbox is gone, before checkProtectedPaths: the part of the check
   * that can run off the caller's thread (Linux: the repository scans), started now; call
   * checkProtectedPaths once the promise has settled (it never rejects). Undefined: nothing to wait for.
   */
  prepareCheck?(): Promise<void> | undefined;
  /** With captured output: the OS launcher's own failure read from stderr (nothing ran), if any. */
  setupFailure?(exitCode: number | null, stderr: string): SandboxError | undefined;
}

/** A prepared run: the plan and what was found preparing it, owned by one start. */
export interface PreparedRun {
  /** The resolved plan. */
  readonly plan: SandboxPlan;
  /** The backend that runs it. */
  readonly backend: SandboxBackendName;
  /**
   * The host facts the plan was resolved with, handed over once, within the synchronous call
   * that prepared the plan; later (or again) fresh facts, so nothing stale decides a later start.
   */
  takeFacts(): HostFacts;
  /** Linux: a long shell script handed over on a descriptor instead of argv. */
  readonly script?: Buffer | undefined;
  /** macOS, Windows: the command's private temp dir (its TMPDIR), removed by `release`. */
  readonly tmpDir?: string;
  /** The environments the plan's credential baseline was computed from (ours and the command's). */
  readonly envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>;
  /** Releases what preparing took (runtime-state lease, private temp dir). Idempotent. */
  release(): void;
}

/** An OS's process starter: starts a prepared run; `onExit` is called once when it is gone. */
export type Starter = (prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void) => OsProcess;

/**
 * A starter whose OS work may finish off the caller's thread: everything that decides the start
 * happens within the call (as with `Starter`), the process exists once the promise resolves.
 */
export type AsyncStarter = (prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void) => Promise<OsProcess>;

/** What a backend module offers the lifecycle. */
export interface SandboxBackend {
  /** Validates and prepares a command (throws SandboxError; nothing ran). */
  prepare(command: SandboxCommand, options: RunOptions): PreparedRun;
  /** Starts a prepared run. */
  start: Starter;
  /** Starts a prepared run without holding the caller's thread for the OS work (Linux). */
  startAsync?: AsyncStarter;
}
