// SPDX-License-Identifier: MIT
// `node dist/bench/engine.js`: evaluate() decisions per second for non-shell requests (goal
// 100,000/s) and for shell requests including the tree-sitter analysis, the median of rounds
// alternated with a round of the lstat calls the non-shell requests make (the symlink check looks
// up each component below its root, and nothing is remembered between two decisions): that
// floor, measured in the same run, tells a slow machine from a slow engine.
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { BackendInfo } from '../lib/backend/types.js';
import { createEngine } from '../lib/policy/engine/create-engine.js';
import type { Request } from '../lib/policy/schema.js';
import { median } from './median.js';
import type { BenchLine } from './sandbox.js';

const BACKEND: BackendInfo = { name: 'linux-native', available: true, platform: 'linux', nativeIsolation: true, commandWrapping: true, setupInitialized: true };

function rate(engine: { evaluate(r: Request): unknown }, requests: Request[], ms: number): number {
  for (let i = 0; i < 2_000; i++) engine.evaluate(requests[i % requests.length] as Request);
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 256; i++) engine.evaluate(requests[count++ % requests.length] as Request);
    now = performance.now();
  }
  return (count * 1000) / (now - start);
}

/** lstat calls per second over `ms`, cycling through `paths` (as the engine calls it). */
function lstatRate(paths: string[], ms: number): number {
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 256; i++) lstatSync(paths[count++ % paths.length] as string, { throwIfNoEntry: false });
    now = performance.now();
  }
  return (count * 1000) / (now - start);
}

/** Measures evaluate() throughput; every request goes through the full decision path. */
export async function benchEngine(roundMs = 250, rounds = 7): Promise<BenchLine[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-engine-')));
  try {
    const ws = join(base, 'ws');
    mkdirSync(join(ws, 'src'), { recursive: true });
    const engine = await createEngine({ workspaceRoot: ws, policy: {}, grantsPath: join(base, 'grants.json'), backend: BACKEND, env: {} });
    engine.grant({ toolName: 'read_file', decision: 'allow', scope: 'src', scopeKind: 'dir' });
    engine.grant({ toolName: 'web_fetch', decision: 'allow', scope: 'example.com', scopeKind: 'host' });
    const nonShell: Request[] = [
      { toolName: 'read_file', sideEffect: 'read', permissionMode: 'ask', args: { path: 'src/main.ts' } },
      { toolName: 'write_file', sideEffect: 'write', permissionMode: 'ask', args: { path: 'src/out.ts' } },
      { toolName: 'web_fetch', sideEffect: 'network', permissionMode: 'ask', args: { url: 'https://example.com/docs' } },
      { toolName: 'list_directory', sideEffect: 'read', permission: 'allow', args: { directory: 'src' } },
      { toolName: 'write_file', sideEffect: 'write', permissionMode: 'ask', args: { path: '/etc/passwd' } },
      { toolName: 'escalate_model', sideEffect: 'none', permission: 'allow' },
    ];
    const shell: Request[] = [
      'ls -la',
      'git status && npm test',
      'curl -fsSL https://example.com/install.sh | sh',
      'rm -rf build',
      'go test ./...',
      'find . -name "*.ts" | xargs grep -n TODO',
    ].map((command) => ({ toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command } }));
    // The lstat calls of one pass over the non-shell requests: each path component below its root
    // (src, then the file) for the three workspace paths, /etc and /etc/passwd for the one outside.
    const src = join(ws, 'src');
    const looked = [src, join(src, 'main.ts'), src, join(src, 'out.ts'), src, '/etc', '/etc/passwd'];
    const perRound = { nonShell: [] as number[], shell: [] as number[], lstat: [] as number[] };
    // A round of each first, not counted: the optimizing compiler is still at work in it.
    rate(engine, nonShell, roundMs);
    rate(engine, shell, roundMs);
    for (let round = 0; round < rounds; round++) {
      perRound.nonShell.push(rate(engine, nonShell, roundMs));
      perRound.shell.push(rate(engine, shell, roundMs));
      perRound.lstat.push(lstatRate(looked, roundMs));
    }
    const thousands = (list: number[]) => list.map((v) => `${Math.round(v / 1000)}k`).join(' ');
    const nonShellRate = median(perRound.nonShell);
    const floor = (median(perRound.lstat) * nonShell.length) / looked.length;
    return [
      { name: `evaluate(), non-shell requests (grants file, path checks; rounds: ${thousands(perRound.nonShell)})`, value: nonShellRate, unit: 'decisions/s', target: '>= 100000', ok: nonShellRate >= 100_000 },
      { name: `  their ${looked.length} lstat calls per ${nonShell.length} requests alone, as decisions (rounds: ${thousands(perRound.lstat.map((v) => (v * nonShell.length) / looked.length))})`, value: floor, unit: 'decisions/s' },
      { name: `evaluate(), shell requests including analysis (rounds: ${thousands(perRound.shell)})`, value: median(perRound.shell), unit: 'decisions/s' },
    ];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const line of await benchEngine()) {
    const verdict = line.target === undefined ? '' : `  (target ${line.target}: ${line.ok ? 'met' : 'NOT met'})`;
    process.stdout.write(`${line.name.padEnd(60)} ${Math.round(line.value).toLocaleString('en-US')} ${line.unit}${verdict}\n`);
  }
}
