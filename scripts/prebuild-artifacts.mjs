#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// After prebuildify: copies the helper executables the addon needs (Linux: zero_sandbox_init)
// next to the prebuilt .node, where lib/backend/linux/spec.ts looks for them.
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const helpers = process.platform === 'linux' ? ['zero_sandbox_init'] : [];
const target = join(root, 'prebuilds', `${process.platform}-${process.arch}`);
mkdirSync(target, { recursive: true });
for (const name of helpers) {
  const source = join(root, 'build', 'Release', name);
  if (!existsSync(source)) {
    console.error(`prebuild-artifacts: ${source} is missing; run the native build first`);
    process.exit(1);
  }
  const dest = join(target, name);
  copyFileSync(source, dest);
  chmodSync(dest, 0o755);
  execFileSync('strip', ['--strip-all', dest]);
  console.log(`prebuild-artifacts: ${dest}`);
}
