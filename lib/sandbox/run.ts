// SPDX-License-Identifier: MIT
// runSandboxed(): run a command inside the sandbox to completion and collect its output.
import { SandboxError } from '../errors.js';
import type { SandboxBackendName } from '../backend/types.js';
import type { EngineOptions } from './authorize.js';
import type { RunOptions, SandboxCommand } from './options.js';
import { spawnSandboxed, type SandboxExit } from './process.js';
import { runOnPlatform } from './platforms.js';

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  backend: SandboxBackendName;
  network: 'deny' | 'allow';
  /** Set when the command could not be executed inside the sandbox. */
  execError?: SandboxExit['execError'];
  /** Protected paths the command created; they were removed when it ended. */
  protectedPathViolations: string[];
  /** A sandbox prewarmed for the same plan ran the command. */
  prewarmed: boolean;
}

const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;
const EMPTY = new Uint8Array(0);

/**
 * Runs `command` sandboxed; resolves when every process in the sandbox is gone. With `engine`, the
 * permission engine evaluates the command first: a deny rejects with `permission_denied`, a
 * prompt asks `onPermissionRequest` (none: `approval_required`), and an approved network prompt
 * runs the command with network allowed — still inside the sandbox.
 */
export async function runSandboxed(command: SandboxCommand, options: RunOptions & EngineOptions = {}): Promise<RunResult> {
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
  if (process.platform !== 'linux') return runOnPlatform(command, options);
  const started = performance.now();
  const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (!Number.isSafeInteger(maxBuffer) || maxBuffer <= 0) {
    throw new SandboxError('invalid_argument', 'options.maxBuffer must be a positive integer');
  }
  const input = options.input === undefined ? EMPTY : typeof options.input === 'string' ? Buffer.from(options.input) : options.input;
  // The addon reads stdout and stderr itself and hands them over with the exit: no stream objects.
  const child = spawnSandboxed(command, { ...options, capture: { input, maxBuffer } });
  // Only an input larger than a page needs a stdin stream (its errors are ignored by the process).
  child.stdin?.end(input);
  const exit = await child.exited;
  const output = child.capturedOutput() ?? { stdout: '', stderr: '' };
  if (exit.aborted) {
    throw new SandboxError('aborted', 'the sandboxed command was aborted; every process in its sandbox was killed');
  }
  if (output.overflow !== undefined) {
    throw new SandboxError('max_buffer_exceeded', `${output.overflow} exceeded maxBuffer (${maxBuffer} bytes); the sandbox was killed`);
  }
  const result: RunResult = {
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: output.stdout,
    stderr: output.stderr,
    timedOut: exit.timedOut,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    backend: child.backend,
    network: child.network,
    protectedPathViolations: exit.protectedPathViolations,
    prewarmed: child.prewarmed,
  };
  if (exit.execError !== undefined) result.execError = exit.execError;
  return result;
}
