// SPDX-License-Identifier: MIT
// A parse's time limit is the parsing thread's CPU time. Other threads of the process burning CPU
// (V8 recompiles the WebAssembly parser in the background for seconds after it loads; a caller may
// run workers) must not use it up: a script the analyzer reads on an idle process is read the same
// while four worker threads spin. Run in a child process so the spinning threads are its own.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO_ROOT } from '../helpers/cli.js';

const SCRIPT = `
import { Worker } from 'node:worker_threads';
const lib = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'index.js')).href)});
await lib.loadShellParser();
// Constructs only tree-sitter reads (case, for), about 64 KiB: cut into pieces, all parsed by it.
const line = (i) => 'case "$x" in a' + i + ') for f in *.c; do cc -c "$f"; done ;; *) echo ' + i + ' ;; esac';
const script = Array.from({ length: 900 }, (_, i) => line(i)).join('\\n');
const quiet = lib.analyzeCommand(script);
const spinners = Array.from({ length: 4 }, () => new Worker('const end = Date.now() + 20000; while (Date.now() < end) {}', { eval: true }));
await new Promise((resolve) => setTimeout(resolve, 200));
const busy = lib.analyzeCommand(script + '\\necho again');
for (const worker of spinners) await worker.terminate();
console.log(JSON.stringify([script.length > 60000, quiet.tooComplex, busy.tooComplex, busy.reasons.tooComplex ?? null, busy.commands.length]));
`;

test('threads spinning beside the parser do not use up its time limit', () => {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { encoding: 'utf8', timeout: 120_000 });
  assert.is(result.status, 0, result.stderr);
  const [long, quiet, busy, reason, commands] = JSON.parse(result.stdout.trim()) as [boolean, boolean, boolean, string | null, number];
  assert.ok(long);
  assert.is(quiet, false, 'read on a quiet process');
  assert.is(busy, false, reason ?? '');
  assert.ok(commands >= 1800, String(commands));
});

test.run();
