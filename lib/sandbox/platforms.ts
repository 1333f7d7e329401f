// SPDX-License-Identifier: MIT
// The macOS/Windows entry of runSandboxed/spawnSandboxed. Tiny on purpose: the backends load only
// off Linux, so the Linux cold start (`zero-sandbox run`) does not pay for them.
import { createRequire } from 'node:module';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from './options.js';
import type { InternalSpawnOptions as SpawnSandboxedOptions, SandboxedProcess } from './process.js';
import type { RunResult } from './run.js';

type Backends = typeof import('./platform-backends.js');

let backends: Backends | undefined;
let loading: Promise<Backends> | undefined;

/**
 * Loads the macOS/Windows backends. Started at once off Linux; a caller about to spawn
 * synchronously from a bundle (where require(esm) cannot find the module) awaits it first.
 */
export function loadPlatformBackends(): Promise<Backends> {
  loading ??= import('./platform-backends.js').then((loaded) => (backends ??= loaded));
  return loading;
}

// Off Linux, start loading at once, so that a synchronous spawnSandboxed finds the backends ready.
if (process.platform !== 'linux') {
  loadPlatformBackends().catch(() => {}); // reported by the synchronous load, which fails the same way
}

/** The backends, loaded synchronously when the early import has not finished (require(esm)). */
function loadSync(): Backends {
  if (backends !== undefined) return backends;
  try {
    backends = createRequire(import.meta.url)('./platform-backends.js') as Backends;
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

/** spawnSandboxed on every platform but Linux. */
export function spawnOnPlatform(command: SandboxCommand, options: SpawnSandboxedOptions = {}): SandboxedProcess {
  return loadSync().spawnOnPlatform(command, options);
}

/** runSandboxed on every platform but Linux. */
export async function runOnPlatform(command: SandboxCommand, options: RunOptions = {}): Promise<RunResult> {
  return (await loadPlatformBackends()).runOnPlatform(command, options);
}
