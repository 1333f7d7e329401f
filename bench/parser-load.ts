// SPDX-License-Identifier: MIT
// Benchmark of what loading the shell parser costs a process: CPU time (all threads) and wall time
// of a fresh process that loads the parser and analyzes one compound command, with V8's default
// WebAssembly tiering (its optimizing compiler recompiles the grammar's hot functions in the
// background, and the process cannot exit before that is done) and with preferBaselineWebAssembly()
// (what the CLI does). Baseline: a fresh `node -e 0` in the same run.
// Run: npm run compile && node dist/bench/parser-load.js [runs]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { REPO_ROOT } from '../test/helpers/cli.js';
import { median } from './median.js';

const RUNS = Number(process.argv[2] ?? 5);
const ENTRY = JSON.stringify(join(REPO_ROOT, 'dist', 'lib', 'index.js'));
const COMMAND = JSON.stringify('for f in src/*.c; do cc -c "$f" -o "${f%.c}.o" 2>&1 | tee -a log; done');

/** Prints the process's CPU time in ms (every thread) as it exits: its only output. */
const PRINT_CPU_AT_EXIT = "process.on('exit', () => { const u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1000)); });";

function program(baseline: boolean): string {
  return `const lib = await import(${ENTRY});
${baseline ? 'lib.preferBaselineWebAssembly();' : ''}
await lib.loadShellParser();
if (lib.analyzeCommand(${COMMAND}).tooComplex) process.exitCode = 3;
${PRINT_CPU_AT_EXIT}`;
}

/** Median CPU ms (all threads, read at exit) and median wall ms of a fresh process. */
function measure(args: string[]): { cpu: number; wall: number } {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
    wall.push(performance.now() - start);
    if (result.status !== 0) throw new Error(`bench process failed (${result.status}): ${result.stderr}`);
    cpu.push(Number(result.stdout));
  }
  return { cpu: median(cpu), wall: median(wall) };
}

const empty = measure(['-e', PRINT_CPU_AT_EXIT]);
const tiered = measure(['--input-type=module', '-e', program(false)]);
const baseline = measure(['--input-type=module', '-e', program(true)]);
const row = (name: string, value: number, unit: string) => process.stdout.write(`${name.padEnd(64)} ${value.toFixed(value < 10 ? 2 : 0)} ${unit}\n`);
row('node -e 0: CPU / wall (baseline)', empty.cpu, `ms / ${empty.wall.toFixed(0)} ms`);
row('load + one compound command, V8 default tiering: CPU / wall', tiered.cpu, `ms / ${tiered.wall.toFixed(0)} ms`);
row('load + one compound command, baseline WebAssembly (CLI): CPU / wall', baseline.cpu, `ms / ${baseline.wall.toFixed(0)} ms`);
row('CPU above node -e 0, default / baseline', (tiered.cpu - empty.cpu) / Math.max(1, baseline.cpu - empty.cpu), 'x');
