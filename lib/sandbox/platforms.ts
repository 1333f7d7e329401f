// SPDX-License-Identifier: MIT
// The macOS/Windows entry of runSandboxed/spawnSandboxed. Tiny on purpose: the backends load only
// off Linux, so the Linux cold start (`zero-sandbox run`) does not pay for them.
import { createRequire } from 'node:module';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from './options.js';
import type { SandboxedProcess, SpawnSandboxedOptions } from './process.js';
import type { RunResult } from './run.js';

type Backends = typeof import('./platform-backends.js');

let backends: Backends | undefined;

// Off Linux, start loading at once, so that a synchronous spawnSandboxed finds the backends ready.
if (process.platform !== 'linux') {
  import('./platform-backends.js').then(
    (loaded) => (backends ??= loaded),
    () => {}, // reported by the synchronous load below, which fails the same way
  );
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
      `the ${process.platform} sandbox backend could not be loaded in time for a synchronous spawnSandboxed (${reason}); use runSandboxed, or Node.js >= 20.19, which can load it synchronously`,
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
  backends ??= await import('./platform-backends.js');
  return backends.runOnPlatform(command, options);
}
