// SPDX-License-Identifier: MIT
// The ONLY module that loads the .node binary (through node-gyp-build) and the error chokepoint
// for every native call.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

/**
 * The prebuilt addon node-gyp-build would load from `root`, found without node-gyp-build (its
 * require, compile and tag parsing are ~1.5 ms of every CLI start), or undefined where its choice
 * could differ and it decides: a local build directory exists, a variable that steers it is set
 * (the package's _PREBUILD directory, PREBUILDS_ONLY, LIBC, npm's target arch or platform,
 * Electron), or this platform's prebuilds directory holds anything but one addon, named for this
 * libc or for none. One candidate that matches every tag is the one it picks.
 */
export function solePrebuild(root: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const steered = ['ZERO_SANDBOX_PREBUILD', 'PREBUILDS_ONLY', 'LIBC', 'npm_config_arch', 'npm_config_platform', 'ELECTRON_RUN_AS_NODE'];
  if (steered.some((name) => env[name] !== undefined) || process.versions.electron !== undefined || 'nw' in process.versions) return undefined;
  if (existsSync(join(root, 'build', 'Release')) || existsSync(join(root, 'build', 'Debug'))) return undefined;
  const dir = join(root, 'prebuilds', `${process.platform}-${process.arch}`);
  let addons: string[];
  try {
    addons = readdirSync(dir).filter((name) => name.endsWith('.node'));
  } catch {
    return undefined;
  }
  // node-gyp-build's libc: musl where /etc/alpine-release exists (Linux only), glibc everywhere else.
  const libc = process.platform === 'linux' && existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
  const [only] = addons;
  if (addons.length !== 1 || (only !== 'zero-sandbox.node' && only !== `zero-sandbox.${libc}.node`)) return undefined;
  return join(dir, only);
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
      bindingPath = existsSync(local) ? local : (solePrebuild(PACKAGE_ROOT) ?? gypBuild.resolve(PACKAGE_ROOT));
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
