// SPDX-License-Identifier: MIT
// Cold-start contract: the package entry and analyzeArgv do not load tree-sitter until a launcher payload needs parsing.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO_ROOT } from '../helpers/cli.js';

const SCRIPT = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(`${REPO_ROOT}/package.json`)});
const loaded = () => Object.keys(require.cache).some((key) => key.includes('tree-sitter'));
const lib = await import(${JSON.stringify(`${REPO_ROOT}/dist/lib/index.js`)});
const steps = [loaded()];
lib.analyzeArgv(['/bin/true']);
lib.analyzeArgv(['sudo', '-u', 'x', 'curl', 'https://x.test']);
steps.push(loaded());
const nested = lib.analyzeArgv(['bash', '-lc', 'curl https://x.test']);
steps.push(loaded(), nested.network);
console.log(JSON.stringify(steps));
`;

test('importing the package and analyzing a plain argv leave tree-sitter unloaded', () => {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  assert.is(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout.trim()), [false, false, true, true]);
});

test.run();
