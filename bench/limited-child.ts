// SPDX-License-Identifier: MIT
// A caller for the limited-caller rows of the burst bench (bench/scaling.ts), started under a low
// RLIMIT_NOFILE or RLIMIT_NPROC by the shell's ulimit: makes `count` runs of `sleep seconds` in one
// tick, through
// runSandboxed (`sandbox`) or child_process.spawn with its default pipes (`spawn`), and prints one
// JSON line: how many exited 0, the wall time, and each failure's code with how often it came.
import { spawn } from 'node:child_process';

import { runSandboxed } from '../lib/sandbox/run.js';

const [mode, workspace, count, seconds] = process.argv.slice(2) as [string, string, string, string];

function spawnSleep(): Promise<string> {
  return new Promise((resolve) => {
    try {
      const child = spawn('/bin/sleep', [seconds]);
      // A spawn that failed has no pipes, and says why in 'error' on the next tick.
      child.on('error', (error: Error & { code?: string }) => resolve(String(error.code)));
      child.on('close', (code) => resolve(code === 0 ? 'ok' : `exit ${String(code)}`));
      child.stdout?.resume();
      child.stderr?.resume();
    } catch (error) {
      resolve(String((error as { code?: string }).code));
    }
  });
}

async function runSleep(): Promise<string> {
  try {
    const result = await runSandboxed(['/bin/sleep', seconds], { workspace });
    return result.exitCode === 0 ? 'ok' : `exit ${String(result.exitCode)}`;
  } catch (error) {
    return String((error as { code?: string }).code);
  }
}

const start = performance.now();
const outcomes = await Promise.all(Array.from({ length: Number(count) }, () => (mode === 'spawn' ? spawnSleep() : runSleep())));
const ms = performance.now() - start;
const failures: Record<string, number> = {};
for (const outcome of outcomes) if (outcome !== 'ok') failures[outcome] = (failures[outcome] ?? 0) + 1;
process.stdout.write(`${JSON.stringify({ ok: outcomes.filter((o) => o === 'ok').length, ms, failures })}\n`);
