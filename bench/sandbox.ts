// SPDX-License-Identifier: MIT
// Sandbox overhead, measured against baselines in the same run: runSandboxed(['/bin/true']) vs
// child_process.spawn('/bin/true') and vs bubblewrap with equivalent namespaces; 64 concurrent
// runs (no leaked descriptors or zombies); CLI cold start vs `node -e 0`. Prints ratios.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runSandboxed } from '../lib/sandbox/run.js';
import { prewarmPool } from '../lib/sandbox/prewarm.js';
import { loadNative } from '../lib/native/load.js';
import { median } from './median.js';
import { openDescriptors, zombieChildren } from '../test/helpers/fds.js';

export interface BenchLine {
  name: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

/** `cmd args` from `cwd` with stdio ignored, done on 'close'; rejects unless it exits 0. */
export function spawnOnce(cmd: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore', ...(cwd === undefined ? {} : { cwd }), ...(env === undefined ? {} : { env }) });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/**
 * The baseline, `child_process.spawn('/bin/true')` as written: default stdio (pipes), with
 * stdout and stderr read to the end as runSandboxed does, done on 'close'.
 */
function spawnDefault(cmd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd);
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/**
 * Medians of two workloads measured in alternating blocks of `perBlock` back-to-back calls, so
 * that both see the same machine (a shared VM drifts within seconds) while each stays back to back.
 */
async function timeAlternating(blocks: number, perBlock: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  const samples: [number[], number[]] = [[], []];
  for (let block = 0; block < blocks; block++) {
    for (const [side, fn] of [a, b].entries()) {
      for (let i = 0; i < perBlock; i++) {
        const start = performance.now();
        await fn();
        samples[side]!.push(performance.now() - start);
      }
    }
  }
  return [median(samples[0]), median(samples[1])];
}

/** Median over `runs` calls; with `selfTimed`, each call returns its own duration (to exclude a gap). */
async function timeEach(runs: number, fn: () => Promise<unknown>, selfTimed = false): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const value = await fn();
    samples.push(selfTimed ? (value as number) : performance.now() - start);
  }
  return median(samples);
}

function which(name: string): string | undefined {
  const out = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

function fdTargets(): string[] {
  return [...openDescriptors().values()];
}

/** Open descriptors, without the namespace holders the addon keeps for reuse (a bounded cache). */
function openFds(): number {
  return fdTargets().filter((target) => !/^(net|user):\[/.test(target)).length;
}

/**
 * Descriptors of the mount templates kept for reuse (a bounded cache: mount_templates.cc keeps at
 * most 16 templates, 4 of a policy). A burst builds some when the host's mounts changed since the
 * last run (a template is dropped then), so they are counted apart from leaks.
 */
function templateFds(): number {
  return loadNative().mountTemplateCounts?.().fds ?? 0;
}

/** Network namespaces kept for the next sandboxes (net_holders.h caps them at 8). */
function cachedNetns(): number {
  return fdTargets().filter((target) => target.startsWith('net:[')).length;
}


/** Calls per block when the spawn baseline and runSandboxed are measured alternately. */
const BLOCK = 40;

export async function benchSandbox(cliPath: string, runs = 60): Promise<BenchLine[]> {
  // A fresh directory: the repository itself is zero-sandbox's own package, never a workspace.
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-sandbox-')));
  try {
    return await benchIn(workspace, cliPath, runs);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function benchIn(workspace: string, cliPath: string, runs: number): Promise<BenchLine[]> {
  const lines: BenchLine[] = [];
  // Warm up both paths (addon load, probe, page cache).
  for (let i = 0; i < 5; i++) {
    await spawnDefault('/bin/true');
    await spawnOnce('/bin/true', []);
    await runSandboxed(['/bin/true'], { workspace });
  }
  const plainIgnored = await timeEach(runs, () => spawnOnce('/bin/true', []));
  let prewarmed = 0;
  // 2 x runs samples per side, in alternating blocks of 40 back-to-back calls (the first few of a
  // block find the prewarm pool full; in blocks of 40 they cannot move the median).
  const blocks = Math.max(1, Math.round((2 * runs) / BLOCK));
  const [plain, sandboxed] = await timeAlternating(blocks, BLOCK, () => spawnDefault('/bin/true'), async () => {
    const result = await runSandboxed(['/bin/true'], { workspace });
    if (result.prewarmed) prewarmed++;
  });
  lines.push({ name: "child_process.spawn('/bin/true') median (default stdio, output read; blocks of 40 alternating with the next line)", value: plain, unit: 'ms' });
  lines.push({ name: "child_process.spawn('/bin/true', {stdio: 'ignore'}) median (for reference)", value: plainIgnored, unit: 'ms' });
  lines.push({ name: 'runSandboxed([/bin/true]) median, back to back', value: sandboxed, unit: 'ms' });
  lines.push({ name: 'runs served by a prewarmed sandbox', value: prewarmed, unit: `of ${blocks * BLOCK}` });
  lines.push({ name: 'ratio runSandboxed / spawn, back to back', value: sandboxed / plain, unit: 'x', target: '<= 1.0', ok: sandboxed / plain <= 1.0 });

  const bwrap = which('bwrap');
  if (bwrap !== undefined) {
    const args = ['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', workspace, workspace, '/bin/true'];
    const viaBwrap = await timeEach(runs, () => spawnOnce(bwrap, args));
    lines.push({ name: 'bwrap (user,pid,net,ipc,uts ns; ro /; proc; dev; tmpfs) median', value: viaBwrap, unit: 'ms' });
    lines.push({ name: 'speedup bwrap / sandboxed', value: viaBwrap / sandboxed, unit: 'x', target: '>= 2.5', ok: viaBwrap / sandboxed >= 2.5 });
  } else {
    lines.push({ name: 'bwrap baseline', value: Number.NaN, unit: 'skipped (bwrap not installed)' });
  }

  const coldOnly = await timeEach(runs, () => runSandboxed(['/bin/true'], { workspace, prewarm: false }));
  lines.push({ name: 'runSandboxed([/bin/true]) median, prewarm off', value: coldOnly, unit: 'ms' });
  // An agent's burst: commands with short gaps, where the next sandbox can be prewarmed in time.
  const gapped = async (prewarm: boolean) =>
    timeEach(runs, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = performance.now();
      await runSandboxed(['/bin/true'], { workspace, prewarm });
      return performance.now() - started;
    }, true);
  const burstCold = await gapped(false);
  const burstWarm = await gapped(true);
  lines.push({ name: 'burst with 20 ms gaps, prewarm off, median', value: burstCold, unit: 'ms' });
  lines.push({ name: 'burst with 20 ms gaps, prewarm on, median', value: burstWarm, unit: 'ms' });
  lines.push({ name: 'burst speedup from prewarm', value: burstCold / burstWarm, unit: 'x' });
  prewarmPool.clear();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const fdsBefore = openFds();
  const templatesBefore = templateFds();
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: 64 }, () => runSandboxed(['/bin/sh', '-c', 'echo ok'], { workspace })));
  const concurrentMs = performance.now() - started;
  prewarmPool.clear();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const succeeded = results.filter((r) => r.exitCode === 0 && r.stdout === 'ok\n').length;
  lines.push({ name: '64 concurrent runSandboxed: succeeded', value: succeeded, unit: 'of 64', target: '64', ok: succeeded === 64 });
  lines.push({ name: '64 concurrent runSandboxed: wall time', value: concurrentMs, unit: 'ms' });
  const kept = templateFds() - templatesBefore;
  const leaked = openFds() - fdsBefore - kept;
  lines.push({ name: '64 concurrent runSandboxed: descriptors of mount templates built for reuse', value: kept, unit: 'fds' });
  lines.push({ name: '64 concurrent runSandboxed: leaked descriptors', value: leaked, unit: 'fds', target: '0', ok: leaked <= 0 });
  const holders = cachedNetns();
  lines.push({ name: '64 concurrent runSandboxed: network namespaces kept for reuse', value: holders, unit: 'namespaces', target: '<= 8', ok: holders <= 8 });
  const zombies = zombieChildren().length;
  lines.push({ name: '64 concurrent runSandboxed: zombie children', value: zombies, unit: 'processes', target: '0', ok: zombies === 0 });

  // Node's own start reads some variables before any script runs: NODE_EXTRA_CA_CERTS makes it
  // load and parse the whole file of certificates (tens of milliseconds on a VM), which inflates
  // `node -e 0` and the CLI alike and flatters their ratio. With such a variable set the pair is
  // measured again without it, each with its own verdict.
  const startSlowing = ['NODE_EXTRA_CA_CERTS'].filter((name) => process.env[name] !== undefined);
  const environments: Array<{ label: string; env: NodeJS.ProcessEnv }> = [{ label: '', env: process.env }];
  if (startSlowing.length > 0) {
    const env = { ...process.env };
    for (const name of startSlowing) delete env[name];
    environments.push({ label: ` (${startSlowing.join(', ')} unset)`, env });
  }
  for (const { label, env } of environments) {
    // Alternated run by run: both see the same machine.
    const [nodeBare, cold] = await timeAlternating(Math.min(runs, 30), 1, () => spawnOnce(process.execPath, ['-e', '0'], undefined, env), () =>
      spawnOnce(process.execPath, [cliPath, 'run', '--', '/bin/true'], workspace, env),
    );
    lines.push({ name: `node -e 0 median${label}`, value: nodeBare, unit: 'ms' });
    lines.push({ name: `zero-sandbox run -- /bin/true median (cold start)${label}`, value: cold, unit: 'ms' });
    lines.push({ name: `ratio CLI cold start / node -e 0${label}`, value: cold / nodeBare, unit: 'x', target: '<= 1.6', ok: cold / nodeBare <= 1.6 });
  }
  return lines;
}
