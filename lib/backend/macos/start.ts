// SPDX-License-Identifier: MIT
// The macOS starter: the prepared plan under /usr/bin/sandbox-exec with its seatbelt profile,
// in a process group of its own so one kill reaches everything the command started. Timeout,
// abort, output capture and the result are the shared lifecycle's (lib/sandbox/process.ts).
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

import { SandboxError } from '../../errors.js';
import type { OsExit, OsProcess, PreparedRun, StartIo, Starter } from '../../sandbox/contract.js';
import type { SandboxPlan } from '../types.js';
import { checkProtectedPaths, guardProtectedPaths } from '../../sandbox/protected.js';
import { buildDenialTag, LOG_TOOL, startDenialMonitor } from './denial-log.js';
import { buildSandboxExecArgs, REACHED_FD, SANDBOX_EXEC, sandboxExecSetupFailure } from './sandbox-exec.js';
import { resolveSeatbeltPlan } from './seatbelt-plan.js';
import { readDarwinUserDirs, type DarwinUserDirs } from './user-dirs.js';
import { defaultSweepDeps, nativeRunMembers, sweepRunMembers, type RunMembersListing, type SweepDeps } from './run-members.js';
import { buildRunNonces } from './run-nonces.js';

/** What the macOS starter depends on (injectable, so it runs on any POSIX OS in tests). */
export interface MacosStartDeps {
  /** Tests only: another sandbox-exec binary. */
  sandboxExecPath?: string;
  /** The per-user temp and cache directories (default: read with /usr/bin/getconf). */
  darwinUserDirs?: () => DarwinUserDirs;
  /** Tests only: another unified-log tool than /usr/bin/log (the denial monitor). */
  logTool?: string;
  /**
   * Lists the processes under the profile that allows reading `allowed` and denies `denied`
   * (default: the addon's macosRunMembers). Tests with a stand-in sandbox-exec, which sandboxes
   * nothing, give one that lists the processes they mean to be the run's.
   */
  runMembers?: (allowed: string, denied: string) => RunMembersListing;
}

/**
 * How long output is still collected after the command has exited. A process that left the group
 * (setsid) can hold the pipes open forever; the run ends on the exit, not on the pipes closing.
 */
const OUTPUT_GRACE_MS = 250;

/** Signals the command's process group; false when it is gone (ESRCH). */
function killGroup(pid: number | undefined, signal: number): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The macOS `Starter`, with its dependencies bound. */
export function macosStarter(deps: MacosStartDeps = {}): Starter {
  return (prepared, io, onExit) => startMacos(prepared, io, onExit, deps);
}

function startMacos(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void, deps: MacosStartDeps): OsProcess {
  if (prepared.tmpDir === undefined) throw new SandboxError('internal_error', 'macos-seatbelt: the prepared run has no private temp dir');
  // Every git file that could make host git run code later, the agent and editor configs, .zero
  // and .agents: the existing ones become deny rules of the profile, and everything is noted for
  // the check once the command's process group is gone (the same guard and check as on Linux).
  // The notes are held for runs of the same write roots started meanwhile until release().
  // A sweep that could not make sure every process of the run is gone fails the run instead: the
  // check would race what is still writing (and host file work waits until nothing of it runs).
  const guarded = guardProtectedPaths(prepared.plan);
  const { plan, release } = guarded;
  try {
    return spawnMacos(prepared, plan, io, onExit, deps, (sweepFailure) => {
      try {
        if (sweepFailure !== undefined) throw sweepFailure;
        return checkProtectedPaths(guarded.guard);
      } finally {
        release();
      }
    });
  } catch (error) {
    release();
    throw error;
  }
}

function spawnMacos(prepared: PreparedRun, plan: SandboxPlan, io: StartIo, onExit: (exit: OsExit) => void, deps: MacosStartDeps, check: (sweepFailure: SandboxError | undefined) => ReturnType<OsProcess['checkProtectedPaths']>): OsProcess {
  // Every deny rule of this run's profile carries a random tag, and the unified-log monitor runs
  // from before the command starts until after it ended: the refusals of this run's rules become
  // structured denials. Reporting only: enforcement does not depend on it.
  const denialTag = buildDenialTag();
  // This run's mark: its profile allows one of these paths and denies the other, so that once the
  // command's group is gone, every process still under the profile is found and killed.
  const runNonces = buildRunNonces();
  const args = buildSandboxExecArgs(resolveSeatbeltPlan(plan, prepared.envs), {
    tmpDir: prepared.tmpDir as string,
    darwinUserDirs: (deps.darwinUserDirs ?? readDarwinUserDirs)(),
    denialTag,
    runNonces,
  }, true);
  const listMembers = deps.runMembers ?? nativeRunMembers;
  const sweepDeps: SweepDeps = defaultSweepDeps(() => listMembers(runNonces.allowed, runNonces.denied));
  let sweepFailure: SandboxError | undefined;
  const program = deps.sandboxExecPath ?? SANDBOX_EXEC;
  // detached: the command leads its own process group, so one kill reaches all it started.
  const monitor = startDenialMonitor(denialTag, deps.logTool ?? LOG_TOOL);
  const child = spawn(program, args, { cwd: plan.cwd, env: plan.env, detached: true, stdio: [...io.stdio, 'pipe'] });
  // The launcher's byte: sandbox-exec applied the profile and the command is about to start. The
  // pipe is closed before the command exists (no process of the command can hold it), so 'close'
  // waits for it as for the output pipes.
  let reached = false;
  const marker = child.stdio[REACHED_FD] as Readable | null;
  marker?.on('data', () => {
    reached = true;
  });
  marker?.on('error', () => {});
  let finished = false;
  const finish = (exit: OsExit): void => {
    if (finished) return;
    finished = true;
    // Log delivery lags the refusal a little: a failed command (the usual sign of a refusal) gets
    // a longer wait for late lines than a successful one.
    void monitor.stop(exit.startFailure !== undefined ? 0 : exit.exitCode === 0 ? 20 : 150).then(
      (platformDenials) => onExit(platformDenials.length > 0 ? { ...exit, platformDenials } : exit),
      () => onExit(exit),
    );
  };
  // sandbox-exec itself could not start (missing, not executable): nothing ran.
  child.on('error', (error: NodeJS.ErrnoException) => {
    if (child.pid !== undefined) return;
    const startFailure = new SandboxError('spawn_failed', `cannot start ${program}: ${error.message}`, {
      cause: error,
      syscall: 'spawn',
      layer: 'seatbelt',
      ...(error.errno !== undefined ? { errno: -error.errno } : {}),
    });
    finish({ exitCode: 127, signal: null, execError: { errno: -(error.errno ?? 0), code: error.code ?? 'UNKNOWN' }, startFailure });
  });
  // Nothing outlives the command: when it exits, whatever it left in its group goes too (also the
  // background jobs that would otherwise hold the output pipes open), then every process still
  // under this run's profile (those that left the group), in rounds until none is left. The exit
  // is reported once both the sweep and the output are done.
  child.on('exit', (exitCode, signal) => {
    killGroup(child.pid, 9);
    const swept = sweepRunMembers(sweepDeps).then(
      () => undefined,
      (error: unknown) => {
        sweepFailure = error instanceof SandboxError ? error : new SandboxError('internal_error', `macos-seatbelt: the sweep after the run failed: ${String(error)}`, { cause: error });
      },
    );
    const output = new Promise<void>((resolve) => {
      const grace = setTimeout(() => {
        // Whatever still holds the pipes (a process that left the group) is not waited for.
        child.stdout?.destroy();
        child.stderr?.destroy();
        marker?.destroy();
        resolve();
      }, OUTPUT_GRACE_MS);
      child.once('close', () => {
        clearTimeout(grace);
        resolve();
      });
    });
    void Promise.all([swept, output]).then(() => finish({ exitCode, signal }));
  });
  return {
    pid: child.pid ?? -1,
    stdio: [child.stdin, child.stdout, child.stderr],
    capturesOutput: false,
    prewarmed: false,
    kill: (signal) => killGroup(child.pid, signal),
    checkProtectedPaths: () => check(sweepFailure),
    setupFailure: (exitCode, stderr) => {
      const setup = sandboxExecSetupFailure(exitCode, stderr, reached);
      if (setup === undefined) return undefined;
      return new SandboxError('spawn_failed', `sandbox-exec could not apply the seatbelt profile, so nothing ran (exit ${exitCode}): ${setup}`, { layer: 'seatbelt', syscall: 'sandbox_init' });
    },
  };
}
