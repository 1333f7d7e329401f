#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// prepack: refuses to pack a tarball without a prebuild for this platform, or with one older than
// the native sources. Without it every user would compile the addon at install time (and a user
// without a compiler could not install at all). `npm run prebuild` makes one.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = join(root, 'prebuilds', `${process.platform}-${process.arch}`);
const fail = (reason) => {
  process.stderr.write(`prepack: ${reason}; run \`npm run prebuild\` before \`npm pack\` / \`npm publish\`\n`);
  process.exit(1);
};

const addons = existsSync(target) ? readdirSync(target).filter((name) => name.endsWith('.node')) : [];
if (addons.length === 0) fail(`no prebuilt addon in ${target}`);
const helpers = process.platform === 'linux' ? ['zero_sandbox_init'] : [];
for (const name of helpers) if (!existsSync(join(target, name))) fail(`${join(target, name)} is missing`);
const built = Math.min(...[...addons, ...helpers].map((name) => statSync(join(target, name)).mtimeMs));

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}
const sources = Math.max(newestSource(join(root, 'native')), statSync(join(root, 'binding.gyp')).mtimeMs);
if (sources > built) fail(`the prebuild in ${target} is older than the native sources`);
process.stderr.write(`prepack: prebuild for ${process.platform}-${process.arch} found (${addons.join(', ')})\n`);
