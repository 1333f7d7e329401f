#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Fails when a C++ file under native/ is not formatted as .clang-format says (clang-format
// --dry-run --Werror), naming every such file. Before that, it checks that clang-format does flag
// a misformatted source, so a clang-format that ignores the configuration cannot pass everything.
// Usage: node scripts/check-format.mjs [--fix]   (needs: apt-get install -y clang-format)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tool = process.env.ZERO_SANDBOX_CLANG_FORMAT ?? 'clang-format';
const fix = process.argv.includes('--fix');

function fail(message) {
  process.stderr.write(`check:format: ${message}\n`);
  process.exit(1);
}

function run(args, input) {
  const result = spawnSync(tool, args, { cwd: root, encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (result.error?.code === 'ENOENT') fail(`${tool} not found on PATH; install it with: apt-get install -y clang-format`);
  if (result.error) fail(`${tool}: ${result.error.message}`);
  return result;
}

function sources(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.(cc|h)$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

const version = run(['--version']).stdout.trim();
// The configuration is found from the file's path: this name places the probe under native/.
const probe = run(['--dry-run', '--Werror', '--assume-filename', join(root, 'native', 'probe.cc')], 'int  f( int x ){return x;}\n');
if (probe.status === 0) fail(`${version} accepted a misformatted source: the check would pass anything`);

const files = sources(join(root, 'native'));
if (files.length === 0) fail('no C++ sources under native/');
if (fix) {
  const result = run(['-i', ...files]);
  if (result.status !== 0) fail(result.stderr);
  process.stdout.write(`formatted ${files.length} files with ${version}\n`);
} else {
  const unformatted = files.filter((file) => run(['--dry-run', '--Werror', file]).status !== 0);
  if (unformatted.length > 0) {
    fail(`not formatted (${version}; run node scripts/check-format.mjs --fix):\n  ${unformatted.map((f) => relative(root, f)).join('\n  ')}`);
  }
  process.stdout.write(`ok: ${files.length} C++ files under native/ are formatted (${version})\n`);
}
