// SPDX-License-Identifier: MIT
// Cold-start contract: the package entry and the analysis of commands the analyzer reads without
// the parser do not load web-tree-sitter; a command that needs the parser fails closed until
// loadShellParser()/prepareShellParser() has loaded it, and is analyzed after.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../helpers/cli.js';

// A file: URL, never a bare path: a Windows path is not an ESM specifier.
const LIB_URL = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'index.js')).href;

const SCRIPT = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(`${REPO_ROOT}/package.json`)});
const loaded = () => Object.keys(require.cache).some((key) => key.includes('tree-sitter'));
const lib = await import(${JSON.stringify(LIB_URL)});
const steps = [loaded()];
lib.analyzeArgv(['/bin/true']);
lib.analyzeArgv(['sudo', '-u', 'x', 'curl', 'https://x.test']);
lib.analyzeCommand('git status');
steps.push(loaded(), lib.parserStatus().state);
const early = lib.analyzeCommand('while read f; do curl "$f"; done < list');
steps.push(early.tooComplex, loaded());
steps.push((await lib.prepareShellParser('while read f; do curl "$f"; done < list')).state, loaded());
const late = lib.analyzeCommand('while read f; do curl "$f"; done < list');
steps.push(late.tooComplex, late.network);
console.log(JSON.stringify(steps));
`;

test('plain commands leave the parser unloaded; a command that needs it fails closed until it is loaded', () => {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout.trim()), [false, false, 'not_loaded', true, false, 'ready', true, false, true]);
});

test('analyzeShellCommand loads the parser itself: the same command is analyzed completely without a prior loadShellParser()', () => {
  const script = `
    const lib = await import(${JSON.stringify(LIB_URL)});
    const text = 'while read f; do curl "$f"; done < list';
    const early = lib.analyzeCommand(text);
    const awaited = await lib.analyzeShellCommand(text);
    console.log(JSON.stringify([early.tooComplex, /analyzeShellCommand/.test(early.reasons.tooComplex), awaited.tooComplex, awaited.network]));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout.trim()), [true, true, false, true]);
});

// WebAssembly compiles on V8's threads, which Node's loop does not count: with nothing else alive,
// Node would resume the load from a step that first waits for every V8 background job, and a
// sandbox started right after the load would not be watched until then (seconds under load).
test('while the parser loads, a timer keeps the loop alive; after the load nothing of it is left', () => {
  const script = `
    const lib = await import(${JSON.stringify(LIB_URL)});
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timers();
    const loading = lib.loadShellParser();
    const during = timers();
    const status = await loading;
    console.log(JSON.stringify([before, during, status.state, timers()]));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout.trim()), [0, 1, 'ready', 0]);
});

test.run();
