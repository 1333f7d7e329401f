// SPDX-License-Identifier: MIT
// `npm run bench`: every benchmark of the package, each printed as ratios against baselines
// measured in the same run. Benchmarks never fail the test suite; they report.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../test/helpers/cli.js';
import { benchCallerEnv } from './caller-env.js';
import { benchCommandLength } from './command-length.js';
import { benchSandbox, type BenchLine } from './sandbox.js';
import { benchPoliciesInTurn } from './policies-in-turn.js';
import { benchPolicyPairs } from './policy-pairs.js';
import { benchPrune } from './prune.js';
import { benchBurstsAlone, benchScaling } from './scaling.js';

function printLine(line: BenchLine): void {
  const value = Number.isNaN(line.value) ? '' : line.value < 10 ? line.value.toFixed(3) : line.value.toFixed(1);
  const verdict = line.target === undefined ? '' : `  (target ${line.target}: ${line.ok ? 'met' : 'NOT met'})`;
  process.stdout.write(`  ${line.name.padEnd(64)} ${value} ${line.unit}${verdict}\n`);
}

function print(title: string, lines: BenchLine[]): void {
  process.stdout.write(`\n${title}\n`);
  for (const line of lines) printLine(line);
}

const only = process.argv.slice(2);
const want = (name: string) => only.length === 0 || only.includes(name);

if (want('sandbox') && process.platform === 'linux') {
  print('Sandbox (Linux native)', await benchSandbox(join(REPO_ROOT, 'dist', 'cli', 'main.js')));
}

if (want('scaling') && process.platform === 'linux') {
  // Printed line by line: under load the whole bench takes many minutes.
  process.stdout.write('\nScaling with policy size and load (Linux native; each against its baseline in this run)\n');
  await benchScaling(undefined, undefined, printLine);
}

if ((want('scaling') || only.includes('turn')) && process.platform === 'linux') {
  process.stdout.write('\nPolicies in turn (Linux native; against the same policies back to back in this run)\n');
  await benchPoliciesInTurn(printLine);
}

if ((want('scaling') || only.includes('env')) && process.platform === 'linux') {
  process.stdout.write("\nThe caller's environment (Linux native; against child_process.spawn from the same environment in this run)\n");
  await benchCallerEnv(printLine);
}

if ((want('scaling') || only.includes('command')) && process.platform === 'linux') {
  process.stdout.write('\nThe command\'s length (Linux native; against child_process.spawn of the same argv in this run)\n');
  await benchCommandLength(printLine);
}

// Only the burst rows of the scaling bench (not part of a plain run: scaling has them).
if (only.includes('bursts') && process.platform === 'linux') {
  process.stdout.write('\nBursts (Linux native; against the same burst of child_process.spawn in this run)\n');
  await benchBurstsAlone(undefined, printLine);
}

// Only the policy rows, with many pairs after each policy's first runs (not part of a plain run).
if (only.includes('policy') && process.platform === 'linux') {
  process.stdout.write('\nPolicy size, known policies (Linux native; against a plain run alternated with it)\n');
  await benchPolicyPairs(undefined, printLine);
}

// What pruning a workspace's aged-out caches does to the caller's event loop (not part of a plain run).
if (only.includes('prune') && process.platform === 'linux') {
  process.stdout.write('\nPruning managed caches (Linux native; against pruning an empty cache in this run)\n');
  await benchPrune(printLine);
}

// Standalone benchmarks run in their own process, so each measures one core from a cold start.
for (const name of ['analyzer', 'parser-load', 'engine', 'prepare', 'git-guard']) {
  if (!want(name)) continue;
  const script = join(REPO_ROOT, 'dist', 'bench', `${name}.js`);
  if (!existsSync(script)) continue;
  process.stdout.write(`\n${name[0]!.toUpperCase()}${name.slice(1).replace('-', ' ')}\n`);
  const out = spawnSync(process.execPath, [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(out.stdout.replace(/^/gm, '  '));
}
