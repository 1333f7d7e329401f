// SPDX-License-Identifier: MIT
// `node dist/bench/prepare.js`: the JavaScript work runSandboxed does on Linux before the native
// launch (plan, runtime state, env scrub, spec, protected-path note, prewarm key), per call.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildLinuxSpec, hostViewOf } from '../lib/backend/linux/spec.js';
import { nativeBindingPath } from '../lib/native/load.js';
import { buildPrewarmKey } from '../lib/sandbox/prewarm.js';
import { assertEnforceable, prepareLinux } from '../lib/backend/linux/start.js';
import { guardProtectedPaths } from '../lib/sandbox/protected.js';
import type { BenchLine } from './sandbox.js';
import { median } from './median.js';

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

/** One pass over the preparation path, as SandboxedProcess runs it; returns the time of each part. */
function prepareOnce(workspace: string, bindingPath: string): { prepare: number; spec: number; protected: number; key: number; total: number } {
  const t0 = performance.now();
  const prepared = prepareLinux(['/bin/true'], { workspace });
  const plan = prepared.plan;
  const t1 = performance.now();
  // As SandboxedProcess does: the spec and the protected-path note share the plan's facts.
  const context = assertEnforceable(plan);
  const facts = prepared.takeFacts();
  const t2a = performance.now();
  const guarded = guardProtectedPaths(plan);
  const t2b = performance.now();
  guarded.release(); // no sandbox starts here
  const spec = buildLinuxSpec(guarded.plan, ['pipe', 'pipe', 'pipe'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath }, hostViewOf(facts));
  const t2 = performance.now() - (t2b - t2a);
  const t3 = t2 + (t2b - t2a);
  const key = buildPrewarmKey(spec);
  const t4 = performance.now();
  prepared.release();
  if (key.length === 0 || guarded.guard.git.gitDirs.size === 0) throw new Error('the preparation produced nothing');
  return { prepare: t1 - t0, spec: t2 - t1, protected: t3 - t2, key: t4 - t3, total: t4 - t0 };
}

/**
 * Median per-call time of the Linux preparation path, and of its parts: `runs` calls back to back
 * after a warm-up, then `between` calls each made after a real `runSandboxed` (as in an agent's
 * burst, where the launch in between leaves caches and the JIT colder). Each call observes the
 * filesystem afresh, as a real run does.
 */
export async function benchPrepare(runs = 2000, between = 300): Promise<BenchLine[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-prepare-')));
  // The managed runtime state goes to a scratch cache dir, not the user's.
  const savedCache = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = join(base, 'cache');
  try {
    const workspace = buildBenchWorkspace(base);
    const bindingPath = nativeBindingPath() ?? '';
    const samples: Array<ReturnType<typeof prepareOnce>> = [];
    for (let i = 0; i < runs + 200; i++) {
      const sample = prepareOnce(workspace, bindingPath);
      if (i >= 200) samples.push(sample); // after the warm-up
    }
    const of = (list: typeof samples, part: keyof ReturnType<typeof prepareOnce>) => median(list.map((sample) => sample[part]));
    const lines: BenchLine[] = runs <= 0 ? [] : [
      { name: 'prepare + spec per call (median, back to back)', value: of(samples, 'total'), unit: 'ms' },
      { name: '  prepareSandbox', value: of(samples, 'prepare'), unit: 'ms' },
      { name: '  assertEnforceable + buildLinuxSpec', value: of(samples, 'spec'), unit: 'ms' },
      { name: '  guardProtectedPaths', value: of(samples, 'protected'), unit: 'ms' },
      { name: '  buildPrewarmKey', value: of(samples, 'key'), unit: 'ms' },
    ];
    if (between > 0) {
      const { runSandboxed } = await import('../lib/sandbox/run.js');
      const interleaved: typeof samples = [];
      for (let i = 0; i < between + 20; i++) {
        const result = await runSandboxed(['/bin/true'], { workspace });
        if (result.exitCode !== 0) throw new Error(`runSandboxed(['/bin/true']) exited ${String(result.exitCode)}`);
        const sample = prepareOnce(workspace, bindingPath);
        if (i >= 20) interleaved.push(sample);
      }
      lines.push({ name: 'prepare + spec per call (median, between real runs)', value: of(interleaved, 'total'), unit: 'ms' });
      lines.push({ name: '  prepareSandbox', value: of(interleaved, 'prepare'), unit: 'ms' });
      lines.push({ name: '  spec + protected paths + prewarm key', value: median(interleaved.map((s) => s.spec + s.protected + s.key)), unit: 'ms' });
    }
    return lines;
  } finally {
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 2000);
  const between = Number(process.argv[3] ?? 300);
  if (process.platform !== 'linux') process.stdout.write('skipped (the Linux preparation path only)\n');
  else for (const line of await benchPrepare(runs, between)) {
    process.stdout.write(`${line.name.padEnd(60)} ${line.value.toFixed(3)} ${line.unit}\n`);
  }
}
