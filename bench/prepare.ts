// SPDX-License-Identifier: MIT
// `node dist/bench/prepare.js`: the JavaScript work runSandboxed does on Linux before the native
// launch (plan, runtime state, env scrub, spec, protected-path note, prewarm key), per call.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildLinuxSpec } from '../lib/backend/linux/spec.js';
import { nativeBindingPath } from '../lib/native/load.js';
import { buildPrewarmKey } from '../lib/sandbox/prewarm.js';
import { assertEnforceable, prepareSandbox } from '../lib/sandbox/process.js';
import { missingProtectedPaths } from '../lib/sandbox/protected.js';
import { releaseRuntimeState } from '../lib/sandbox/runtime-state.js';
import type { BenchLine } from './sandbox.js';

/**
 * A workspace shaped like a real checkout: a repository with hooks and config, a dozen top-level
 * entries (sources, node_modules, dotfiles), and one nested repository (a vendored checkout).
 */
export function buildBenchWorkspace(base: string): string {
  const ws = join(base, 'workspace');
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[core]\n');
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  for (const dir of ['src', 'test', 'docs', 'scripts', 'bench', 'native', '.github', 'node_modules/zod', 'dist']) {
    mkdirSync(join(ws, dir), { recursive: true });
  }
  mkdirSync(join(ws, 'vendor', '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, 'vendor', '.git', 'config'), '[core]\n');
  for (const file of ['package.json', 'package-lock.json', 'README.md', 'tsconfig.json', '.gitignore', 'LICENSE']) {
    writeFileSync(join(ws, file), '\n');
  }
  return ws;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * Median per-call time of the Linux preparation path, and of its parts, over `runs` calls after a
 * warm-up. Each call observes the filesystem afresh, as a real run does.
 */
export function benchPrepare(runs = 2000): BenchLine[] {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-prepare-')));
  // The managed runtime state goes to a scratch cache dir, not the user's.
  const savedCache = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = join(base, 'cache');
  try {
    const workspace = buildBenchWorkspace(base);
    const bindingPath = nativeBindingPath() ?? '';
    const parts = { prepare: [] as number[], spec: [] as number[], protected: [] as number[], key: [] as number[], total: [] as number[] };
    let keyLength = 0;
    for (let i = 0; i < runs + 200; i++) {
      const t0 = performance.now();
      const plan = prepareSandbox(['/bin/true'], { workspace });
      const t1 = performance.now();
      const context = assertEnforceable(plan);
      const spec = buildLinuxSpec(plan, ['pipe', 'pipe', 'pipe'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath });
      const t2 = performance.now();
      const watched = missingProtectedPaths(plan.writeRoots);
      const t3 = performance.now();
      const key = buildPrewarmKey(spec);
      const t4 = performance.now();
      releaseRuntimeState(plan);
      keyLength += key.length + watched.length;
      if (i < 200) continue; // warm-up
      parts.prepare.push(t1 - t0);
      parts.spec.push(t2 - t1);
      parts.protected.push(t3 - t2);
      parts.key.push(t4 - t3);
      parts.total.push(t4 - t0);
    }
    if (keyLength === 0) throw new Error('the preparation produced nothing');
    return [
      { name: 'prepare + spec per call (median)', value: median(parts.total), unit: 'ms' },
      { name: '  prepareSandbox', value: median(parts.prepare), unit: 'ms' },
      { name: '  assertEnforceable + buildLinuxSpec', value: median(parts.spec), unit: 'ms' },
      { name: '  missingProtectedPaths', value: median(parts.protected), unit: 'ms' },
      { name: '  buildPrewarmKey', value: median(parts.key), unit: 'ms' },
    ];
  } finally {
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 2000);
  if (process.platform !== 'linux') process.stdout.write('skipped (the Linux preparation path only)\n');
  else for (const line of benchPrepare(runs)) {
    process.stdout.write(`${line.name.padEnd(60)} ${line.value.toFixed(3)} ${line.unit}\n`);
  }
}
