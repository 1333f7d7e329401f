#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The package's install script. With a prebuilt addon for this platform (or a local build) there is
// nothing to do. Without one the addon is compiled from the shipped sources (node-gyp: python3,
// make and a C++ compiler). When that fails in an installed copy (under node_modules), the install
// still succeeds: the shell analyzer, the policy and the permission engine need no native code,
// and every sandboxed run is refused with `native_unavailable` until the addon exists (`doctor`
// says so and how to fix it), so nothing runs weaker than asked. In a clone of the repository a
// failed build fails the install, as it must for development and CI.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

function hasAddon() {
  try {
    require('node-gyp-build').resolve(root);
    return true;
  } catch {
    return false;
  }
}

if (!hasAddon()) {
  // npm names the node-gyp it bundles; otherwise whatever node-gyp is on PATH.
  const gyp = process.env.npm_config_node_gyp;
  const built = gyp !== undefined && gyp !== ''
    ? spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: root, stdio: 'inherit' })
    : spawnSync('node-gyp', ['rebuild'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (built.status !== 0) {
    const why = built.error !== undefined ? built.error.message : `node-gyp rebuild exited with ${built.status ?? built.signal}`;
    const installed = root.split(sep).includes('node_modules');
    const target = `${process.platform}-${process.arch}`;
    process.stderr.write(
      `zero-sandbox: no prebuilt addon for ${target}, and compiling it failed (${why}).\n` +
        (installed
          ? 'zero-sandbox: installed without it: the analyzer, policy and engine work; every sandboxed run is refused ' +
            '(native_unavailable) until `npm rebuild zero-sandbox` succeeds with python3, make and a C++ compiler.\n'
          : ''),
    );
    if (!installed) process.exit(built.status ?? 1);
  }
}
