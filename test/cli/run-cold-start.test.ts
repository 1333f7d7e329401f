// SPDX-License-Identifier: MIT
// Cold-start contract of the shipped CLI (the bundle): `run -- CMD` loads neither zod nor tree-sitter
// nor the Node modules only other paths need, yet a config file is still validated (zod loads) and a
// shell string that needs parsing still gets tree-sitter. Timing is checked by `npm run bench`, not here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { CLI_PATH } from '../helpers/cli.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

// Preloaded into the CLI process: at exit, writes the builtins Node loaded and every CommonJS module
// required (zod and tree-sitter are required from the bundle) to $ZS_LOADED_OUT.
const PRELOAD = `
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  writeFileSync(process.env.ZS_LOADED_OUT, JSON.stringify({ builtins, required: Object.keys(require.cache) }));
});
`;

/** Builtins that `run -- CMD` with inherited stdio has no use for (each costs 1-4 ms to load). */
const NOT_ON_RUN_PATH = ['crypto', 'net', 'stream', 'tty', 'perf_hooks', 'child_process', 'fs/promises'];

interface Loaded {
  status: number | null;
  stderr: string;
  builtins: string[];
  required: string[];
}

function runLoaded(tree: Tree, args: string[]): Loaded {
  const preload = join(tree.base, 'preload.cjs');
  const out = join(tree.base, 'loaded.json');
  writeFileSync(preload, PRELOAD);
  const env = { ...process.env, XDG_CONFIG_HOME: join(tree.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(tree.base, 'grants.json'), ZS_LOADED_OUT: out };
  const result = spawnSync(process.execPath, ['-r', preload, CLI_PATH, 'run', '--workspace', tree.ws, ...args], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as { builtins: string[]; required: string[] };
  return { status: result.status, stderr: result.stderr, ...loaded };
}

const requiredPackage = (loaded: Loaded, name: string) => loaded.required.some((path) => path.includes(`/node_modules/${name}/`));

test('the CLI is one CommonJS file (no ES module loader, no chunks to resolve, read and link one by one)', () => {
  const dir = join(CLI_PATH, '..');
  assert.equal(readdirSync(dir).sort(), ['main.js', 'package.json']);
  assert.is((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type, 'commonjs');
  const head = readFileSync(CLI_PATH, 'utf8').split('\n', 2);
  assert.equal(head, ['#!/usr/bin/env node', '"use strict";']);
});

sandboxTest('run -- /bin/true loads neither zod, tree-sitter nor crypto/net/stream/tty/perf_hooks/child_process/fs.promises', () => {
  const tree = makeTree();
  try {
    const loaded = runLoaded(tree, ['--', '/bin/true']);
    assert.is(loaded.status, 0, loaded.stderr);
    assert.not.ok(requiredPackage(loaded, 'zod'), 'zod was loaded');
    assert.not.ok(requiredPackage(loaded, 'tree-sitter'), 'tree-sitter was loaded');
    assert.equal(loaded.builtins.filter((name) => NOT_ON_RUN_PATH.includes(name)), []);
  } finally {
    tree.cleanup();
  }
});

sandboxTest('control: a project config file is still validated with zod, and an invalid one still exits 3', () => {
  const tree = makeTree();
  try {
    mkdirSync(join(tree.ws, '.zero'));
    writeFileSync(join(tree.ws, '.zero', 'config.json'), '{"sandbox": {"denyRead": ["secret"]}}');
    const valid = runLoaded(tree, ['--', '/bin/true']);
    assert.is(valid.status, 0, valid.stderr);
    assert.ok(requiredPackage(valid, 'zod'), 'zod was not loaded for a config file');
    writeFileSync(join(tree.ws, '.zero', 'config.json'), '{"sandbox": {"denyRaed": ["secret"]}}');
    const invalid = runLoaded(tree, ['--', '/bin/true']);
    assert.is(invalid.status, 3, invalid.stderr);
    assert.match(invalid.stderr, /\.zero\/config\.json/);
  } finally {
    tree.cleanup();
  }
});

sandboxTest('control: a shell string that needs parsing loads tree-sitter', () => {
  const tree = makeTree();
  try {
    const loaded = runLoaded(tree, ['-c', 'echo "$(printf ok)"']);
    assert.is(loaded.status, 0, loaded.stderr);
    assert.ok(requiredPackage(loaded, 'tree-sitter'), 'tree-sitter was not loaded');
  } finally {
    tree.cleanup();
  }
});

test.run();
