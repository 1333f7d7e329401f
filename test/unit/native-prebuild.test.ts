// SPDX-License-Identifier: MIT
// solePrebuild (lib/native/load.ts) finds the prebuilt addon without node-gyp-build only where
// node-gyp-build itself would load that same file: compared with its own resolve() over package
// layouts (one addon, an untagged one, another libc's, two of them, a local build beside them, a
// variable that steers it, no prebuilds at all).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { solePrebuild } from '../../lib/native/load.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

test.after(removeTempDirs);

const gypBuild = createRequire(import.meta.url)('node-gyp-build') as { resolve(dir: string): string };
const libc = process.platform === 'linux' && existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
const otherLibc = libc === 'glibc' ? 'musl' : 'glibc';
const tuple = `${process.platform}-${process.arch}`;

/** A package root named zero-sandbox with these files (paths relative to it, empty content). */
function layout(files: string[]): string {
  const root = tempDir('zs-prebuild-');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'zero-sandbox' }));
  for (const file of files) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), '');
  }
  return root;
}

/** node-gyp-build's answer for `root`, or undefined where it finds nothing (it throws). */
function theirs(root: string): string | undefined {
  try {
    return gypBuild.resolve(root);
  } catch {
    return undefined;
  }
}

const LAYOUTS: Array<{ name: string; files: string[]; found: boolean }> = [
  { name: 'one addon for this libc', files: [`prebuilds/${tuple}/zero-sandbox.${libc}.node`], found: true },
  { name: 'one addon and the init binary', files: [`prebuilds/${tuple}/zero-sandbox.${libc}.node`, `prebuilds/${tuple}/zero_sandbox_init`], found: true },
  { name: 'one untagged addon', files: [`prebuilds/${tuple}/zero-sandbox.node`], found: true },
  { name: 'another libc only', files: [`prebuilds/${tuple}/zero-sandbox.${otherLibc}.node`], found: false },
  { name: 'both libcs', files: [`prebuilds/${tuple}/zero-sandbox.${libc}.node`, `prebuilds/${tuple}/zero-sandbox.${otherLibc}.node`], found: false },
  { name: 'an addon of another name', files: [`prebuilds/${tuple}/other.node`], found: false },
  { name: 'a local build beside the prebuild', files: [`prebuilds/${tuple}/zero-sandbox.${libc}.node`, 'build/Release/anything.node'], found: false },
  { name: 'a debug build beside the prebuild', files: [`prebuilds/${tuple}/zero-sandbox.${libc}.node`, 'build/Debug/zero_sandbox.node'], found: false },
  { name: 'no prebuilds for this platform', files: ['prebuilds/plan9-mips/zero-sandbox.node'], found: false },
  { name: 'no prebuilds at all', files: [], found: false },
];

for (const { name, files, found } of LAYOUTS) {
  test(`${name}: the same file as node-gyp-build, or node-gyp-build decides`, () => {
    const root = layout(files);
    const ours = solePrebuild(root, {});
    if (found) {
      assert.ok(ours !== undefined, 'the fast path should find the addon');
      assert.is(ours, theirs(root));
    } else {
      assert.is(ours, undefined);
    }
  });
}

test('a variable that steers node-gyp-build leaves the choice to it', () => {
  const root = layout([`prebuilds/${tuple}/zero-sandbox.${libc}.node`]);
  assert.is(solePrebuild(root, {}), join(root, 'prebuilds', tuple, `zero-sandbox.${libc}.node`));
  for (const name of ['ZERO_SANDBOX_PREBUILD', 'PREBUILDS_ONLY', 'LIBC', 'npm_config_arch', 'npm_config_platform', 'ELECTRON_RUN_AS_NODE']) {
    assert.is(solePrebuild(root, { [name]: '1' }), undefined, name);
  }
});

test.run();
