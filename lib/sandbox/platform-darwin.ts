// SPDX-License-Identifier: MIT
// runSandboxed/spawnSandboxed on macOS: the prepared plan under sandbox-exec with the seatbelt
// profile, protected paths watched, the private temp dir removed when the command has ended.
import { spawn as spawnChild } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';

import { buildCredentialBaseline } from '../credentials.js';
import { isWithin } from '../path-within.js';
import { buildDenialTag, LOG_TOOL, startDenialMonitor } from '../backend/macos/denial-log.js';
import { buildSandboxExecArgs, runSeatbelt, SANDBOX_EXEC } from '../backend/macos/run.js';
import { readDarwinUserDirs } from '../backend/macos/user-dirs.js';
import type { SandboxPlan } from '../backend/types.js';
import type { RunOptions } from './options.js';
import { protectedPathDenial, type SandboxDenial } from './denials.js';
import { PlatformProcess, removeTmpDir, watchLimits } from './platform-process.js';
import type { PlatformDeps } from './platform-backends.js';
import type { InternalSpawnOptions as SpawnSandboxedOptions, SandboxExit } from './process.js';
import { missingProtectedPaths, removeCreatedProtectedPaths } from './protected.js';
import { releaseRuntimeState } from './runtime-state.js';
import type { RunResult } from './run.js';

/**
 * macOS: a protected path inside a write root (.git/hooks, .git/config) gets its deny rule only
 * when it exists now. One that does not exist yet is a repository the command creates itself
 * (git init, git clone url .), which must work as on Linux; when the .git directory already
 * exists, missingProtectedPaths watches the absent ones and what the command created there is
 * removed and reported when it ends. Pure apart from `exists`.
 */
export function keepExistingReadOnly(plan: SandboxPlan, exists: (path: string) => boolean): SandboxPlan {
  return { ...plan, writeRoots: plan.writeRoots.map((w) => ({ ...w, readOnlySubpaths: w.readOnlySubpaths.filter(exists) })) };
}

function killGroup(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false; // ESRCH: the group is gone
  }
}

/**
 * macOS: seatbelt can deny a path that does not exist yet, so the credential baseline's missing
 * candidates are denied too: a credential file created while the command runs (aws configure in
 * another terminal) stays unreadable. (Linux masks only what exists at start: a mount needs a
 * target.) A candidate that is not a clean absolute path, or that holds or lies in a write root,
 * is left out, as plan.ts leaves out those that would hide a write root. Pure apart from `exists`.
 */
export function withMissingCredentials(plan: SandboxPlan, candidates: readonly string[], exists: (path: string) => boolean): SandboxPlan {
  const clean = (p: string): boolean => p.startsWith('/') && !p.endsWith('/') && !p.includes('//') && !p.split('/').some((c) => c === '.' || c === '..') && !p.includes('\0');
  const touchesRoot = (p: string): boolean => plan.writeRoots.some((w) => isWithin(p, w.root, '/') || isWithin(w.root, p, '/'));
  const extra = [...new Set(candidates)].filter((p) => clean(p) && !plan.denyRead.includes(p) && !touchesRoot(p) && !exists(p));
  return extra.length === 0 ? plan : { ...plan, denyRead: [...plan.denyRead, ...extra] };
}

/**
 * The plan the seatbelt profile is built from: deny rules only for protected paths that exist,
 * and for the credential candidates that do not exist yet. `envs` are those the plan's baseline
 * was computed from (ours and the command's).
 */
function seatbeltPlan(plan: SandboxPlan, envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>): SandboxPlan {
  const exists = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  const list = (dir: string): string[] | undefined => {
    try {
      return readdirSync(dir);
    } catch {
      return undefined;
    }
  };
  const candidates = envs.flatMap((env) => buildCredentialBaseline({ env, list }));
  return withMissingCredentials(keepExistingReadOnly(plan, exists), candidates, exists);
}

function envsOf(options: { env?: Readonly<Record<string, string | undefined>> | undefined }): Array<Readonly<Record<string, string | undefined>>> {
  return options.env === undefined ? [process.env] : [process.env, options.env];
}

export function spawnDarwin(plan: SandboxPlan, options: SpawnSandboxedOptions, tmpDir: string, deps: PlatformDeps): PlatformProcess {
  const args = buildSandboxExecArgs(seatbeltPlan(plan, envsOf(options)), { tmpDir, darwinUserDirs: (deps.darwinUserDirs ?? readDarwinUserDirs)() });
  const watched = missingProtectedPaths(plan.writeRoots);
  const program = deps.sandboxExecPath ?? SANDBOX_EXEC;
  // detached: the command leads its own process group, so one kill reaches all it started.
  const child = spawnChild(program, args, { cwd: plan.cwd, env: plan.env, detached: true, stdio: options.stdio ?? ['pipe', 'pipe', 'pipe'] });
  const limits = watchLimits(options, () => killGroup(child.pid));
  const exited = new Promise<SandboxExit>((resolve) => {
    let done = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, startError?: NodeJS.ErrnoException): void => {
      if (done) return;
      done = true;
      limits.stop();
      // Whatever the command left in its group goes too (and releases the pipes).
      killGroup(child.pid);
      const exit: SandboxExit = { exitCode, signal, ...limits.flags, protectedPathViolations: removeCreatedProtectedPaths(watched) };
      if (startError !== undefined) exit.execError = { errno: -(startError.errno ?? 0), code: startError.code ?? 'UNKNOWN' };
      removeTmpDir(tmpDir);
      releaseRuntimeState(plan);
      resolve(exit);
    };
    // sandbox-exec itself could not start (missing, not executable): nothing ran.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) finish(127, null, error);
    });
    child.on('exit', (exitCode, signal) => finish(exitCode, signal));
  });
  return new PlatformProcess({
    pid: child.pid ?? -1,
    streams: [child.stdin, child.stdout, child.stderr],
    backend: 'macos-seatbelt',
    network: plan.network,
    kill: () => killGroup(child.pid),
    exited,
    scrubbedEnv: plan.scrubbedEnv ?? [],
  });
}

export async function runDarwin(plan: SandboxPlan, options: RunOptions, tmpDir: string, deps: PlatformDeps, started: number): Promise<RunResult> {
  const watched = missingProtectedPaths(plan.writeRoots);
  // The unified-log monitor runs from before the command starts until after it ended: the refusals
  // of this run's deny rules (tagged) become structured denials. Best-effort reporting only.
  const denialTag = buildDenialTag();
  const monitor = startDenialMonitor(denialTag, deps.logTool ?? LOG_TOOL);
  let logged: Promise<SandboxDenial[]> | undefined;
  try {
    const out = await runSeatbelt(seatbeltPlan(plan, envsOf(options)), {
      tmpDir,
      denialTag,
      darwinUserDirs: (deps.darwinUserDirs ?? readDarwinUserDirs)(),
      platform: 'darwin',
      ...(deps.sandboxExecPath === undefined ? {} : { sandboxExecPath: deps.sandboxExecPath }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.input === undefined ? {} : { input: Buffer.from(options.input) }),
      ...(options.maxBuffer === undefined ? {} : { maxBuffer: options.maxBuffer }),
    });
    const protectedPathViolations = removeCreatedProtectedPaths(watched);
    // Log delivery lags the refusal a little: a failed command (the usual sign of a refusal) gets
    // a longer wait for late lines than a successful one.
    logged = monitor.stop(out.exitCode === 0 ? 20 : 150);
    const refusals = await logged;
    return {
      ...out,
      // The seatbelt runner rejects with `aborted` when the signal fires, so a result was not aborted.
      aborted: false,
      truncated: false,
      outputBytes: { stdout: Buffer.byteLength(out.stdout), stderr: Buffer.byteLength(out.stderr) },
      denials: [...protectedPathViolations.map((path) => protectedPathDenial(path)), ...refusals],
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      backend: 'macos-seatbelt',
      network: plan.network,
      protectedPathViolations,
      prewarmed: false,
      scrubbedEnv: plan.scrubbedEnv ?? [],
    };
  } finally {
    if (logged === undefined) void monitor.stop(0);
    removeCreatedProtectedPaths(watched);
    removeTmpDir(tmpDir);
    releaseRuntimeState(plan);
  }
}
