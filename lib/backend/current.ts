// SPDX-License-Identifier: MIT
// Which backend serves this process: Linux's is loaded with the package; the macOS/Windows ones
// load only off Linux (lib/sandbox/platform-backends.ts), so the Linux cold start
// (`zero-sandbox run`) does not pay for them.
import { createRequire } from 'node:module';

import { SandboxError } from '../errors.js';
import { linuxBackend } from '../backend/linux/start.js';
import type { SandboxBackend } from './contract.js';

/** What lib/sandbox/platform-backends.ts exports that is used here. */
export interface PlatformBackends {
  /** The backend of the running platform (refuses on use where none exists). */
  platformBackend(): SandboxBackend;
  readonly [name: string]: unknown;
}

let backends: PlatformBackends | undefined;
let loading: Promise<PlatformBackends> | undefined;

/**
 * Loads the macOS/Windows backends. Started at once off Linux; a caller about to spawn
 * synchronously from a bundle (where require(esm) cannot find the module) awaits it first.
 */
export function loadPlatformBackends(): Promise<PlatformBackends> {
  loading ??= (import('./platform-backends.js') as Promise<unknown> as Promise<PlatformBackends>).then((loaded) => (backends ??= loaded));
  return loading;
}

// Off Linux, start loading at once, so that a synchronous spawnSandboxed finds the backends ready.
if (process.platform !== 'linux') {
  loadPlatformBackends().catch(() => {}); // reported by the synchronous load, which fails the same way
}

/** The backends, loaded synchronously when the early import has not finished (require(esm)). */
function loadSync(): PlatformBackends {
  if (backends !== undefined) return backends;
  try {
    backends = createRequire(import.meta.url)('./platform-backends.js') as PlatformBackends;
    return backends;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SandboxError(
      'sandbox_unavailable',
      `the ${process.platform} sandbox backend could not be loaded in time for a synchronous spawnSandboxed (${reason}); await loadPlatformBackends() before spawning, use runSandboxed, or use Node.js >= 20.19 with the unbundled package`,
      { layer: 'backend', cause: error },
    );
  }
}

/** The backend of the running platform, for a synchronous start. */
export function currentBackend(): SandboxBackend {
  return process.platform === 'linux' ? linuxBackend : loadSync().platformBackend();
}

/** The backend of the running platform, loaded by import where it is not loaded yet. */
export async function loadCurrentBackend(): Promise<SandboxBackend> {
  return process.platform === 'linux' ? linuxBackend : (await loadPlatformBackends()).platformBackend();
}

/** The macOS/Windows backend module's backend, loaded synchronously if need be (any platform; tests). */
export function platformBackendSync(): SandboxBackend {
  return loadSync().platformBackend();
}
