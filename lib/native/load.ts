// SPDX-License-Identifier: MIT
// The ONLY module that loads the .node binary (through node-gyp-build) and the error chokepoint
// for every native call.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { SandboxError, fromNative } from '../errors.js';
import type { NativeBinding } from './types.js';

const require = createRequire(import.meta.url);

/** The package root: the nearest directory above this module with our package.json (this code also runs from the bundled CLI in dist/cli/). */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'zero-sandbox') return dir;
      } catch {
        // not ours; keep looking
      }
    }
    if (dirname(dir) === dir) return resolve(start, '..', '..', '..');
  }
}

let binding: NativeBinding | undefined;
let bindingPath: string | undefined;

const REBUILD_HINT =
  'Rebuild it with `npm rebuild zero-sandbox` (needs python3, make and a C++ compiler), or run ' +
  '`npm run build:native` in a clone of the repository.';

/**
 * Loads the addon once. `ZERO_SANDBOX_BINDING` may name a custom `.node` file (an escape hatch for
 * bundlers and unusual layouts). A missing or broken binary is a `native_unavailable` error.
 */
export function loadNative(): NativeBinding {
  if (binding !== undefined) return binding;
  const custom = process.env.ZERO_SANDBOX_BINDING;
  try {
    if (custom !== undefined && custom !== '') {
      bindingPath = resolve(custom);
      binding = require(bindingPath) as NativeBinding;
    } else {
      const gypBuild = {
        resolve: (dir: string) => (require('node-gyp-build') as { resolve(dir: string): string }).resolve(dir),
      };
      // A local build is what node-gyp-build would pick first; looking for it directly saves its scan.
      const local = join(PACKAGE_ROOT, 'build', 'Release', 'zero_sandbox.node');
      bindingPath = existsSync(local) ? local : gypBuild.resolve(PACKAGE_ROOT);
      // process.dlopen is what require does for a .node file, minus the resolution (realpath,
      // package.json self-reference lookup), ~2 ms of every CLI start.
      const addon = { exports: {} };
      process.dlopen(addon, bindingPath);
      binding = addon.exports as NativeBinding;
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SandboxError(
      'native_unavailable',
      `The zero-sandbox native addon could not be loaded from ${custom ?? PACKAGE_ROOT}: ${reason}. ${REBUILD_HINT}`,
      { cause: error, ...(bindingPath === undefined ? {} : { path: bindingPath }) },
    );
  }
  return binding;
}

/** Where the loaded binary lives (after a successful `loadNative()`). */
export function nativeBindingPath(): string | undefined {
  return bindingPath;
}

/** Calls into the addon; anything it throws becomes a SandboxError through `fromNative`. */
export function callNative<T>(fn: (native: NativeBinding) => T): T {
  const native = loadNative();
  try {
    return fn(native);
  } catch (error) {
    throw fromNative(error);
  }
}

/** The async form of `callNative` for Promise-returning native calls. */
export async function callNativeAsync<T>(fn: (native: NativeBinding) => Promise<T>): Promise<T> {
  const native = loadNative();
  try {
    return await fn(native);
  } catch (error) {
    throw fromNative(error);
  }
}
