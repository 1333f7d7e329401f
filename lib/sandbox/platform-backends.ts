// SPDX-License-Identifier: MIT
// runSandboxed/spawnSandboxed on macOS (seatbelt through sandbox-exec) and Windows (AppContainer
// through the native addon): same plan, same result shapes, fail closed elsewhere. Loaded only off
// Linux, through lib/sandbox/platforms.ts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';

import { SandboxError } from '../errors.js';
import { buildSandboxEnv } from '../env.js';
import { callNative } from '../native/load.js';
import type { NativeBinding, NativeExit } from '../native/types.js';
import { addProbeFacts, probeSync, seatbeltProfileUnmeasured, type ProbeReport } from '../probe.js';
import { checkSeatbeltProfile } from '../backend/macos/profile-check.js';
import { buildMacToolPath } from '../backend/macos/tool-path.js';
import type { DarwinUserDirs } from '../backend/macos/user-dirs.js';
import { buildBatchCommandLine, buildWindowsCommandLine } from '../backend/windows/command-line.js';
import { buildAppContainerSpec, buildNativeWindowsSpec, type NativeWindowsSpec } from '../backend/windows/spec.js';
import type { SandboxBackendName, SandboxPlan } from '../backend/types.js';
import { checkOptions, normalizeCommand, type RunOptions, type SandboxCommand, type SandboxOptions } from './options.js';
import { resolvePlan } from './plan.js';
import { acquireRuntimeState, attachRuntimeState, releaseRuntimeState } from './runtime-state.js';
import { missingProtectedPaths, removeCreatedProtectedPaths } from './protected.js';
import { runDarwin, spawnDarwin } from './platform-darwin.js';
import { PlatformProcess, removeTmpDir, watchLimits } from './platform-process.js';

export { keepExistingReadOnly } from './platform-darwin.js';
export { PlatformProcess } from './platform-process.js';
import type { InternalSpawnOptions as SpawnSandboxedOptions, SandboxedProcess, SandboxExit } from './process.js';
import type { RunResult } from './run.js';
import { protectedPathDenial } from './denials.js';

/** What the platform dispatch depends on; every field is injectable so tests run on any OS. */
export interface PlatformDeps {
  /** The platform to act for (default `process.platform`). */
  platform: NodeJS.Platform | string;
  /** The measured capabilities (default `probeSync`). */
  probe: () => ProbeReport;
  /** Tests only: another sandbox-exec binary. */
  sandboxExecPath?: string;
  /** The addon's spawn and kill (default: the loaded addon, errors mapped by `callNative`). */
  binding?: Pick<NativeBinding, 'spawn' | 'kill'>;
  /** Tests only: the listening address of stdio pipe `index` (default: a random named pipe). */
  pipeAddress?: (index: number) => string;
  /** Where private temp directories are created (default `os.tmpdir()`). */
  tmpRoot?: string;
  /** Tests only: where the managed runtime state goes instead of the user's cache dir (macOS). */
  userCacheDir?: string;
  /** Tests only: another unified-log tool than /usr/bin/log (macOS denial monitor). */
  logTool?: string;
  /** macOS: the per-user temp and cache directories (default: read with /usr/bin/getconf). */
  darwinUserDirs?: () => DarwinUserDirs;
}

/**
 * probeSync, with the macOS real-profile check (seatbeltProfile) measured here when the probe
 * could not load it: this module is loaded on macOS anyway, so the check costs no extra load.
 */
function probeWithPlatformFacts(): ProbeReport {
  const report = probeSync();
  if (!seatbeltProfileUnmeasured()) return report;
  addProbeFacts({ seatbeltProfile: checkSeatbeltProfile() });
  return probeSync();
}

/** The production dependencies. */
export function defaultPlatformDeps(): PlatformDeps {
  return { platform: process.platform, probe: probeWithPlatformFacts };
}

const DEFAULT_MAX_BUFFER = 64 * 1024 * 1024;

const BACKENDS: Record<string, { name: SandboxBackendName; layer: 'seatbelt' | 'appcontainer' }> = {
  darwin: { name: 'macos-seatbelt', layer: 'seatbelt' },
  win32: { name: 'windows-appcontainer', layer: 'appcontainer' },
};

/** Refuses (sandbox_unavailable) unless the probe measured this platform's backend as working. */
export function assertPlatformBackend(deps: PlatformDeps): SandboxBackendName {
  const backend = BACKENDS[deps.platform];
  if (backend === undefined) {
    throw new SandboxError('sandbox_unavailable', `no native sandbox backend exists for ${deps.platform} (supported: linux, darwin, win32); refusing to run unsandboxed`, { layer: 'backend' });
  }
  const status = deps.probe().layers[backend.layer];
  if (status?.available !== true) {
    const fix = status?.fix === undefined ? '' : ` (fix: ${status.fix})`;
    throw new SandboxError('sandbox_unavailable', `${backend.name} cannot enforce the policy here, so nothing ran: ${status?.reason ?? 'the probe did not measure it'}${fix}`, { layer: backend.layer });
  }
  return backend.name;
}

/**
 * A private temp directory for one command, symlink-resolved (macOS /var is /private/var). On
 * Windows the native resolver also expands 8.3 short names (TEMP is C:\Users\RUNNER~1\... on CI),
 * so the path matches the long one the ACL code reads back from the handle.
 */
function makeTmpDir(deps: PlatformDeps): string {
  const real = process.platform === 'win32' ? realpathSync.native : realpathSync;
  return real(mkdtempSync(join(real(deps.tmpRoot ?? tmpdir()), 'zero-sandbox-')));
}

/** Windows names environment variables case-insensitively: one spelling each, PATH upper-cased. */
export function buildWindowsSourceEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(source)) {
    const upper = name.toUpperCase();
    if (seen.has(upper)) continue;
    seen.add(upper);
    out[['PATH', 'TEMP', 'TMP', 'TMPDIR'].includes(upper) ? upper : name] = value;
  }
  return out;
}

/** The argv for a command: a shell string runs under sh on macOS and cmd.exe on Windows. */
export function buildPlatformArgv(command: SandboxCommand, platform: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const argv = normalizeCommand(command);
  if (platform !== 'win32' || typeof command !== 'string') return argv;
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows';
  return [env.ComSpec ?? env.COMSPEC ?? win32.join(root, 'System32', 'cmd.exe'), '/d', '/s', '/c', command];
}

/**
 * Validation, environment scrub (with the private temp dir) and plan, as on Linux. On macOS the
 * managed runtime state is leased as on Linux: npm, yarn, pip, Go and cargo caches go to a
 * per-workspace directory outside the workspace (a write root of the plan, so installs and builds
 * work without opening the user's real caches), and npm reads a copy of the user's npmrc without
 * its tokens (the original is in the credential deny set). The lease is released with
 * releaseRuntimeState(plan) when the run ends.
 */
function preparePlan(command: SandboxCommand, options: SandboxOptions, backend: SandboxBackendName, deps: PlatformDeps, tmpDir: string): SandboxPlan {
  const { platform } = deps;
  const checked = checkOptions(options);
  const raw = options.env ?? process.env;
  const source = platform === 'win32' ? buildWindowsSourceEnv(raw) : raw;
  const argv = buildPlatformArgv(command, platform, source);
  const runtime = platform === 'darwin'
    ? acquireRuntimeState(checked.workspace ?? process.cwd(), { argv, lingerMs: 3000, ...(deps.userCacheDir === undefined ? {} : { userCacheDir: deps.userCacheDir }) })
    : undefined;
  try {
    const scrubbedEnv: string[] = [];
    const commandEnv = buildSandboxEnv(source, { backend, network: checked.network, pass: checked.envPass, tmpDir, overrides: runtime?.env ?? {}, scrubbed: scrubbedEnv });
    if (platform === 'darwin') commandEnv.PATH = buildMacToolPath(commandEnv.PATH ?? '');
    const envs = options.env === undefined ? [process.env] : [process.env, options.env];
    const plan = resolvePlan({ argv, options: checked, envs, commandEnv, scrubbedEnv, runtimeWriteRoots: runtime?.writeRoots ?? [] });
    attachRuntimeState(plan, runtime);
    return plan;
  } catch (error) {
    runtime?.release();
    throw error;
  }
}

/** Checks the command before anything is measured, created or run. */
function precheck(command: SandboxCommand, options: SandboxOptions): void {
  normalizeCommand(command);
  checkOptions(options);
}

// ---- Windows --------------------------------------------------------------------------------

const ABSOLUTE_WINDOWS = /^(?:[A-Za-z]:\\|\\\\[^\\]+\\[^\\]+)/;

/**
 * Resolves argv[0] against the command's PATH and PATHEXT (CreateProcessW would otherwise search
 * node.exe's directory and our current directory first). Throws exec_failed naming the program.
 */
export function resolveWindowsProgram(program: string, env: Readonly<Record<string, string>>, cwd: string, isFile: (path: string) => boolean): string {
  if (ABSOLUTE_WINDOWS.test(program)) return win32.normalize(program);
  const exts = (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e !== '');
  const hasExt = exts.some((ext) => program.toLowerCase().endsWith(ext.toLowerCase()));
  const candidates = (base: string): string[] => (hasExt ? [base] : exts.map((ext) => base + ext.toLowerCase()));
  const dirs = /[\\/]/.test(program) ? [cwd] : (env.PATH ?? '').split(';').filter((d) => ABSOLUTE_WINDOWS.test(d));
  for (const dir of dirs) {
    for (const candidate of candidates(win32.join(dir, program))) if (isFile(candidate)) return candidate;
  }
  throw new SandboxError('exec_failed', `${program} was not found on the command's PATH (with PATHEXT ${exts.join(';')})`, { path: program });
}

/** One stdio entry for the Windows glue: NUL, one of ours (0-2), or a named pipe to open. */
export type WindowsStdioEntry = 'ignore' | number | { pipe: string; nonce: string };

/** The object `binding.spawn` receives on Windows (native/common/spawn_glue_windows.cc). */
export interface WindowsSpawnSpec {
  /** The environment block, `KEY=value`, sorted as Windows expects. */
  env: string[];
  /** The working directory. */
  cwd: string;
  /** stdin, stdout, stderr. */
  stdio: [WindowsStdioEntry, WindowsStdioEntry, WindowsStdioEntry];
  /** The AppContainer spec, flat (`backend::WindowsSpec`). */
  windows: NativeWindowsSpec;
}

/**
 * The host facts of the Windows read set (read-grants.ts), from our own environment: the user's
 * profile, the directory of this node.exe, and the directories ALL APPLICATION PACKAGES already
 * read (never given an ACE). Pure.
 */
export function buildReadGrantFacts(env: Readonly<Record<string, string | undefined>>, execPath: string): NonNullable<Parameters<typeof buildAppContainerSpec>[1]['readGrants']> {
  const get = (name: string): string | undefined => Object.entries(env).find(([key]) => key.toUpperCase() === name.toUpperCase())?.[1];
  const systemDirs = ['SystemRoot', 'ProgramFiles', 'ProgramFiles(x86)', 'ProgramW6432'].map(get).filter((dir): dir is string => dir !== undefined);
  const home = get('USERPROFILE');
  return { ...(home === undefined ? {} : { home }), execDir: win32.dirname(execPath), systemDirs };
}

/** Builds what the Windows glue receives from a plan (argv[0] already resolved). Pure. */
export function buildWindowsSpawnSpec(plan: SandboxPlan, tmpDir: string, stdio: WindowsSpawnSpec['stdio']): WindowsSpawnSpec {
  // The read-all posture cannot be an ACL on a volume: reads are what AppContainers may read.
  const spec = buildAppContainerSpec({ ...plan, readRoots: plan.readRoots.filter((r) => r !== '/') }, { tmpDir, readGrants: buildReadGrantFacts(process.env, process.execPath) });
  const [program, ...rest] = plan.argv;
  // cmd.exe parses its own command line: `/s /c "text"` strips the outer quotes and runs text as typed.
  const shell = rest.length === 4 && rest[0] === '/d' && rest[1] === '/s' && rest[2] === '/c' && /cmd\.exe$/i.test(program ?? '');
  if (shell) spec.commandLine = `${buildWindowsCommandLine([program ?? ''])} /d /s /c "${rest[3] ?? ''}"`;
  else if (/\.(?:cmd|bat)$/i.test(program ?? '')) {
    // A batch file runs under cmd.exe, which re-parses its arguments: quoted for cmd.exe, or refused.
    const root = plan.env.SystemRoot ?? plan.env.SYSTEMROOT ?? 'C:\\Windows';
    spec.commandLine = buildBatchCommandLine(plan.env.ComSpec ?? plan.env.COMSPEC ?? win32.join(root, 'System32', 'cmd.exe'), plan.argv);
  }
  return { env: spec.env, cwd: spec.cwd, stdio, windows: buildNativeWindowsSpec(spec) };
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

/** Listens on one pipe per 'pipe' stream; returns the entries for the glue and our stream ends. */
function openPipes(given: NonNullable<SpawnSandboxedOptions['stdio']>, deps: PlatformDeps): PipeSet {
  const modes = typeof given === 'string' ? [given, given, given] : given;
  const servers: Server[] = [];
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
    void acceptVerified(server, nonce).then((socket) => {
      if (i === 0) ours.pipe(socket);
      else socket.pipe(ours);
    });
    entries.push({ pipe: address, nonce });
    streams.push(ours);
  });
  return {
    entries: entries as WindowsSpawnSpec['stdio'],
    streams: streams as PipeSet['streams'],
    close: () => servers.forEach((s) => s.close()),
  };
}

/** Starts a prepared plan in an AppContainer through the addon (binding injectable for tests). */
export function startWindows(plan: SandboxPlan, options: SpawnSandboxedOptions, tmpDir: string, deps: PlatformDeps): PlatformProcess {
  const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();
  const program = resolveWindowsProgram(plan.argv[0] ?? '', plan.env, plan.cwd, isFile);
  const resolved: SandboxPlan = { ...plan, argv: [program, ...plan.argv.slice(1)] };
  const pipes = openPipes(options.stdio ?? ['pipe', 'pipe', 'pipe'], deps);
  let spec: WindowsSpawnSpec;
  try {
    spec = buildWindowsSpawnSpec(resolved, tmpDir, pipes.entries);
  } catch (error) {
    pipes.close();
    throw error;
  }
  const call = <T>(fn: (b: Pick<NativeBinding, 'spawn' | 'kill'>) => T): T => (deps.binding === undefined ? callNative(fn) : fn(deps.binding));
  const watched = missingProtectedPaths(plan.writeRoots);
  let settle!: (raw: NativeExit) => void;
  const rawExit = new Promise<NativeExit>((resolve) => (settle = resolve));
  let spawned: { pid: number };
  try {
    spawned = call((b) => b.spawn(spec, (raw) => settle(raw)));
  } catch (error) {
    pipes.close();
    throw error;
  }
  const kill = (): boolean => call((b) => b.kill(spawned.pid, 9));
  const limits = watchLimits(options, kill);
  const exited = rawExit.then((raw): SandboxExit => {
    limits.stop();
    pipes.close();
    removeTmpDir(tmpDir);
    return { exitCode: raw.exitCode, signal: raw.signal === null ? null : 'SIGKILL', ...limits.flags, protectedPathViolations: removeCreatedProtectedPaths(watched) };
  });
  return new PlatformProcess({ pid: spawned.pid, streams: pipes.streams, backend: 'windows-appcontainer', network: plan.network, kill, exited, scrubbedEnv: plan.scrubbedEnv ?? [] });
}

// ---- Dispatch -------------------------------------------------------------------------------

/** spawnSandboxed for every platform but Linux. */
export function spawnOnPlatform(command: SandboxCommand, options: SpawnSandboxedOptions = {}, deps: PlatformDeps = defaultPlatformDeps()): SandboxedProcess {
  precheck(command, options);
  const backend = assertPlatformBackend(deps);
  const tmpDir = makeTmpDir(deps);
  try {
    const plan = preparePlan(command, options, backend, deps, tmpDir);
    try {
      const child = deps.platform === 'darwin' ? spawnDarwin(plan, options, tmpDir, deps) : startWindows(plan, options, tmpDir, deps);
      // PlatformProcess has every public member of SandboxedProcess (whose constructor is Linux's).
      return child as unknown as SandboxedProcess;
    } catch (error) {
      releaseRuntimeState(plan);
      throw error;
    }
  } catch (error) {
    removeTmpDir(tmpDir);
    throw error;
  }
}

/** runSandboxed for every platform but Linux. */
export async function runOnPlatform(command: SandboxCommand, options: RunOptions = {}, deps: PlatformDeps = defaultPlatformDeps()): Promise<RunResult> {
  const started = performance.now();
  const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (!Number.isSafeInteger(maxBuffer) || maxBuffer <= 0) {
    throw new SandboxError('invalid_argument', 'options.maxBuffer must be a positive integer');
  }
  if (deps.platform !== 'darwin') return collectPlatformRun(spawnOnPlatform(command, { ...options, stdio: ['pipe', 'pipe', 'pipe'] }, deps), options, started);
  precheck(command, options);
  const backend = assertPlatformBackend(deps);
  const tmpDir = makeTmpDir(deps);
  let plan: SandboxPlan;
  try {
    plan = preparePlan(command, options, backend, deps, tmpDir);
  } catch (error) {
    removeTmpDir(tmpDir);
    throw error;
  }
  return runDarwin(plan, options, tmpDir, deps, started);
}

/** Collects a spawned platform process into a RunResult (Windows; macOS uses runSeatbelt). */
export async function collectPlatformRun(child: SandboxedProcess, options: RunOptions, started: number): Promise<RunResult> {
  const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
  let overflow: string | undefined;
  const collect = (stream: Readable | null, name: string): Promise<string> => new Promise((resolve) => {
    if (stream === null) return resolve('');
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBuffer) {
        overflow ??= name;
        child.kill();
      } else chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
  const out = collect(child.stdout, 'stdout');
  const err = collect(child.stderr, 'stderr');
  child.stdin?.end(options.input ?? '');
  const exit = await child.exited;
  const [stdout, stderr] = await Promise.all([out, err]);
  if (overflow !== undefined) throw new SandboxError('max_buffer_exceeded', `${overflow} exceeded maxBuffer (${maxBuffer} bytes); the sandbox was killed`);
  return {
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout,
    stderr,
    truncated: false,
    outputBytes: { stdout: Buffer.byteLength(stdout), stderr: Buffer.byteLength(stderr) },
    denials: exit.protectedPathViolations.map((path) => protectedPathDenial(path)),
    timedOut: exit.timedOut,
    aborted: exit.aborted,
    ...(exit.aborted ? { abortReason: options.signal?.reason } : {}),
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    backend: child.backend,
    network: child.network,
    protectedPathViolations: exit.protectedPathViolations,
    prewarmed: false,
    scrubbedEnv: [...child.scrubbedEnv],
  };
}
