// SPDX-License-Identifier: MIT
// A run reads the caller's environment once, through the addon in one walk of it: process.env
// answers each variable with a walk of the whole environment, so its spread cost 7.8 ms of every
// run with 1,000 variables and 65 ms with 3,000. What the addon gives must be what process.env
// gives on the main thread, entry for entry and in order, including the entries process.env leaves
// out or decodes; a worker, whose process.env is its own copy, keeps the spread. The scrub's
// verdicts, kept by variable, still hold for more variables than they used to keep.
import { spawnSync } from 'node:child_process';

import { Worker } from 'node:worker_threads';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { callerEnvironment } from '../../lib/backend/linux/caller-env.js';
import { loadNative } from '../../lib/native/load.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

// process.platform: the addon reads the environment on Linux only.
const linuxTest = process.platform === 'linux' ? test : test.skip;

const CALLER_ENV = new URL('../../lib/backend/linux/caller-env.js', import.meta.url).href;
const LOAD = new URL('../../lib/native/load.js', import.meta.url).href;

linuxTest('the addon answers on the main thread, with what a spread of process.env gives', () => {
  const added = { ZS_T_UNICODE: 'wert €', ZS_T_EMPTY: '', ZS_T_EQUALS: 'a=b=c' };
  Object.assign(process.env, added);
  const home = process.env.HOME;
  delete process.env.HOME;
  try {
    assert.type(loadNative().environ?.(), 'string');
    const env = callerEnvironment();
    assert.equal(Object.entries(env), Object.entries({ ...process.env }));
    assert.is(env.ZS_T_EQUALS, 'a=b=c');
    assert.is(env.ZS_T_EMPTY, '');
    assert.not.ok('HOME' in env, 'a variable deleted through process.env is gone');
  } finally {
    for (const name of Object.keys(added)) delete process.env[name];
    if (home !== undefined) process.env.HOME = home;
  }
});

linuxTest('the same environment is the same frozen object; any change gives a new one', () => {
  const first = callerEnvironment();
  assert.ok(Object.isFrozen(first), 'nothing can change the kept answer');
  assert.is(callerEnvironment(), first, 'unchanged: the object kept');
  const changes: Array<[string, () => void, (env: Readonly<Record<string, string | undefined>>) => boolean]> = [
    ['a variable added', () => (process.env.ZS_T_KEPT = 'one'), (env) => env.ZS_T_KEPT === 'one'],
    ['a value changed, same length', () => (process.env.ZS_T_KEPT = 'two'), (env) => env.ZS_T_KEPT === 'two'],
    ['a variable removed', () => delete process.env.ZS_T_KEPT, (env) => !('ZS_T_KEPT' in env)],
  ];
  let before = first;
  try {
    for (const [what, change, holds] of changes) {
      change();
      const after = callerEnvironment();
      assert.is.not(after, before, what);
      assert.ok(holds(after), what);
      assert.equal(Object.entries(after), Object.entries({ ...process.env }), what);
      assert.is(callerEnvironment(), after, `${what}: then kept`);
      before = after;
    }
  } finally {
    delete process.env.ZS_T_KEPT;
  }
});

linuxTest('entries process.env leaves out or decodes are read as it reads them', () => {
  // An environment no Node API can make, set up with execve itself: a name twice, an entry
  // without "=", an empty name, a name and a value that are not UTF-8, and a __proto__ name.
  const entries = [
    'DUP=first', 'DUP=second', 'NOEQUALS', '=nameless', 'BAD\\xffNAME=1', 'BADVALUE=a\\xffb\\xe2\\x82',
    'UNI\\xc3\\x9c=wert\\xe2\\x82\\xac', 'EMPTY=', '__proto__=x', 'LAST=1',
  ];
  const child = `
Promise.all([import(${JSON.stringify(CALLER_ENV)}), import(${JSON.stringify(LOAD)})]).then(([m, l]) => {
  const env = m.callerEnvironment();
  process.stdout.write(JSON.stringify({ native: typeof l.loadNative().environ(), env: Object.entries(env), spread: Object.entries({ ...process.env }), own: Object.hasOwn(env, '__proto__') }));
});`;
  const python = `
import ctypes, sys
libc = ctypes.CDLL(None)
args = [sys.argv[1].encode(), b'-e', sys.argv[2].encode()]
envs = [${entries.map((e) => `b'${e}'`).join(', ')}]
libc.execve(args[0], (ctypes.c_char_p * 4)(*args, None), (ctypes.c_char_p * (len(envs) + 1))(*envs, None))
sys.exit('execve failed')
`;
  const r = spawnSync('python3', ['-c', python, process.execPath, child], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { native: string; env: Array<[string, string]>; spread: Array<[string, string]>; own: boolean };
  assert.is(out.native, 'string', 'the addon answered');
  assert.equal(out.env, out.spread);
  assert.equal(out.env, [['DUP', 'first'], ['BADVALUE', 'a\uFFFDb\uFFFD'], ['UNI\u00DC', 'wert\u20AC'], ['EMPTY', ''], ['__proto__', 'x'], ['LAST', '1']]);
  assert.ok(out.own, '__proto__ is an own variable, not the object\'s prototype');
});

linuxTest('a worker thread reads its own process.env, not the environment', async () => {
  const code = `
const { parentPort } = require('node:worker_threads');
process.env.ZS_T_WORKER_ONLY = '1';
Promise.all([import(${JSON.stringify(CALLER_ENV)}), import(${JSON.stringify(LOAD)})]).then(([m, l]) => {
  const env = m.callerEnvironment();
  parentPort.postMessage({ native: l.loadNative().environ(), mine: env.ZS_T_WORKER_ONLY, same: JSON.stringify(env) === JSON.stringify({ ...process.env }) });
});`;
  const reply = await new Promise<{ native: unknown; mine: unknown; same: boolean }>((resolve, reject) => {
    const worker = new Worker(code, { eval: true });
    worker.once('message', (message) => {
      resolve(message as { native: unknown; mine: unknown; same: boolean });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
  assert.is(reply.native, null, 'the addon does not answer off the main thread');
  assert.is(reply.mine, '1');
  assert.ok(reply.same);
  assert.is(process.env.ZS_T_WORKER_ONLY, undefined, "the worker's variable stayed in its copy");
});

sandboxTest('with 1,500 more variables, a secret value is scrubbed run after run and judged again when it changes', async () => {
  const t = makeTree('zs-caller-env-');
  const names = Array.from({ length: 1500 }, (_, i) => `ZS_T_VAR_${i}`);
  const secret = `ghp_${'A1b2'.repeat(9)}`;
  for (const [i, name] of names.entries()) process.env[name] = `plain-${i}`;
  try {
    const seen = async () => {
      const r = await runSandboxed(['/bin/sh', '-c', 'env'], { workspace: t.ws, prewarm: false });
      assert.is(r.exitCode, 0, r.stderr);
      return r.stdout;
    };
    process.env.ZS_T_VAR_1200 = secret;
    for (let run = 0; run < 3; run++) {
      const out = await seen();
      assert.ok(out.includes('ZS_T_VAR_1499=plain-1499\n'), 'the variables reach the command');
      assert.not.ok(out.includes('ZS_T_VAR_1200='), `run ${run}: the secret value is scrubbed`);
    }
    process.env.ZS_T_VAR_1200 = 'plain again';
    assert.ok((await seen()).includes('ZS_T_VAR_1200=plain again\n'), 'a changed value is judged again');
    process.env.ZS_T_VAR_1200 = secret;
    assert.not.ok((await seen()).includes('ZS_T_VAR_1200='), 'and again when it is a secret once more');
  } finally {
    for (const name of names) delete process.env[name];
    t.cleanup();
  }
});

test.run();

