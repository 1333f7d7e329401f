// SPDX-License-Identifier: MIT
// Cold-start contract of the shipped CLI (bin + bundles + code caches): `run -- CMD` loads neither zod
// nor tree-sitter nor the Node modules only other paths need, yet a config file is still validated
// (zod loads) and a shell string that needs parsing still gets the tree-sitter parser; the code cache is used
// when it fits and harmless when it does not. Timing is checked by `npm run bench`, not here.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { CLI_PATH } from '../helpers/cli.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';
import { fastParse } from '../../lib/bash/fast-parse.js';

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

test('the CLI is two CommonJS bundles (run alone, and the whole CLI), their V8 code caches and the bin that runs them', () => {
  const dir = join(CLI_PATH, '..');
  assert.equal(readdirSync(dir).sort(), ['cli.cache', 'cli.js', 'main.js', 'package.json', 'run.cache', 'run.js']);
  assert.is((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type, 'commonjs');
  assert.is(readFileSync(CLI_PATH, 'utf8').split('\n', 1)[0], '#!/usr/bin/env node');
  // The run bundle is the smaller one: it leaves out the other subcommands.
  assert.ok(statSync(join(dir, 'run.js')).size < statSync(join(dir, 'cli.js')).size);
});

/**
 * Which bundle the bin at `bin` loads for `args` and how it compiled it: `<bundle>
 * <used|rejected|none>` (and that the bundle loaded). The arguments are put where the bin looks,
 * after a script that is not the bin, so the bundle loads without running a command.
 */
function codeCacheOf(bin: string, args: string[] = []): string {
  const probe = [
    `process.argv.splice(1, process.argv.length, process.execPath, ...${JSON.stringify(args)});`,
    `const m = require(${JSON.stringify(bin)});`,
    "console.log(typeof (m.bundle === 'run' ? m.mainRun : m.main) === 'function' ? `${m.bundle} ${m.codeCache}` : 'broken');",
  ].join('\n');
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
  return result.stdout.trim();
}

test('the bin runs `run` from the run bundle and everything else from the whole CLI, each with the code cache built for this Node', () => {
  assert.is(codeCacheOf(CLI_PATH), 'cli used');
  assert.is(codeCacheOf(CLI_PATH, ['--version']), 'cli used');
  assert.is(codeCacheOf(CLI_PATH, ['check', '--help']), 'cli used');
  assert.is(codeCacheOf(CLI_PATH, ['run', '--help']), 'run used');
  // `run` only as the first word picks the run bundle.
  assert.is(codeCacheOf(CLI_PATH, ['analyze', 'run']), 'cli used');
});

test('a cache older than its bundle is not used, a corrupt one is rejected by V8, and the CLI works either way', () => {
  const copy = mkdtempSync(join(tmpdir(), 'zs-cli-copy-'));
  try {
    cpSync(join(CLI_PATH, '..'), copy, { recursive: true, preserveTimestamps: true });
    const bin = join(copy, 'main.js');
    const later = new Date(Date.now() + 60_000);
    for (const [name, args] of [['cli', []], ['run', ['run', '--help']]] as const) {
      utimesSync(join(copy, `${name}.js`), later, later);
      assert.is(codeCacheOf(bin, [...args]), `${name} none`);
      writeFileSync(join(copy, `${name}.cache`), Buffer.alloc(4096, 7));
      utimesSync(join(copy, `${name}.cache`), later, later);
      assert.is(codeCacheOf(bin, [...args]), `${name} rejected`);
    }
    const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    assert.is(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: zero-sandbox <command>/);
    const runHelp = spawnSync(process.execPath, [bin, 'run', '--help'], { encoding: 'utf8' });
    assert.is(runHelp.status, 0, runHelp.stderr);
    assert.match(runHelp.stdout, /^Usage: zero-sandbox run /);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test('the run bundle answers usage errors as the whole CLI does (message, hint, exit code 2)', () => {
  const viaRun = spawnSync(process.execPath, [CLI_PATH, 'run', '--network', 'sometimes', '--', '/bin/true'], { encoding: 'utf8' });
  assert.is(viaRun.status, 2, viaRun.stderr);
  assert.is(viaRun.stderr, "zero-sandbox run: --network must be deny or allow, not \"sometimes\"\nRun 'zero-sandbox run --help' for usage.\n");
  const noCommand = spawnSync(process.execPath, [CLI_PATH, 'run'], { encoding: 'utf8' });
  assert.is(noCommand.status, 2, noCommand.stderr);
  assert.match(noCommand.stderr, /^zero-sandbox run: no command/);
});

sandboxTest('run -- /bin/true loads neither zod, tree-sitter nor crypto/net/stream/tty/perf_hooks/child_process/fs.promises', () => {
  const tree = makeTree();
  try {
    const loaded = runLoaded(tree, ['--', '/bin/true']);
    assert.is(loaded.status, 0, loaded.stderr);
    assert.not.ok(requiredPackage(loaded, 'zod'), 'zod was loaded');
    assert.not.ok(requiredPackage(loaded, 'web-tree-sitter'), 'web-tree-sitter was loaded');
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

sandboxTest('control: a shell string the fast parser does not read (a case statement) loads the tree-sitter parser (web-tree-sitter)', () => {
  const tree = makeTree();
  try {
    // The fast parser reads plain lists, pipes and $(...) itself; a case statement is tree-sitter's.
    const command = 'case x in x) echo ok;; esac';
    assert.is(fastParse(command), undefined, 'the control command must need tree-sitter');
    const loaded = runLoaded(tree, ['-c', command]);
    assert.is(loaded.status, 0, loaded.stderr);
    assert.ok(requiredPackage(loaded, 'web-tree-sitter'), 'web-tree-sitter was not loaded');
  } finally {
    tree.cleanup();
  }
});

test.run();
