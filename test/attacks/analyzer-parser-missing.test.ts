// SPDX-License-Identifier: MIT
// Attack: make the shell parser fail to load (an install without the WebAssembly grammar, a broken
// web-tree-sitter) and hope the analyzer fails open, so that `run -c 'true && rm -rf build'` or a
// loop the analyzer cannot read runs at once inside the workspace and deletes or writes files.
// Fix: without a parser a shell command is unparseable, any data-destroying program name in it is
// classified destructive, the engine asks (headless: denies) for every shell command it could not
// read, the CLI warns once, and doctor reports the analyzer as a missing layer with the fix.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';
import { makeTree, sandboxTest, TREE_BASE } from '../helpers/sandbox.js';

/**
 * A copy of the built package whose bash grammar (tree-sitter-bash.wasm) is missing, or with
 * `corrupt`, replaced by a file that is not WebAssembly.
 */
function packageWithoutGrammar(corrupt = false): { root: string; cli: string; cleanup(): void } {
  const root = mkdtempSync(join(TREE_BASE, 'zs-noparser-'));
  cpSync(join(REPO_ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  // The addon, wherever this checkout has it (node-gyp build or prebuildify output).
  for (const dir of ['build', 'prebuilds']) if (existsSync(join(REPO_ROOT, dir))) symlinkSync(join(REPO_ROOT, dir), join(root, dir));
  const grammar = join(root, 'dist', 'lib', 'bash', 'tree-sitter-bash.wasm');
  rmSync(grammar);
  if (corrupt) writeFileSync(grammar, '<html>not the grammar</html>');
  return { root, cli: join(root, 'dist', 'cli', 'main.js'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

function cli(path: string, args: string[], cwd: string, config: string) {
  // stdin is not a terminal: a prompt is a denial.
  return spawnSync(process.execPath, [path, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_CONFIG_HOME: join(config, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(config, 'grants.json') },
    timeout: 60_000,
  });
}

sandboxTest('without a parser, run -c "true && rm -rf build" is denied and build/ survives', () => {
  const pkg = packageWithoutGrammar();
  const tree = makeTree();
  try {
    mkdirSync(join(tree.ws, 'build'));
    writeFileSync(join(tree.ws, 'build', 'out.o'), 'object');
    const result = cli(pkg.cli, ['run', '--workspace', tree.ws, '-c', 'true && rm -rf build'], tree.ws, tree.base);
    assert.is(result.status, 1, result.stderr);
    assert.ok(existsSync(join(tree.ws, 'build', 'out.o')), 'build/ was deleted');
    assert.match(result.stderr, /destructive|approval/);
  } finally {
    tree.cleanup();
    pkg.cleanup();
  }
});

/**
 * Runs `command` from a copy of the package without a working grammar: denied, nothing ran, one
 * warning that names `reason`. Control: the package as built runs the same command.
 */
function assertDeniedWithOneWarning(command: string, reason: RegExp, corrupt = false): void {
  const pkg = packageWithoutGrammar(corrupt);
  const tree = makeTree();
  try {
    const result = cli(pkg.cli, ['run', '--workspace', tree.ws, '-c', command], tree.ws, tree.base);
    assert.is(result.status, 1, result.stderr);
    assert.not.ok(existsSync(join(tree.ws, 'made')), 'the command ran');
    assert.is(result.stderr.match(/warning: the shell command analyzer is unavailable/g)?.length, 1, result.stderr);
    assert.match(result.stderr, reason);
    const control = cli(join(REPO_ROOT, 'dist', 'cli', 'main.js'), ['run', '--workspace', tree.ws, '-c', command], tree.ws, tree.base);
    assert.is(control.status, 0, control.stderr);
    assert.ok(existsSync(join(tree.ws, 'made')), 'the control did not run');
  } finally {
    tree.cleanup();
    pkg.cleanup();
  }
}

sandboxTest('without a parser, a command only the parser could read is denied, with one warning', () => {
  assertDeniedWithOneWarning('while [ ! -e made ]; do touch made; done', /analyzer is unavailable/);
});

// Most commands are read by the fast path, which never loads the parser: a broken install must
// still show on the first of them, not only once a command needs the parser.
sandboxTest('without a parser, a command the fast path reads is denied too, with one warning, before anything loads', () => {
  assertDeniedWithOneWarning('echo hi > made && ls', /tree-sitter-bash\.wasm/);
  assertDeniedWithOneWarning('echo hi > made && ls', /is not a WebAssembly module/, true);
});

test('without a parser, commands the fast path reads are unparseable as well, without loading anything', () => {
  const pkg = packageWithoutGrammar();
  try {
    const script = `
      const lib = await import(${JSON.stringify(join(pkg.root, 'dist', 'lib', 'index.js'))});
      const out = {};
      for (const text of ['ls && echo hi', 'git status', 'cat a | grep b']) out[text] = lib.classifyCommand(text).categories;
      console.log(JSON.stringify({ out, status: lib.parserStatus() }));
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.is(result.status, 0, result.stderr);
    const { out, status } = JSON.parse(result.stdout) as { out: Record<string, string[]>; status: { state: string; reason: string } };
    assert.is(status.state, 'failed');
    assert.match(status.reason, /tree-sitter-bash\.wasm/);
    for (const [text, categories] of Object.entries(out)) assert.ok(categories.includes('unparseable_command'), `${text}: ${categories.join(', ')}`);
    // Control: the package as built reads the same commands without loading the parser, and fully.
    const control = spawnSync(process.execPath, ['--input-type=module', '-e', script.replace(JSON.stringify(join(pkg.root, 'dist', 'lib', 'index.js')), JSON.stringify(join(REPO_ROOT, 'dist', 'lib', 'index.js')))], { encoding: 'utf8', timeout: 60_000 });
    assert.is(control.status, 0, control.stderr);
    const good = JSON.parse(control.stdout) as { out: Record<string, string[]>; status: { state: string } };
    assert.is(good.status.state, 'not_loaded');
    for (const [text, categories] of Object.entries(good.out)) assert.not.ok(categories.includes('unparseable_command'), `${text}: ${categories.join(', ')}`);
  } finally {
    pkg.cleanup();
  }
});

test('without a parser, the library API never answers "safe": analyzeShellCommand and analyzeCommand fail closed', () => {
  const pkg = packageWithoutGrammar();
  try {
    const script = `
      const lib = await import(${JSON.stringify(join(pkg.root, 'dist', 'lib', 'index.js'))});
      const text = 'while true; do rm -rf build; done';
      const awaited = await lib.analyzeShellCommand(text);
      const sync = lib.analyzeCommand(text);
      const categories = lib.classifyCommand(text).categories;
      console.log(JSON.stringify({ awaited, sync, categories, status: lib.parserStatus().state }));
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.is(result.status, 0, result.stderr);
    const out = JSON.parse(result.stdout) as Record<'awaited' | 'sync', { tooComplex: boolean; reasons: { tooComplex?: string } }> & { categories: string[]; status: string };
    assert.is(out.status, 'failed');
    for (const analysis of [out.awaited, out.sync]) {
      assert.is(analysis.tooComplex, true);
      assert.match(analysis.reasons.tooComplex ?? '', /could not be loaded/);
    }
    assert.equal(out.categories, ['destructive', 'unparseable_command']);
  } finally {
    pkg.cleanup();
  }
});

test('without a parser, analyze reports unparseable plus destructive and doctor reports the analyzer missing with the fix', () => {
  const pkg = packageWithoutGrammar();
  try {
    const analyzed = cli(pkg.cli, ['analyze', '--json', '--', 'if true; then rm -f a; curl x; fi'], pkg.root, pkg.root);
    assert.is(analyzed.status, 0, analyzed.stderr);
    const out = JSON.parse(analyzed.stdout) as { risk: { categories: string[] } };
    assert.equal(out.risk.categories, ['destructive', 'network', 'shell', 'unparseable_command']);
    assert.match(analyzed.stderr, /warning: the shell command analyzer is unavailable/);
    const doctor = cli(pkg.cli, ['doctor', '--json'], pkg.root, pkg.root);
    assert.is(doctor.status, 1, doctor.stderr);
    const report = JSON.parse(doctor.stdout) as { analyzer: { available: boolean; reason: string; fix: string } };
    assert.is(report.analyzer.available, false);
    assert.match(report.analyzer.reason, /tree-sitter-bash\.wasm/);
    assert.match(report.analyzer.fix, /reinstall zero-sandbox/);
  } finally {
    pkg.cleanup();
  }
});

// The install check finds web-tree-sitter as Node's require would (the nearest node_modules that
// has it), without require.resolve: a broken runtime in the package's own node_modules is the one
// reported, not a working copy further up.
test('a web-tree-sitter runtime that is not WebAssembly makes the parser fail closed before anything loads', () => {
  const root = mkdtempSync(join(TREE_BASE, 'zs-noruntime-'));
  try {
    cpSync(join(REPO_ROOT, 'dist'), join(root, 'dist'), { recursive: true });
    cpSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
    mkdirSync(join(root, 'node_modules'));
    for (const name of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (name === 'web-tree-sitter') cpSync(join(REPO_ROOT, 'node_modules', name), join(root, 'node_modules', name), { recursive: true });
      else symlinkSync(join(REPO_ROOT, 'node_modules', name), join(root, 'node_modules', name));
    }
    writeFileSync(join(root, 'node_modules', 'web-tree-sitter', 'tree-sitter.wasm'), '<html>not the runtime</html>');
    for (const dir of ['build', 'prebuilds']) if (existsSync(join(REPO_ROOT, dir))) symlinkSync(join(REPO_ROOT, dir), join(root, dir));
    const script = `
      const lib = await import(${JSON.stringify(join(root, 'dist', 'lib', 'index.js'))});
      console.log(JSON.stringify({ categories: lib.classifyCommand('ls && echo hi').categories, status: lib.parserStatus() }));
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.is(result.status, 0, result.stderr);
    const out = JSON.parse(result.stdout) as { categories: string[]; status: { state: string; reason?: string } };
    assert.is(out.status.state, 'failed');
    assert.ok(out.status.reason?.includes(join(root, 'node_modules', 'web-tree-sitter', 'tree-sitter.wasm')), out.status.reason);
    assert.match(out.status.reason ?? '', /is not a WebAssembly module/);
    assert.ok(out.categories.includes('unparseable_command'), out.categories.join(', '));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
