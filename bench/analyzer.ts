// SPDX-License-Identifier: MIT
// Benchmark of the shell analyzer: classifications per second on a mix of realistic agent commands,
// latency of compound commands (up to 5 segments), and time against script length, each measured
// with the fast parser (the shipped path) and with tree-sitter alone (the WebAssembly parser for
// every command: the baseline the fast path is compared with in the same run). Scripts of 1 to 256
// KiB (statements, or one long && chain) are cut and parsed piece by piece: their time per KiB should stay flat.
// Run: npm run compile && node dist/bench/analyzer.js [seconds]
import { cpus, loadavg } from 'node:os';

import { classifyRisk } from '../lib/bash/risk.js';
import { forgetRecentTrees, loadShellParser, setFastPath } from '../lib/bash/parse.js';
import { median } from './median.js';

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

interface Measured {
  /** Median over rounds of classifications per wall-clock second. */
  perSecond: number;
  /** Median over rounds of classifications per second of this process's CPU time (all its threads, the garbage collector's included). */
  perCpuSecond: number;
  p50: number;
  p99: number;
}

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
/** Passes over the command list per throughput round (about 3,000 classifications, tens of ms). */
const PASSES = 150;

/**
 * Rounds alternate between throughput (a fixed number of classifications, untimed one by one: a
 * timer around every call, and the growing list of latencies, would be counted as the analyzer's
 * cost) and latency (each call timed). Throughput is the median round. Rounds of fixed work, short
 * enough that most run on a core without being descheduled: on a loaded machine a round that is
 * spread over many time slices also costs more CPU (caches refilled after every switch), so rounds
 * of fixed wall-clock length measure the machine's load more than the analyzer.
 */
function measure(commands: readonly string[], seconds: number): Measured {
  const latencies: number[] = [];
  const rounds: number[] = [];
  const cpuRounds: number[] = [];
  const stopAt = performance.now() + seconds * 1000;
  while (performance.now() < stopAt) {
    const started = performance.now();
    const cpuStarted = cpuMs();
    for (let pass = 0; pass < PASSES; pass++) for (const command of commands) classify(command);
    const count = PASSES * commands.length;
    rounds.push(count / ((performance.now() - started) / 1000));
    cpuRounds.push(count / (Math.max(0.001, cpuMs() - cpuStarted) / 1000));
    for (let pass = 0; pass < PASSES / 3; pass++) {
      for (const command of commands) {
        const t0 = performance.now();
        classify(command);
        latencies.push(performance.now() - t0);
      }
    }
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number) * 1000;
  return { perSecond: median(rounds), perCpuSecond: median(cpuRounds), p50: at(0.5), p99: at(0.99) };
}

/**
 * Both paths run for a while before either is measured: V8 optimizes the JavaScript and recompiles
 * the WebAssembly parser in background threads (whose CPU time the process's CPU time includes)
 * during the first seconds, whichever path is measured then.
 */
function warmUp(seconds: number): void {
  const stopAt = performance.now() + seconds * 1000;
  while (performance.now() < stopAt) {
    for (const fast of [true, false]) {
      setFastPath(fast);
      for (const command of [...COMMANDS, ...COMPOUND]) classify(command);
    }
  }
  setFastPath(true);
}

/** A block of ordinary script (loops, conditionals, case, a heredoc, a function, substitutions): what the scale figures repeat. */
const SCRIPT_BLOCK = [
  'set -e', 'for f in src/*.c; do', '  cc -c "$f" -o "${f%.c}.o"', 'done',
  'if [ -f Makefile ]; then make -j4; else echo "no makefile"; fi',
  'case "$1" in', '  test) npm test ;;', '  lint) npm run lint;;', 'esac',
  "cat <<'EOF' > notes.txt", 'built at $(date)', 'EOF',
  'build() { echo "building $1"; }', 'build x && ls *.o | wc -l', '(cd dist && tar czf ../out.tgz .)',
  'git add -A && git commit -m "build $(git rev-parse --short HEAD)"', '',
].join('\n');

/** Microseconds (wall clock and CPU) per KiB for a script of about `kib` KiB made of `block` repeated, or the reason it was not analyzed. */
function scale(block: string, kib: number): { wall: number; cpu: number; failed: string | undefined } {
  const script = block.repeat(Math.max(1, Math.floor((kib * 1024 - 8) / block.length)));
  classify(`${script}true`);
  const runs = kib >= 64 ? 3 : 7;
  const walls: number[] = [];
  const cpus: number[] = [];
  let failed: string | undefined;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const c0 = cpuMs();
    const risk = classify(`${script}true ${i}`);
    cpus.push(((cpuMs() - c0) * 1000) / kib);
    walls.push(((performance.now() - t0) * 1000) / kib);
    if (risk.categories.includes('unparseable_command')) failed = risk.reason;
  }
  return { wall: median(walls), cpu: median(cpus), failed };
}

const seconds = Number(process.argv[2] ?? 3);
await loadShellParser();
warmUp(Math.min(3, seconds));
const line = (label: string, value: string, goal = ''): void => console.log(`${label.padEnd(62)} ${value}${goal}`);
const results: Record<string, { mix: Measured; compound: Measured }> = {};
for (const [name, fast] of [['fast parser + tree-sitter (shipped)', true], ['tree-sitter only (baseline)', false]] as const) {
  setFastPath(fast);
  results[name] = { mix: measure(COMMANDS, seconds), compound: measure(COMPOUND, seconds) };
}
setFastPath(true);
const load = loadavg().map((value) => value.toFixed(1)).join(' ');
console.log(`analyzer benchmark: ${COMMANDS.length} realistic agent commands, ${COMPOUND.length} compound commands, one core, ${cpus().length} CPUs, load average ${load}`);
console.log(`(throughput: median of rounds of ${PASSES} passes over the list, per wall-clock second and per CPU second of the process; shared machines are noisy)`);
for (const [name, r] of Object.entries(results)) {
  const shipped = name.includes('shipped');
  line(`${name}: mix throughput`, `${Math.round(r.mix.perSecond)}/s wall, ${Math.round(r.mix.perCpuSecond)}/s CPU`, shipped ? ' (goal >= 50000)' : '');
  line(`${name}: mix latency`, `p50 ${r.mix.p50.toFixed(1)} us  p99 ${r.mix.p99.toFixed(1)} us`);
  line(`${name}: compound (<= 5 segments) median`, `${r.compound.p50.toFixed(1)} us  p99 ${r.compound.p99.toFixed(1)} us`, shipped ? ' (goal <= 20 us)' : '');
}
const shipped = results['fast parser + tree-sitter (shipped)']!;
const baseline = results['tree-sitter only (baseline)']!;
line('shipped / baseline: mix throughput (wall, CPU)', `${(shipped.mix.perSecond / baseline.mix.perSecond).toFixed(1)}x, ${(shipped.mix.perCpuSecond / baseline.mix.perCpuSecond).toFixed(1)}x`);
line('baseline / shipped: compound median latency', `${(baseline.compound.p50 / shipped.compound.p50).toFixed(1)}x faster`);
// Linear scaling: the time per KiB should stay about flat from 1 KiB to the 256 KiB maximum.
const BLOCKS = [
  ['one-line commands', 'cp a b && npm test | tail -5; '],
  // One statement of thousands of commands: cut between them, not at statement ends.
  ['one && chain', 'cp a b && npm test | tail -5 && '],
  ['script (loops, case, heredoc)', `${SCRIPT_BLOCK}\n`],
] as const;
for (const [name, block] of BLOCKS) {
  const per = [1, 16, 64, 256].map((kib) => ({ kib, ...scale(block, kib) }));
  line(`${name}: us per KiB at 1 | 16 | 64 | 256 KiB`, per.map((p) => (p.failed === undefined ? `${p.wall.toFixed(0)} (CPU ${p.cpu.toFixed(0)})` : `not analyzed: ${p.failed}`)).join(' | '));
  const first = per[0]!;
  const mid = per[2]!;
  const last = per[per.length - 1]!;
  // Past a few tens of KiB the answer itself (one entry per command) outlives the garbage
  // collector's young generation: the second ratio shows whether the cost per KiB still grows there.
  line(`${name}: cost per KiB (CPU), 256 KiB / 1 KiB and 256 / 64 KiB (~1 = linear)`, `${(last.cpu / first.cpu).toFixed(2)} and ${(last.cpu / mid.cpu).toFixed(2)}`);
}
