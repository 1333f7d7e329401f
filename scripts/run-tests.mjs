#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Runs every compiled uvu test file in its own process (a crash cannot hide other files' results),
// a few at a time, prints each file's output, and ends with the line "N passed, N failed".
// Usage: node scripts/run-tests.mjs [group-or-substring ...]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const testRoot = join(root, 'dist', 'test');
const filters = process.argv.slice(2);
// Files in these groups rebuild or repack the addon, so they run alone after everything else.
const SERIAL_GROUPS = new Set(['pack']);
// So do files that storm the process table (helpers/fork-storm): while one runs, every other
// sandbox test on the machine waits for CPU and pids, and the ones that time a run (a forged exit
// must not end a 1.5 s run early) would fail for the storm, not for what they test.
const STORMS = 'helpers/fork-storm.js';
const FILE_TIMEOUT_MS = Number(process.env.ZERO_SANDBOX_TEST_TIMEOUT_MS ?? 600_000);
// Sandboxed test runs keep their managed runtime state (caches per workspace) in a scratch cache
// dir of this run, not in the developer's ~/.cache; it is removed at the end.
const scratchCache = mkdtempSync(join(tmpdir(), 'zs-test-cache-'));

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

/** A test file's path below dist/test with '/' separators on every OS (selectors use '/'). */
function testPath(file) {
  return relative(testRoot, file).split(sep).join('/');
}

function groupOf(file) {
  return testPath(file).split('/')[0];
}

const ANSI = /\u001b\[[0-9;]*m/g;

function parseTotals(text) {
  const clean = text.replace(ANSI, '');
  const total = [...clean.matchAll(/Total:\s+(\d+)/g)].pop();
  const passed = [...clean.matchAll(/Passed:\s+(\d+)/g)].pop();
  const skipped = [...clean.matchAll(/Skipped:\s+(\d+)/g)].pop();
  if (!total || !passed) return undefined;
  return { total: Number(total[1]), passed: Number(passed[1]), skipped: skipped ? Number(skipped[1]) : 0 };
}

/**
 * Starts a test file's process. Node throws from spawn() itself for some failures (Wine's
 * CreateProcess failing under load gave `spawn UNKNOWN`, which ended the whole run without a
 * closing line): tried again twice, a second apart, then reported as that file's failure.
 */
async function spawnTest(file) {
  const options = {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', XDG_CACHE_HOME: process.env.ZERO_SANDBOX_TEST_KEEP_CACHE === '1' ? process.env.XDG_CACHE_HOME : scratchCache },
    stdio: ['ignore', 'pipe', 'pipe'],
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return spawn(process.execPath, [file], options);
    } catch (error) {
      if (attempt === 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function runFile(file) {
  const started = Date.now();
  let child;
  try {
    child = await spawnTest(file);
  } catch (error) {
    const output = `\n[run-tests] ${relative(root, file)} could not be started: ${error instanceof Error ? error.message : String(error)}; counted as one failure\n`;
    return { file, output, passed: 0, failed: 1, skipped: 0, ms: Date.now() - started };
  }
  return new Promise((resolve) => {
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[run-tests] ${relative(root, file)} timed out after ${FILE_TIMEOUT_MS} ms\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const totals = parseTotals(output);
      let passed = 0;
      let failed = 0;
      let skipped = 0;
      if (totals) {
        passed = totals.passed;
        skipped = totals.skipped;
        // uvu's Total counts the tests that ran; skipped ones are reported apart.
        failed = Math.max(0, totals.total - totals.passed);
      }
      if ((code !== 0 || signal) && failed === 0) {
        failed = 1;
        output += `\n[run-tests] ${relative(root, file)} exited with ${signal ?? code} without reporting a failed test; counted as one failure\n`;
      }
      if (!totals && code === 0) {
        failed = 1;
        output += `\n[run-tests] ${relative(root, file)} ran no test; counted as one failure\n`;
      }
      resolve({ file, output, passed, failed, skipped, ms: Date.now() - started });
    });
  });
}

async function pool(files, width) {
  const results = [];
  let next = 0;
  async function worker() {
    while (next < files.length) {
      const file = files[next++];
      const result = await runFile(file);
      process.stdout.write(`\n=== ${relative(testRoot, file)} (${result.ms} ms)\n${result.output}`);
      results.push(result);
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, files.length) }, worker));
  return results;
}

const all = collect(testRoot).filter(
  (file) => filters.length === 0 || filters.some((f) => testPath(file).includes(f)),
);
const alone = (file) => SERIAL_GROUPS.has(groupOf(file)) || readFileSync(file, 'utf8').includes(STORMS);
const parallel = all.filter((file) => !alone(file));
const serial = all.filter(alone);
const width = Math.max(2, availableParallelism());
const results = [...(await pool(parallel, width)), ...(await pool(serial, 1))];

rmSync(scratchCache, { recursive: true, force: true });
const sum = (key) => results.reduce((acc, r) => acc + r[key], 0);
const failedFiles = results.filter((r) => r.failed > 0).map((r) => relative(testRoot, r.file));
if (failedFiles.length > 0) process.stdout.write(`\nFailing files:\n  ${failedFiles.join('\n  ')}\n`);
const skipped = sum('skipped');
process.stdout.write(`\n${sum('passed')} passed, ${sum('failed')} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
process.exitCode = sum('failed') > 0 || results.length === 0 ? 1 : 0;
