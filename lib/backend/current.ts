// SPDX-License-Identifier: MIT
// The running platform's backend: the one place in lib/ that reads process.platform to choose
// how commands are sandboxed (platform-table.ts says which backend serves which platform).
// Linux's backend is loaded with the package; the macOS/Windows ones load only off Linux
// (lib/sandbox/platform-backends.ts), so the Linux cold start (`zero-sandbox run`) does not pay.
import { createRequire } from 'node:module';

import { SandboxError } from '../errors.js';
import type { SandboxBackend } from '../sandbox/contract.js';
import { assertEnforceable, linuxBackend, quickLinuxInfo } from './linux/start.js';
import { backendForPlatform } from './platform-table.js';
import { setNetworkProbeSource } from '../probe.js';
import type { NetworkProbeResult } from './windows/net-probe.js';
import type { BackendInfo, SandboxBackendName } from './types.js';

/** The platform this process runs on. */
export const HOST_PLATFORM: NodeJS.Platform = process.platform;

/** True on Linux, whose backend is in the package's main load (see `currentBackend`). */
export const HOST_IS_LINUX = backendForPlatform(HOST_PLATFORM)?.name === 'linux-native';

/** The name of the backend that serves this platform (`unavailable` where none exists). */
export const HOST_BACKEND: SandboxBackendName = backendForPlatform(HOST_PLATFORM)?.name ?? 'unavailable';

/** What lib/sandbox/platform-backends.ts exports that is used here. */
export interface PlatformBackends {
  /** The backend of `platform` with the production dependencies (refuses on use where none exists). */
  hostBackend(platform: string): SandboxBackend;
  /** Windows: this process's in-container connection probe, measured once (undefined elsewhere). */
  measureHostNetworkProbe(platform: string): Promise<NetworkProbeResult | undefined>;
  readonly [name: string]: unknown;
}

let backends: PlatformBackends | undefined;
let loading: Promise<PlatformBackends> | undefined;

/**
 * Loads the macOS/Windows backends. Started at once off Linux; a caller about to spawn
 * synchronously from a bundle (where require(esm) cannot find the module) awaits it first.
 */
export function loadPlatformBackends(): Promise<PlatformBackends> {
  loading ??= (import('../sandbox/platform-backends.js') as Promise<unknown> as Promise<PlatformBackends>).then((loaded) => (backends ??= loaded));
  return loading;
}

// Off Linux, start loading at once, so that a synchronous spawnSandboxed finds the backends ready;
// probe() gets the Windows in-container connection probe through them.
if (!HOST_IS_LINUX) {
  loadPlatformBackends().catch(() => {}); // reported by the synchronous load, which fails the same way
  setNetworkProbeSource(async (platform) => (await loadPlatformBackends()).measureHostNetworkProbe(platform));
}

/** The backends, loaded synchronously when the early import has not finished (require(esm)). */
function loadSync(): PlatformBackends {
  if (backends !== undefined) return backends;
  try {
    backends = createRequire(import.meta.url)('../sandbox/platform-backends.js') as PlatformBackends;
    return backends;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SandboxError(
      'sandbox_unavailable',
      `the ${HOST_PLATFORM} sandbox backend could not be loaded in time for a synchronous spawnSandboxed (${reason}); await loadPlatformBackends() before spawning, use runSandboxed, or use Node.js >= 20.19 with the unbundled package`,
      { layer: 'backend', cause: error },
    );
  }
}

/** The backend of the running platform, for a synchronous start. */
export function currentBackend(): SandboxBackend {
  return HOST_IS_LINUX ? linuxBackend : loadSync().hostBackend(HOST_PLATFORM);
}

/** The backend of the running platform when it is loaded already (always on Linux), else undefined. */
export function loadedCurrentBackend(): SandboxBackend | undefined {
  if (HOST_IS_LINUX) return linuxBackend;
  return backends?.hostBackend(HOST_PLATFORM);
}

/** The backend of the running platform, loaded by import where it is not loaded yet. */
export async function loadCurrentBackend(): Promise<SandboxBackend> {
  return HOST_IS_LINUX ? linuxBackend : (await loadPlatformBackends()).hostBackend(HOST_PLATFORM);
}

/** The macOS/Windows backend module's backend, loaded synchronously if need be (any platform; tests). */
export function platformBackendSync(): SandboxBackend {
  return loadSync().hostBackend(HOST_PLATFORM);
}

/**
 * What the permission engine is told about the backend before a run, from cheap checks (Linux:
 * the Landlock ABI and layers switched off for testing; the spawn proves the rest). Undefined
 * elsewhere: the engine measures the macOS/Windows backend through the probe itself.
 */
export function quickBackendInfo(): BackendInfo | undefined {
  return HOST_IS_LINUX ? quickLinuxInfo() : undefined;
}

/**
 * Loads the backend of this platform before a synchronous start (a no-op on Linux). On Windows a
 * network-deny start also needs the in-container connection probe's finding, measured here once
 * per process (a synchronous start would otherwise wait for it behind its returned process).
 */
export async function prepareHostBackend(network: 'deny' | 'allow' = 'deny'): Promise<void> {
  if (HOST_IS_LINUX) return;
  const loaded = await loadPlatformBackends();
  if (network === 'deny') await loaded.measureHostNetworkProbe(HOST_PLATFORM);
}

/**
 * Fails closed before anyone is asked about a command, when what is cheap to know already says the
 * sandbox cannot be set up (Linux: see `assertEnforceable`). Elsewhere the backend refuses when it
 * prepares the run.
 */
export function assertHostEnforceable(network: 'deny' | 'allow'): void {
  if (HOST_IS_LINUX) assertEnforceable({ network });
}
