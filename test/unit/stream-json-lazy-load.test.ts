// SPDX-License-Identifier: MIT
// Cold start: importing the package and the run paths must not load zod; the schema loader does.
import { spawnSync } from 'node:child_process';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

const INDEX = new URL('../../lib/index.js', import.meta.url).href;
const HEADLESS = new URL('../../lib/stream-json/headless.js', import.meta.url).href;
// A resolve hook that refuses zod: any import of it makes the child fail.
const HOOK = `data:text/javascript,${encodeURIComponent('export async function resolve(s, c, n) { if (s === "zod") throw new Error("ZOD_LOADED"); return n(s, c); }')}`;

function child(body: string) {
  const code = `import { register } from 'node:module'; register(${JSON.stringify(HOOK)}); ${body}`;
  // A child that could not be started at all (seen once under Wine: no status, no output) is
  // started again; what a started child did is never retried.
  const start = () => spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  let result = start();
  for (let tries = 1; result.error !== undefined && tries < 3; tries++) result = start();
  assert.is(result.error, undefined, `the child could not be started: ${String(result.error)}`);
  return result;
}

test('importing the package does not load zod', () => {
  const result = child(`await import(${JSON.stringify(INDEX)}); console.log('ok');`);
  assert.is(result.status, 0, result.stderr);
  assert.is(result.stdout.trim(), 'ok');
});

test('the structured run path (run --output-format) does not load zod', () => {
  const result = child(`const m = await import(${JSON.stringify(HEADLESS)}); console.log(typeof m.runCommandStructured);`);
  assert.is(result.status, 0, result.stderr);
  assert.is(result.stdout.trim(), 'function');
});

test('control: loadStreamJsonSchemas does load zod (so the hook really detects it)', () => {
  const result = child(`const m = await import(${JSON.stringify(INDEX)}); await m.loadStreamJsonSchemas();`);
  assert.is.not(result.status, 0);
  assert.match(result.stderr, 'ZOD_LOADED');
});

test.run();
