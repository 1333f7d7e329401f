// SPDX-License-Identifier: MIT
// `node dist/bench/git-guard.js`: the per-run cost of the git protections on a workspace with
// 100k files (a node_modules tree, git-ignored) and a repository with a submodule: the look
// before the run (guardProtectedPaths: what to make read-only, what to note, the agent and editor
// configs included, the notes published for runs started meanwhile, here and in other processes)
// plus the check after it (checkProtectedPaths, then the notes withdrawn), as the Linux backend
// runs them. Target: under 5 ms per run. The look includes a scan of the whole workspace for
// repositories (once the addon remembers the listings: no stat for a directory whose watch
// reported no change, else one; the workspace is left to age past the clock's coarse tick first).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checkProtectedPaths, guardProtectedPaths } from '../lib/sandbox/protected.js';
import { scanRepositories, toBytes } from '../lib/sandbox/beneath.js';
import { MAX_GIT_DIRS, MAX_SCANNED_DIRS } from '../lib/sandbox/git-guard.js';
import { buildWritableRoot } from '../lib/sandbox/plan.js';
import type { SandboxPlan } from '../lib/backend/types.js';
import type { BenchLine } from './sandbox.js';
import { median } from './median.js';

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=b', '-c', 'protocol.file.allow=always', ...args], { cwd, stdio: 'ignore' });
}

/** A checkout with 200 tracked files, a submodule, and 100k ignored files under node_modules. */
function buildWorkspace(base: string): string {
  const up = join(base, 'up');
  execFileSync('mkdir', ['-p', up]);
  git(up, 'init', '-q');
  git(up, 'commit', '-q', '--allow-empty', '-m', 'up');
  const ws = join(base, 'ws');
  execFileSync('python3', ['-c', `
import os, sys
ws = sys.argv[1]
os.makedirs(os.path.join(ws, 'src'))
for i in range(200): open(os.path.join(ws, 'src', 'f%d.ts' % i), 'w').write('x')
for p in range(1000):
    d = os.path.join(ws, 'node_modules', 'pkg%d' % p, 'lib'); os.makedirs(d)
    for f in range(100): open(os.path.join(d, 'f%d.js' % f), 'w').close()
open(os.path.join(ws, '.gitignore'), 'w').write('node_modules\\n')
`, ws]);
  git(ws, 'init', '-q');
  git(ws, 'add', '-A');
  git(ws, 'submodule', 'add', '-q', up, 'vendor/up');
  git(ws, 'commit', '-qm', 'ws');
  writeFileSync(join(ws, '.git', 'info', 'exclude'), '');
  return ws;
}

export function benchGitGuard(runs = 500): BenchLine[] {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-git-')));
  try {
    const ws = buildWorkspace(base);
    execFileSync('sleep', ['2.5']);
    const plan = { writeRoots: [buildWritableRoot(ws)] } as unknown as SandboxPlan;
    const before: number[] = [];
    const after: number[] = [];
    const scans: number[] = [];
    const cpu: number[] = [];
    let mounts = 0;
    for (let i = 0; i < runs + 50; i++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const guarded = guardProtectedPaths(plan);
      const t1 = performance.now();
      const violations = checkProtectedPaths(guarded.guard);
      guarded.release();
      const t2 = performance.now();
      const c1 = process.cpuUsage(c0);
      const t3 = performance.now();
      scanRepositories(toBytes(ws), MAX_SCANNED_DIRS, MAX_GIT_DIRS);
      const t4 = performance.now();
      if (violations.length > 0) throw new Error(`unexpected violations: ${JSON.stringify(violations)}`);
      mounts = guarded.plan.writeRoots[0]!.readOnlySubpaths.length;
      if (i >= 50) {
        before.push(t1 - t0);
        after.push(t2 - t1);
        scans.push(t4 - t3);
        cpu.push((c1.user + c1.system) / 1000);
      }
    }
    const total = before.map((b, i) => b + (after[i] as number));
    return [
      { name: 'git protections per run, 100k-file workspace (median)', value: median(total), unit: 'ms', target: '< 5 ms', ok: median(total) < 5 },
      { name: '  before the run (guardProtectedPaths)', value: median(before), unit: 'ms' },
      { name: '  after the run (checkProtectedPaths)', value: median(after), unit: 'ms' },
      { name: '  of which the repository scan of the workspace', value: median(scans), unit: 'ms' },
      { name: '  CPU time per run (less sensitive to a loaded machine)', value: median(cpu), unit: 'ms' },
      { name: '  read-only paths in the plan (repository, submodule, agent configs)', value: mounts, unit: 'paths' },
    ];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const line of benchGitGuard(Number(process.argv[2] ?? 500))) {
    const verdict = line.target === undefined ? '' : `  (target ${line.target}: ${line.ok ? 'met' : 'NOT met'})`;
    process.stdout.write(`${line.name.padEnd(60)} ${line.value.toFixed(3)} ${line.unit}${verdict}\n`);
  }
}
