// SPDX-License-Identifier: MIT
// The macOS (seatbelt through sandbox-exec) and Windows (AppContainer through the addon) backends:
// checking the probe, the private temp dir, the environment and the plan; the starters are in
// lib/backend/<os>/start.ts and the lifecycle is the one every OS shares (which imports nothing of
// this module). Loaded only off Linux, through lib/backend/current.ts.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';

import { SandboxError } from '../errors.js';
import { buildSandboxEnv } from '../env.js';
import { handOverFacts, HostFacts } from '../host-facts.js';
import type { NativeBinding } from '../native/types.js';
import { addProbeFacts, noteNetworkProbe, probeSync, seatbeltProfileUnmeasured, type ProbeReport } from '../probe.js';
import { checkSeatbeltProfile } from '../backend/macos/profile-check.js';
import { macosStarter, type MacosStartDeps } from '../backend/macos/start.js';
import { buildMacToolPath } from '../backend/macos/tool-path.js';
import type { DarwinUserDirs } from '../backend/macos/user-dirs.js';
import { windowsAsyncStarter, windowsStarter } from '../backend/windows/start.js';
import { gateNetworkDeny, launchThrough, NETWORK_PROBE_SCRIPT, NetworkProbeGate, type NetworkProbeLauncher, type NetworkProbeResult } from '../backend/windows/net-probe.js';
import { backendForPlatform, SUPPORTED_PLATFORMS } from '../backend/platform-table.js';
import type { SandboxBackendName } from '../backend/types.js';
import type { PreparedRun, SandboxBackend } from './contract.js';
import { checkOptions, normalizeCommand, type SandboxCommand, type SandboxOptions } from './options.js';
import { resolvePlan } from './plan.js';
import { acquireRuntimeState, buildUserCacheDir } from './runtime-state.js';

/** What the platform dispatch depends on; every field is injectable so tests run on any OS. */
export interface PlatformDeps {
  /** The platform to act for. */
  platform: NodeJS.Platform | string;
  /** The measured capabilities (default `probeSync`). */
  probe: () => ProbeReport;
  /** Tests only: another sandbox-exec binary. */
  sandboxExecPath?: string;
  /** The addon's spawn and kill (default: the loaded addon, errors mapped by `callNative`). */
  binding?: Pick<NativeBinding, 'spawn' | 'kill'>;
  /** Tests only: the listening address of stdio pipe `index` (default: a random named pipe). */
  pipeAddress?: (index: number) => string;
  /** Windows: the ACL journal directory (default: zero-sandbox's state in the user cache dir). */
  aclJournalDir?: string;
  /** Where private temp directories are created (default `os.tmpdir()`). */
  tmpRoot?: string;
  /** Tests only: the user's cache dir for the managed runtime state (macOS) and the network probe's workspace (Windows). */
  userCacheDir?: string;
  /** Tests only: another unified-log tool than /usr/bin/log (macOS denial monitor). */
  logTool?: string;
  /** macOS: the per-user temp and cache directories (default: read with /usr/bin/getconf). */
  darwinUserDirs?: () => DarwinUserDirs;
  /** macOS: the listing of a run's processes after it (default: the addon's macosRunMembers). */
  runMembers?: MacosStartDeps['runMembers'];
  /**
   * Windows: the in-container connection probe network-deny runs wait for (default: one per
   * process for the production dependencies, else one launched through these dependencies).
   */
  networkProbe?: NetworkProbeGate;
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

let hostNetworkGate: NetworkProbeGate | undefined;

/** The production dependencies for `platform` (lib/backend/current.ts passes the running one). */
export function defaultPlatformDeps(platform: string): PlatformDeps {
  if (platform !== 'win32') return { platform, probe: probeWithPlatformFacts };
  hostNetworkGate ??= new NetworkProbeGate(networkProbeLauncher({ platform, probe: probeWithPlatformFacts }), noteNetworkProbe);
  return { platform, probe: probeWithPlatformFacts, networkProbe: hostNetworkGate };
}

/**
 * This process's in-container connection probe (Windows), measured on the first call and kept
 * (probe() and doctor show it). Undefined for other platforms and where AppContainer is unusable.
 */
export async function measureHostNetworkProbe(platform: string): Promise<NetworkProbeResult | undefined> {
  const deps = defaultPlatformDeps(platform);
  // Where the AppContainer layer does not work no container could try: there is nothing to measure.
  if (deps.networkProbe === undefined || deps.probe().layers.appcontainer?.available !== true) return undefined;
  return deps.networkProbe.measure();
}

/**
 * Launches the probe script through the Windows backend of `deps` without the gate (it is what
 * the gate waits for): a run with network deny and a fixed workspace under the user cache dir, so
 * the probe has one container profile and one ACL journal record per user, reverted like any
 * other. node.exe runs with a minimal environment (SystemRoot, which Winsock needs); its read
 * grant is the one every run gets (the directory of node.exe).
 */
function networkProbeLauncher(deps: PlatformDeps): NetworkProbeLauncher {
  return async (args) => {
    const real = process.platform === 'win32' ? realpathSync.native : realpathSync;
    const base = join(deps.userCacheDir ?? buildUserCacheDir(process.env), 'zero', 'net-probe');
    mkdirSync(base, { recursive: true });
    const dir = real(base);
    const env: Record<string, string> = {};
    for (const name of ['SystemRoot', 'SYSTEMROOT', 'windir']) if (process.env[name] !== undefined) env[name] = process.env[name]!;
    const backend = ungatedWindowsBackend(deps);
    return launchThrough(backend, [process.execPath, '-e', NETWORK_PROBE_SCRIPT, ...args], { workspace: dir, cwd: dir, network: 'deny', env }, 20_000);
  };
}

/** Refuses (sandbox_unavailable) unless the probe measured this platform's backend as working. */
export function assertPlatformBackend(deps: PlatformDeps): SandboxBackendName {
  const backend = backendForPlatform(deps.platform);
  const layer = backend?.singleLayer;
  if (backend === undefined || layer === undefined) {
    throw new SandboxError('sandbox_unavailable', `no native sandbox backend exists for ${deps.platform} (supported: ${backend === undefined ? SUPPORTED_PLATFORMS.join(', ') : 'darwin, win32 through this module'}); refusing to run unsandboxed`, { layer: 'backend' });
  }
  const status = deps.probe().layers[layer];
  if (status?.available !== true) {
    const fix = status?.fix === undefined ? '' : ` (fix: ${status.fix})`;
    throw new SandboxError('sandbox_unavailable', `${backend.name} cannot enforce the policy here, so nothing ran: ${status?.reason ?? 'the probe did not measure it'}${fix}`, { layer });
  }
  return backend.name;
}

/** Removes a command's private temp dir (when it has ended). */
function removeTmpDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A private temp directory for one command, symlink-resolved (macOS /var is /private/var). On
 * Windows the native resolver also expands 8.3 short names (TEMP is C:\Users\RUNNER~1\... on CI),
 * so the path matches the long one the ACL code reads back from the handle.
 */
function makeTmpDir(deps: PlatformDeps): string {
  // The host's own resolver: only the native one expands 8.3 names, and only Windows has them.
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
 * Prepares a run on macOS or Windows: the command and options checked before anything is measured,
 * created or run; the probe; the private temp dir; the environment scrub and the plan, as on Linux.
 * On macOS the managed runtime state is leased as on Linux: npm, yarn, pip, Go and cargo caches go
 * to a per-workspace directory outside the workspace (a write root of the plan, so installs and
 * builds work without opening the user's real caches), and npm reads a copy of the user's npmrc
 * without its tokens (the original is in the credential deny set). `release` ends the lease.
 */
function preparePlatformRun(command: SandboxCommand, options: SandboxOptions, deps: PlatformDeps): PreparedRun {
  normalizeCommand(command);
  const checked = checkOptions(options);
  const backend = assertPlatformBackend(deps);
  const tmpDir = makeTmpDir(deps);
  let runtime: ReturnType<typeof acquireRuntimeState>;
  try {
    const raw = options.env ?? process.env;
    const source = deps.platform === 'win32' ? buildWindowsSourceEnv(raw) : raw;
    const argv = buildPlatformArgv(command, deps.platform, source);
    runtime = deps.platform === 'darwin'
      ? acquireRuntimeState(checked.workspace ?? process.cwd(), { argv, lingerMs: 3000, ...(deps.userCacheDir === undefined ? {} : { userCacheDir: deps.userCacheDir }) })
      : undefined;
    const scrubbedEnv: string[] = [];
    const commandEnv = buildSandboxEnv(source, { backend, network: checked.network, pass: checked.envPass, tmpDir, overrides: runtime?.env ?? {}, scrubbed: scrubbedEnv });
    if (deps.platform === 'darwin') commandEnv.PATH = buildMacToolPath(commandEnv.PATH ?? '');
    const envs = options.env === undefined ? [process.env] : [process.env, options.env];
    const facts = new HostFacts();
    const plan = resolvePlan({ argv, options: checked, envs, commandEnv, scrubbedEnv, runtimeWriteRoots: runtime?.writeRoots ?? [], facts });
    let released = false;
    const lease = runtime;
    const release = (): void => {
      if (released) return;
      released = true;
      removeTmpDir(tmpDir);
      lease?.release();
    };
    return { plan, backend, takeFacts: handOverFacts(facts), tmpDir, envs, release };
  } catch (error) {
    runtime?.release();
    removeTmpDir(tmpDir);
    throw error;
  }
}

/** The Windows backend of `deps` without the network probe's gate. */
function ungatedWindowsBackend(deps: PlatformDeps): Required<SandboxBackend> {
  const windowsDeps = { ...(deps.binding === undefined ? {} : { binding: deps.binding }), ...(deps.pipeAddress === undefined ? {} : { pipeAddress: deps.pipeAddress }), ...(deps.aclJournalDir === undefined ? {} : { aclJournalDir: deps.aclJournalDir }) };
  return { prepare: (command, options) => preparePlatformRun(command, options, deps), start: windowsStarter(windowsDeps), startAsync: windowsAsyncStarter(windowsDeps) };
}

/**
 * The Windows backend: a run with network deny starts only once the in-container connection probe
 * allows it (measured once per process, off this thread, before the first such run).
 */
function windowsBackend(deps: PlatformDeps): SandboxBackend {
  return gateNetworkDeny(ungatedWindowsBackend(deps), deps.networkProbe ?? new NetworkProbeGate(networkProbeLauncher(deps)));
}

/** The macOS or Windows backend for `deps.platform` (refuses on prepare elsewhere). */
export function platformBackend(deps: PlatformDeps): SandboxBackend {
  const prepare: SandboxBackend['prepare'] = (command, options) => preparePlatformRun(command, options, deps);
  if (deps.platform === 'win32') return windowsBackend(deps);
  const start = macosStarter({
    ...(deps.sandboxExecPath === undefined ? {} : { sandboxExecPath: deps.sandboxExecPath }),
    ...(deps.darwinUserDirs === undefined ? {} : { darwinUserDirs: deps.darwinUserDirs }),
    ...(deps.logTool === undefined ? {} : { logTool: deps.logTool }),
    ...(deps.runMembers === undefined ? {} : { runMembers: deps.runMembers }),
  });
  return { prepare, start };
}

/** The backend of the running `platform` with the production dependencies. */
export function hostBackend(platform: string): SandboxBackend {
  return platformBackend(defaultPlatformDeps(platform));
}
