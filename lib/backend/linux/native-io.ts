// SPDX-License-Identifier: MIT
// What the Linux backend hands the addon and takes back: the stdio modes of a spec, a prewarmed
// sandbox's launch, a cold start's spec, the started process with its pipes, and the exit record
// as the lifecycle (lib/sandbox/process.ts) reads it.
import { createRequire } from 'node:module';
import { constants } from 'node:os';

import { callNative } from '../../native/load.js';
import type { NativeExit, NativeSpawned } from '../../native/types.js';
import type { OsExit, OsProcess, PreparedRun, StartIo } from '../../sandbox/contract.js';
import type { prewarmPool } from '../../sandbox/prewarm.js';
import type { LinuxNativeSpec, StdioMode } from './spec.js';
import { withPreparedPolicy } from './prepared-policy.js';

/** The largest input handed to the addon with the launch; more goes through a stdin stream. */
const DIRECT_INPUT_BYTES = 4096;

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, value]) => [value, name as NodeJS.Signals]),
);

type WarmSandbox = NonNullable<ReturnType<typeof prewarmPool.take>>;

/** node:net (and node:stream with it) loads only for piped stdio: `zero-sandbox run` inherits its stdio (~2 ms of start). */
let net: typeof import('node:net') | undefined;
function pipeSocket(fd: number, readable: boolean): import('node:net').Socket {
  net ??= createRequire(import.meta.url)('node:net') as typeof import('node:net');
  return new net.Socket({ fd, readable, writable: !readable });
}

function capturedStream(head: string | undefined, tail: string | undefined, bytes: number | undefined) {
  return { head: head ?? '', bytes: bytes ?? 0, ...(tail === undefined ? {} : { tail }) };
}

/** The addon's exit record as the lifecycle reads it. */
export function toOsExit(raw: NativeExit, capturing: boolean): OsExit {
  const exit: OsExit = { exitCode: raw.exitCode, signal: raw.signal === null ? null : (SIGNAL_NAMES.get(raw.signal) ?? null) };
  if (raw.noRouteSends !== undefined) exit.networkRefusals = raw.noRouteSends;
  if (raw.execErrno !== 0) {
    const code = Object.entries(constants.errno).find(([, value]) => value === raw.execErrno)?.[0] ?? `errno ${raw.execErrno}`;
    exit.execError = { errno: raw.execErrno, code };
  }
  if (capturing) {
    exit.captured = { stdout: capturedStream(raw.stdout, raw.stdoutTail, raw.stdoutBytes), stderr: capturedStream(raw.stderr, raw.stderrTail, raw.stderrBytes) };
    if (raw.overflow !== undefined) exit.captured.overflow = raw.overflow;
    if (raw.spillFailed === true) exit.captured.spillFailed = true;
  }
  return exit;
}

/** The stdio the spec asks for: the caller's modes, or the addon's capture (input given directly when small). */
export function stdioModes(io: StartIo): [StdioMode, StdioMode, StdioMode] {
  const capture = io.capture;
  if (capture === undefined) return io.stdio.map((mode, i): StdioMode => (mode === 'inherit' ? i : mode)) as [StdioMode, StdioMode, StdioMode];
  return [capture.inheritStdin === true ? 0 : capture.input.length <= DIRECT_INPUT_BYTES ? capture.input : 'pipe', 'capture', 'capture'];
}

/**
 * Hands the command to a prewarmed sandbox taken from the pool; null when it died before it could
 * be used (it is killed, its listener dropped, and the run starts cold).
 */
export function launchPrewarmed(warm: WarmSandbox, spec: LinuxNativeSpec, capture: StartIo['capture'], exited: (raw: NativeExit) => void): NativeSpawned | null {
  warm.listener = exited;
  const launch = { argv: spec.argv, env: spec.env, cwd: spec.cwd, stdio: spec.stdio, rlimits: spec.linux.rlimits, maxBuffer: capture?.maxBuffer, overflowKill: capture?.overflowKill === true, ...(capture?.spill === undefined ? {} : { spill: capture.spill }) };
  const warmed = callNative((binding) => binding.launch(warm.pid, launch));
  if (warmed === null) {
    warm.listener = undefined;
    callNative((binding) => binding.kill(warm.pid, 9));
  }
  return warmed;
}

/** A cold start's spec: the plan's, with the pids cgroup to join, the capture and a long script. */
export function coldSpec(spec: LinuxNativeSpec, cgroupFd: number | undefined, capture: StartIo['capture'], script: PreparedRun['script']): object {
  const linux = withPreparedPolicy(spec.linux);
  return {
    ...spec,
    linux: cgroupFd === undefined ? linux : { ...linux, cgroupProcsFd: cgroupFd },
    ...(capture === undefined ? {} : { maxBuffer: capture.maxBuffer, overflowKill: capture.overflowKill === true }),
    ...(capture?.spill === undefined ? {} : { spill: capture.spill }),
    ...(script === undefined ? {} : { script }),
  };
}

/** The started sandbox as the lifecycle holds it. */
export function osProcessOf(native: NativeSpawned, facts: Pick<OsProcess, 'capturesOutput' | 'prewarmed' | 'limitsNotEnforced'>, check: OsProcess['checkProtectedPaths'], prepareCheck?: OsProcess['prepareCheck']): OsProcess {
  const pid = native.pid;
  return {
    pid,
    stdio: [
      native.stdin === undefined ? null : pipeSocket(native.stdin, false),
      native.stdout === undefined ? null : pipeSocket(native.stdout, true),
      native.stderr === undefined ? null : pipeSocket(native.stderr, true),
    ],
    ...facts,
    kill: (signal) => callNative((binding) => binding.kill(pid, signal)),
    checkProtectedPaths: check,
    ...(prepareCheck === undefined ? {} : { prepareCheck }),
  };
}
