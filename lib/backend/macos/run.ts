// SPDX-License-Identifier: MIT
// The macOS runner: `/usr/bin/sandbox-exec -p <profile> -D<params> -- argv…` through child_process,
// with the run contract of the other backends (exitCode, signal, stdout, stderr, timedOut, kill).
import { spawn } from 'node:child_process';

import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { buildSeatbeltProfile, type SeatbeltOptions } from './profile.js';

/** The absolute sandbox-exec path; never looked up on PATH (a planted sandbox-exec would run unsandboxed). */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** Options of one seatbelt run. */
export interface SeatbeltRunOptions extends SeatbeltOptions {
  /** Kill the whole process group after this many milliseconds; `timedOut` is then true. */
  timeoutMs?: number;
  /** Aborting kills the process group and rejects with `aborted`. */
  signal?: AbortSignal;
  /** Written to the command's stdin, which is then closed. Default: stdin is empty. */
  input?: string | Buffer;
  /** Largest stdout or stderr kept, in bytes (default 64 MiB); beyond it: `max_buffer_exceeded`. */
  maxBuffer?: number;
  /** Tests only: another sandbox-exec binary. */
  sandboxExecPath?: string;
  /** Tests only: the platform to assume (default `process.platform`). */
  platform?: NodeJS.Platform | string;
}

/** How a sandboxed command ended. */
export interface SandboxRunResult {
  /** Exit status, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null;
  /** Everything the command wrote to stdout, decoded as UTF-8. */
  stdout: string;
  /** Everything the command wrote to stderr, decoded as UTF-8. */
  stderr: string;
  /** True when `timeoutMs` elapsed and the command was killed. */
  timedOut: boolean;
}

/** A started run: its pid, its eventual result, and a way to kill it with everything it started. */
export interface SandboxRun {
  /** The command's pid (sandbox-exec execs it in place), also its process-group id. */
  pid: number;
  /** Settles when the command has exited and its output is complete. */
  result: Promise<SandboxRunResult>;
  /** Kills the process group (default SIGKILL). Safe to call more than once or after exit. */
  kill(signal?: NodeJS.Signals): void;
}

/** The sandbox-exec arguments for a plan: profile, one `-D NAME=value` per parameter, `--`, argv. */
export function buildSandboxExecArgs(plan: SandboxPlan, options: SeatbeltOptions): string[] {
  if (plan.argv.length === 0 || plan.argv[0] === '') {
    throw new SandboxError('invalid_argument', 'seatbelt run: argv[0] (the program) is empty');
  }
  // Seatbelt has no resource limits and child_process cannot set rlimits on the child: refuse
  // rather than run without limits the caller asked for (running weaker than asked is refused).
  const limits = Object.entries(plan.limits).filter(([, value]) => value !== undefined).map(([name]) => name);
  if (limits.length > 0) {
    throw new SandboxError('sandbox_unavailable', `macos-seatbelt cannot enforce the limits ${limits.join(', ')}; remove them or run on Linux`, { layer: 'limits' });
  }
  const { profile, params } = buildSeatbeltProfile(plan, options);
  const args = ['-p', profile];
  for (const [name, value] of Object.entries(params)) args.push('-D', `${name}=${value}`);
  args.push('--', ...plan.argv);
  return args;
}

/**
 * How long output is still collected after the command has exited. A process that left the group
 * (setsid) can hold the pipes open forever; the run settles on the exit, not on the pipes closing.
 */
const OUTPUT_GRACE_MS = 250;

/**
 * sandbox-exec's own failure: it prints `sandbox-exec: <why>` and exits non-zero when the profile
 * does not compile or cannot be applied (then nothing ran). A failed exec of the command itself
 * (`execvp() of ... failed`) is the command's exit status, as on the other backends.
 */
export function sandboxExecSetupFailure(exitCode: number | null, stderr: string): string | undefined {
  if (exitCode === null || exitCode === 0) return undefined;
  const first = stderr.split('\n', 1)[0] ?? '';
  if (!first.startsWith('sandbox-exec: ') || first.includes('execvp()')) return undefined;
  return first.slice('sandbox-exec: '.length);
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Starts the command under seatbelt. Rejects synchronously (throws) when it cannot start. */
export function spawnSeatbelt(plan: SandboxPlan, options: SeatbeltRunOptions): SandboxRun {
  const platform = options.platform ?? process.platform;
  if (platform !== 'darwin') {
    throw new SandboxError('sandbox_unavailable', `macos-seatbelt runs only on macOS, not on ${platform}`, { layer: 'seatbelt' });
  }
  if (options.signal?.aborted === true) throw new SandboxError('aborted', 'the run was aborted before it started');
  const args = buildSandboxExecArgs(plan, options);
  const maxBuffer = options.maxBuffer ?? 64 * 1024 * 1024;
  // detached: the command leads a new process group, so one kill reaches everything it started.
  const child = spawn(options.sandboxExecPath ?? SANDBOX_EXEC, args, {
    cwd: plan.cwd,
    env: plan.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let timedOut = false;
  let failure: SandboxError | undefined;
  const kill = (signal: NodeJS.Signals = 'SIGKILL'): void => {
    if (child.pid !== undefined) killGroup(child.pid, signal);
  };
  const result = new Promise<SandboxRunResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sizes = { out: 0, err: 0 };
    const collect = (which: 'out' | 'err', chunks: Buffer[]) => (chunk: Buffer): void => {
      sizes[which] += chunk.length;
      if (sizes[which] > maxBuffer) {
        failure ??= new SandboxError('max_buffer_exceeded', `std${which} exceeded maxBuffer (${maxBuffer} bytes)`);
        kill();
        return;
      }
      chunks.push(chunk);
    };
    child.stdout.on('data', collect('out', out));
    child.stderr.on('data', collect('err', err));
    child.stdin.on('error', () => {
      // EPIPE when the command exits without reading its input: not an error of the run.
    });
    child.stdin.end(options.input ?? '');
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            kill();
          }, options.timeoutMs);
    const onAbort = (): void => {
      failure ??= new SandboxError('aborted', 'the run was aborted');
      kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error: NodeJS.ErrnoException) => {
      failure ??= new SandboxError('spawn_failed', `cannot start ${options.sandboxExecPath ?? SANDBOX_EXEC}: ${error.message}`, {
        cause: error,
        syscall: 'spawn',
        layer: 'seatbelt',
        ...(error.errno !== undefined ? { errno: -error.errno } : {}),
      });
    });
    let exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
    let grace: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      if (grace !== undefined) clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever still holds the pipes (a process that left the group) is not waited for.
      child.stdout.destroy();
      child.stderr.destroy();
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      const stderr = Buffer.concat(err).toString('utf8');
      const setup = sandboxExecSetupFailure(exit?.exitCode ?? null, stderr);
      if (setup !== undefined) {
        reject(new SandboxError('spawn_failed', `sandbox-exec could not apply the seatbelt profile, so nothing ran (exit ${exit?.exitCode}): ${setup}`, { layer: 'seatbelt', syscall: 'sandbox_init' }));
        return;
      }
      resolve({ exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null, stdout: Buffer.concat(out).toString('utf8'), stderr, timedOut });
    };
    // Nothing outlives the call: when the command exits, whatever it left in its group goes too
    // (also the background jobs that would otherwise hold the output pipes open).
    child.on('exit', (exitCode, signal) => {
      exit = { exitCode, signal };
      kill();
      grace = setTimeout(settle, OUTPUT_GRACE_MS);
    });
    child.on('close', (exitCode, signal) => {
      exit ??= { exitCode, signal };
      settle();
    });
  });
  return { pid: child.pid ?? -1, result, kill };
}

/** Runs the command under seatbelt and resolves when it and its process group are done. */
export function runSeatbelt(plan: SandboxPlan, options: SeatbeltRunOptions): Promise<SandboxRunResult> {
  try {
    return spawnSeatbelt(plan, options).result;
  } catch (error) {
    return Promise.reject(error);
  }
}
