// SPDX-License-Identifier: MIT
// Benchmark of the shell analyzer: classifications per second on a mix of realistic agent commands,
// latency of compound commands (up to 5 segments), and time against script length, each measured
// with the fast parser (the shipped path) and with tree-sitter alone (the WebAssembly parser for
// every command: the baseline the fast path is compared with in the same run).
// Run: npm run compile && node dist/bench/analyzer.js [seconds]
import { classifyRisk } from '../lib/bash/risk.js';
import { forgetRecentTrees, loadShellParser, setFastPath } from '../lib/bash/parse.js';

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

/** Compound commands of 2 to 5 segments. */
const COMPOUND = [
  'cat a | grep b | sort -u >> out && true',
  'npm run build && npm test',
  'cd src && go test ./... 2>&1 | tail -50',
  'git add -A && git commit -m "msg" && git push origin HEAD',
  'mkdir -p build && cmake -S . -B build && cmake --build build -j 8 && ctest --output-on-failure',
  'ls -la | grep "\\.ts" | wc -l; echo done',
  'rm -rf dist && npm run compile || echo "compile failed" >&2',
];

// Each classification starts without kept trees, as for a command never seen before.
const classify = (command: string) => {
  forgetRecentTrees();
  return classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command } });
};

function measure(commands: readonly string[], seconds: number): { perSecond: number; p50: number; p99: number } {
  for (let i = 0; i < 2000; i++) classify(commands[i % commands.length] as string);
  const latencies: number[] = [];
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  while (performance.now() < stopAt) {
    for (const command of commands) {
      const t0 = performance.now();
      classify(command);
      latencies.push(performance.now() - t0);
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number) * 1000;
  return { perSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

/** Microseconds per KiB for a script of about `kib` KiB made of `line` repeated ("limit" when a limit stopped the parse). */
function scale(line: string, kib: number): string {
  const script = line.repeat(Math.ceil((kib * 1024) / line.length) - 1);
  classify(`${script}true`);
  const runs = kib >= 64 ? 2 : 5;
  let unread = false;
  const started = performance.now();
  // A different text each run: the last parsed trees are kept.
  for (let i = 0; i < runs; i++) unread ||= classify(`${script}true ${i}`).categories.includes('unparseable_command');
  const perKib = ((performance.now() - started) * 1000) / runs / kib;
  return unread ? `limit hit (${perKib.toFixed(0)})` : perKib.toFixed(0);
}

const seconds = Number(process.argv[2] ?? 2);
await loadShellParser();
const line = (label: string, value: string, goal = ''): void => console.log(`${label.padEnd(62)} ${value}${goal}`);
const results: Record<string, { mix: ReturnType<typeof measure>; compound: ReturnType<typeof measure> }> = {};
for (const [name, fast] of [['fast parser + tree-sitter (shipped)', true], ['tree-sitter only (baseline)', false]] as const) {
  setFastPath(fast);
  results[name] = { mix: measure(COMMANDS, seconds), compound: measure(COMPOUND, seconds) };
}
setFastPath(true);
console.log(`analyzer benchmark: ${COMMANDS.length} realistic agent commands, ${COMPOUND.length} compound commands, one core; shared machines are noisy`);
for (const [name, r] of Object.entries(results)) {
  line(`${name}: mix throughput`, `${Math.round(r.mix.perSecond)} classifications/s`, name.includes('shipped') ? ' (goal >= 50000)' : '');
  line(`${name}: mix latency`, `p50 ${r.mix.p50.toFixed(1)} us  p99 ${r.mix.p99.toFixed(1)} us`);
  line(`${name}: compound (<= 5 segments) median`, `${r.compound.p50.toFixed(1)} us  p99 ${r.compound.p99.toFixed(1)} us`, name.includes('shipped') ? ' (goal <= 20 us)' : '');
}
const shipped = results['fast parser + tree-sitter (shipped)']!;
const baseline = results['tree-sitter only (baseline)']!;
line('speed-up of the mix / of compound medians', `${(shipped.mix.perSecond / baseline.mix.perSecond).toFixed(1)}x / ${(baseline.compound.p50 / shipped.compound.p50).toFixed(1)}x`);
// Linear scaling: the time per KiB should stay about flat from 1 KiB to the 256 KiB maximum.
for (const [name, text] of [['fast parser', 'cp a b && npm test | tail -5; '], ['tree-sitter', 'for f in *.c; do cc -c "$f"; done && ls *.o; ']] as const) {
  const per = [1, 16, 64, 250].map((kib) => `${kib} KiB ${scale(text, kib)}`);
  line(`${name}: script length vs us per KiB`, per.join(' | '));
}
