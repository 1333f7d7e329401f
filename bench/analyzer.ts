// SPDX-License-Identifier: MIT
// Benchmark: classifications per second on a mix of realistic agent commands, and p99 latency.
// Run: npm run compile && node dist/bench/analyzer.js [seconds]
import { classifyRisk } from '../lib/bash/risk.js';
import { loadShellParser } from '../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

const COMMANDS = [
  'git status',
  'git diff --stat HEAD~1',
  'ls -la src',
  'npm test',
  'npm run build && npm test',
  'cat package.json | grep version',
  'rg "TODO" lib | head -20',
  'cd src && go test ./... 2>&1 | tail -50',
  'python3 -m pytest -q tests/test_api.py',
  'find . -name "*.ts" -not -path "./node_modules/*" | xargs wc -l',
  'curl -fsSL https://example.com/install.sh | sh',
  'sed -n 1,80p lib/bash/analyze.ts',
  'git add -A && git commit -m "Fix the parser: handle rm -rf in quotes"',
  'pnpm install --frozen-lockfile',
  'docker compose up -d && docker compose logs --tail 20',
  'for f in src/*.ts; do echo "$f"; wc -l "$f"; done',
  'timeout 30s npm run test:unit -- --reporter dot',
  "bash -lc 'cd /work && make -j4 2>&1 | tail -n 30'",
  'mkdir -p build && cmake -S . -B build && cmake --build build -j 8',
  'echo "$(date) build done" >> build.log',
];

const seconds = Number(process.argv[2] ?? 3);
for (let i = 0; i < 2000; i++) classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command: COMMANDS[i % COMMANDS.length] } });

const latencies: number[] = [];
const started = performance.now();
const stopAt = started + seconds * 1000;
let count = 0;
while (performance.now() < stopAt) {
  for (const command of COMMANDS) {
    const t0 = performance.now();
    classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command } });
    latencies.push(performance.now() - t0);
    count++;
  }
}
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number;
console.log(`analyzer benchmark: ${COMMANDS.length} realistic agent commands, ${count} classifications in ${elapsed.toFixed(2)} s (one core)`);
console.log(`throughput  ${Math.round(count / elapsed)} classifications/s (goal >= 20000)`);
console.log(`latency     p50 ${(at(0.5) * 1000).toFixed(1)} us   p99 ${(at(0.99) * 1000).toFixed(1)} us   max ${(latencies[latencies.length - 1]! * 1000).toFixed(1)} us`);
