// SPDX-License-Identifier: MIT
// `node dist/bench/engine.js`: evaluate() decisions per second for non-shell requests (goal
// 100,000/s) and for shell requests including the tree-sitter analysis.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { BackendInfo } from '../lib/backend/types.js';
import { createEngine } from '../lib/policy/engine/create-engine.js';
import type { Request } from '../lib/policy/schema.js';
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

/** Measures evaluate() throughput; every request goes through the full decision path. */
export async function benchEngine(durationMs = 1_500): Promise<BenchLine[]> {
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
    const nonShellRate = rate(engine, nonShell, durationMs);
    const shellRate = rate(engine, shell, durationMs);
    return [
      { name: 'evaluate(), non-shell requests (grants file, path checks)', value: nonShellRate, unit: 'decisions/s', target: '>= 100000', ok: nonShellRate >= 100_000 },
      { name: 'evaluate(), shell requests including analysis', value: shellRate, unit: 'decisions/s' },
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
