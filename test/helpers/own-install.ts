// SPDX-License-Identifier: MIT
// A copy of the built package installed into a workspace's node_modules, as npm or pnpm lays it
// out, so that its own CLI runs from the write root (the `npx zero-sandbox` case).
import { copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { REPO_ROOT } from './cli.js';
import { loadNative, nativeBindingPath } from '../../lib/native/load.js';

/** The run-time dependencies but node-gyp-build (placed by each layout), linked to the repository's own. */
const LINKED = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies).filter(
  (name) => name !== 'node-gyp-build',
);

/** Copies the CLI bundle, the shell grammar, the addon and its init helper into `pkg`. */
function copyPackage(pkg: string): void {
  // The addon as this run loads it (a local build or a prebuild), with the init helper beside it.
  loadNative();
  const addon = relative(REPO_ROOT, nativeBindingPath() as string);
  for (const dir of ['dist/cli', 'dist/lib/bash', dirname(addon)]) mkdirSync(join(pkg, dir), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'dist/lib/bash/tree-sitter-bash.wasm'), join(pkg, 'dist/lib/bash/tree-sitter-bash.wasm'));
  copyFileSync(join(REPO_ROOT, 'package.json'), join(pkg, 'package.json'));
  for (const name of ['main.js', 'run.js', 'run.cache', 'cli.js', 'cli.cache', 'package.json']) copyFileSync(join(REPO_ROOT, 'dist/cli', name), join(pkg, 'dist/cli', name));
  for (const file of [addon, join(dirname(addon), 'zero_sandbox_init')]) copyFileSync(join(REPO_ROOT, file), join(pkg, file));
}

/**
 * npm's layout: `ws/node_modules/zero-sandbox` a directory, dependencies hoisted next to it (one
 * copied, a real directory in the write root; the others linked), and
 * `.bin/zero-sandbox -> ../zero-sandbox/dist/cli/main.js`. Returns the package directory.
 */
export function installNpmStyle(ws: string): string {
  const pkg = join(ws, 'node_modules', 'zero-sandbox');
  copyPackage(pkg);
  cpSync(join(REPO_ROOT, 'node_modules', 'node-gyp-build'), join(ws, 'node_modules', 'node-gyp-build'), { recursive: true });
  for (const name of LINKED) symlinkSync(join(REPO_ROOT, 'node_modules', name), join(ws, 'node_modules', name));
  mkdirSync(join(ws, 'node_modules', '.bin'));
  symlinkSync('../zero-sandbox/dist/cli/main.js', join(ws, 'node_modules', '.bin', 'zero-sandbox'));
  return pkg;
}

/**
 * pnpm's layout: the package in `node_modules/.pnpm/zero-sandbox@<version>/node_modules/`, with
 * its dependencies linked beside it, `node_modules/zero-sandbox` a link to it, and
 * `node_modules/.bin/zero-sandbox` a shell shim that runs the CLI through that link. Returns the
 * package directory.
 */
export function installPnpmStyle(ws: string): string {
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const store = join(ws, 'node_modules', '.pnpm', `zero-sandbox@${version}`, 'node_modules');
  const pkg = join(store, 'zero-sandbox');
  copyPackage(pkg);
  for (const name of ['node-gyp-build', ...LINKED]) symlinkSync(join(REPO_ROOT, 'node_modules', name), join(store, name));
  symlinkSync(relative(join(ws, 'node_modules'), pkg), join(ws, 'node_modules', 'zero-sandbox'));
  mkdirSync(join(ws, 'node_modules', '.bin'));
  const shim = `#!/bin/sh\nbasedir=$(dirname "$0")\nexec "${process.execPath}" "$basedir/../zero-sandbox/dist/cli/main.js" "$@"\n`;
  writeFileSync(join(ws, 'node_modules', '.bin', 'zero-sandbox'), shim, { mode: 0o755 });
  return pkg;
}
