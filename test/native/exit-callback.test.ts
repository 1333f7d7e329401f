// The exit of a sandbox reaches JavaScript from a libuv callback of the addon, with no JavaScript
// frame above it. Nothing thrown there may take the caller down with it: a listener that throws
// used to abort V8 ("Cannot create a handle without a HandleScope", exit 134), and so did a
// protected-path cleanup that threw (a tree deeper than PATH_MAX). Now a listener's error is an
// ordinary uncaught exception (process.on('uncaughtException') sees it and the process goes on;
// the same for the stdout hangup watch),
// and a failing cleanup becomes a SandboxError. Each case runs in a child Node process, so that an
// abort shows as its exit status instead of killing the test runner.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { REPO_ROOT } from '../helpers/cli.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

const PROCESS_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'process.js')).href;
const LOAD_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'native', 'load.js')).href;
const RUN_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'run.js')).href;

function runScript(t: Tree, body: string): { status: number | null; stdout: string; stderr: string } {
  const script = join(t.base, 'script.mjs');
  writeFileSync(script, `import { spawnSandboxed } from ${JSON.stringify(PROCESS_JS)};\nimport { runSandboxed } from ${JSON.stringify(RUN_JS)};\nconst ws = ${JSON.stringify(t.ws)};\n${body}\n`);
  const out = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 120_000 });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** A tree too deep for one path (GNU rm walks it with descriptors; Node's rmSync cannot). */
function removeTree(t: Tree): void {
  execFileSync('rm', ['-rf', t.base]);
}

sandboxTest('an exit listener that throws is an uncaught exception the caller can handle, not a V8 abort', () => {
  const t = makeTree();
  try {
    const r = runScript(t, `
process.on('uncaughtException', (error) => console.log('uncaught:', error.message));
const child = spawnSandboxed(['/bin/true'], { workspace: ws, stdio: ['ignore', 'ignore', 'ignore'] });
child.on('exit', () => { throw new Error('listener failed'); });
const exit = await child.exited;
console.log('exited', exit.exitCode);
await new Promise((resolve) => setTimeout(resolve, 100));
const again = await runSandboxed(['/bin/sh', '-c', 'echo again'], { workspace: ws });
console.log('next run', again.exitCode, again.stdout.trim());
`);
    assert.is(r.status, 0, r.stderr);
    assert.not.match(r.stderr, /FATAL ERROR/);
    assert.match(r.stdout, /exited 0\n/);
    assert.match(r.stdout, /uncaught: listener failed\n/);
    assert.match(r.stdout, /next run 0 again\n/);
  } finally {
    removeTree(t);
  }
});

sandboxTest('an exit listener that throws, unhandled, ends the caller like any uncaught exception (exit 1, not 134)', () => {
  const t = makeTree();
  try {
    const r = runScript(t, `
const child = spawnSandboxed(['/bin/true'], { workspace: ws, stdio: ['ignore', 'ignore', 'ignore'] });
child.on('exit', () => { throw new Error('listener failed'); });
await new Promise((resolve) => setTimeout(resolve, 30_000));
`);
    assert.is(r.status, 1, r.stderr);
    assert.not.match(r.stderr, /FATAL ERROR/);
    assert.match(r.stderr, /Error: listener failed/);
  } finally {
    removeTree(t);
  }
});

sandboxTest('a hangup callback that throws is an uncaught exception too, not a V8 abort', () => {
  const t = makeTree();
  try {
    // The addon's other libuv callback: the reader of a pipe we write to goes away.
    const r = runScript(t, `
const { callNative } = await import(${JSON.stringify(LOAD_JS)});
const { spawn } = await import('node:child_process');
process.on('uncaughtException', (error) => { console.log('uncaught:', error.message); process.exit(0); });
const reader = spawn('sleep', ['30'], { stdio: ['pipe', 'ignore', 'ignore'] });
console.log('watching', callNative((binding) => binding.watchHangup(reader.stdin._handle.fd, () => { throw new Error('hangup listener failed'); })));
reader.kill('SIGKILL');
await new Promise((resolve) => setTimeout(resolve, 30_000));
`);
    assert.is(r.status, 0, r.stderr);
    assert.not.match(r.stderr, /FATAL ERROR/);
    assert.match(r.stdout, /watching true\nuncaught: hangup listener failed\n/);
  } finally {
    removeTree(t);
  }
});

sandboxTest('a protected-path cleanup that fails (a planted tree deeper than PATH_MAX) neither crashes the caller nor passes silently', () => {
  const t = makeTree();
  try {
    // The command plants .zero (a protected path, removed after the run) holding a chain of
    // directories whose full path is far beyond PATH_MAX.
    const plant = 'import os\nos.mkdir(".zero")\nos.chdir(".zero")\nfor i in range(700):\n    os.mkdir("d" * 10)\n    os.chdir("d" * 10)\nprint("planted")';
    const r = runScript(t, `
let errorEvents = 0;
const child = spawnSandboxed(['python3', '-c', ${JSON.stringify(plant)}], { workspace: ws, stdio: ['ignore', 'ignore', 'inherit'] });
child.on('error', (error) => { errorEvents++; console.log('error event', error.code); });
try {
  const exit = await child.exited;
  console.log('resolved', JSON.stringify(exit.protectedPathViolations));
} catch (error) {
  console.log('rejected', error.name, error.code, errorEvents);
}
const again = await runSandboxed(['/bin/sh', '-c', 'echo again'], { workspace: ws });
console.log('next run', again.exitCode, again.stdout.trim());
`);
    assert.is(r.status, 0, r.stderr);
    assert.not.match(r.stderr, /FATAL ERROR/);
    assert.match(r.stdout, /next run 0 again\n/);
    // Either the cleanup coped with the tree (removed and reported it), or its failure is a
    // SandboxError on both channels; never a result that looks clean.
    const removed = /resolved \[".*\.zero"\]/.test(r.stdout);
    const refused = /error event internal_error\nrejected SandboxError internal_error 1\n/.test(r.stdout);
    assert.ok(removed || refused, r.stdout + r.stderr);
    if (removed) assert.not.ok(existsSync(join(t.ws, '.zero')), 'what was reported removed is gone');
  } finally {
    removeTree(t);
  }
});

test.run();
