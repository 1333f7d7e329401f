// SPDX-License-Identifier: MIT
// What a burst of work does to the caller's event loop, measured from inside the caller:
// - delay: the longest wait of a 1 ms timer past its due time (perf_hooks.monitorEventLoopDelay),
//   wall time, so on a loaded machine it holds other processes' turns too;
// - hold: the longest stretch between two turns of a 1 ms timer less the time the caller's thread
//   waited for a CPU (the scheduler's count in /proc/thread-self/schedstat): the work on the
//   thread, the system calls it blocked in and its garbage-collection pauses, whoever else runs;
// - CPU: the longest on-CPU time of the thread between two turns of that timer;
// - garbage collection: the longest pause of each kind (young-generation scavenge, full
//   mark-compact, an incremental-marking step), wall time, and the longest hold that no pause
//   overlapped (the work itself);
// - a bystander's delay: the longest event-loop delay of another, idle Node process measured over
//   the same burst. It is the machine's share (other processes' turns, the scheduler's latency
//   with the burst's processes runnable): no caller of any library sees less on that machine then.
// The bookkeeping allocates nothing per turn (a fixed buffer for the scheduler's count, fixed
// arrays for the long holds), so the collections it reports are those of the work measured.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** What a burst did to the caller's event loop (milliseconds), and what its calls returned. */
export interface BurstWatch<T> {
  /** Wall time of the burst. */
  ms: number;
  /** The longest event-loop delay (wall). */
  maxDelay: number;
  /** The longest hold less the wait for a CPU. */
  maxHold: number;
  /** The longest hold that no garbage-collection pause overlapped. */
  maxHoldNoGc: number;
  /** The longest on-CPU time between two turns. */
  maxCpu: number;
  /** Turns held over 10 ms less the wait for a CPU. */
  longHolds: number;
  /** The longest pause of each kind of collection (wall), and how many of each. */
  gc: { scavenge: number; markCompact: number; incremental: number; scavenges: number; markCompacts: number };
  /** The caller's thread's CPU time over the burst. */
  cpu: number;
  /** The longest event-loop delay of an idle bystander process over the burst (NaN when it could not run). */
  bystanderDelay: number;
  results: T[];
}

/** A turn held longer than this (less the CPU wait) counts as a long hold. */
const LONG_MS = 10;
/** Holds longer than this are kept to be matched with the collections' pauses afterwards. */
const KEPT_MS = 2;
const MAX_KEPT = 8192;

interface ThreadClock {
  /** The calling thread's [on-CPU, waiting-for-a-CPU] milliseconds into `out`; false if unreadable. */
  read(out: Float64Array): boolean;
  close(): void;
}

/** The scheduler's count of the calling thread, read into a fixed buffer (nothing allocated per read). */
function threadClock(): ThreadClock | undefined {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(96);
  const read = (out: Float64Array): boolean => {
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    let field = 0;
    let value = 0;
    for (let i = 0; i < n && field < 2; i++) {
      const c = buffer[i] as number;
      if (c >= 48 && c <= 57) value = value * 10 + (c - 48);
      else {
        out[field++] = value / 1e6;
        value = 0;
      }
    }
    return field === 2;
  };
  if (!read(new Float64Array(2))) {
    closeSync(fd);
    return undefined;
  }
  return { read, close: () => closeSync(fd) };
}

/**
 * The bystander's program: a 1 ms timer and the event-loop delay histogram from its first line
 * of input on ("go": the burst starts) to the second ("stop"), when it prints the longest delay.
 */
const BYSTANDER = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const delay = monitorEventLoopDelay({ resolution: 1 });
setInterval(() => {}, 1);
let lines = 0;
process.stdin.on('data', (chunk) => {
  for (const c of chunk.toString()) if (c === '\\n' && ++lines === 1) delay.enable();
  if (lines >= 2) { delay.disable(); process.stdout.write(String(delay.max / 1e6) + '\\n'); process.exit(0); }
});
process.stdout.write('ready\\n');
`;

/** An idle Node process to measure the machine's share of a burst's delay; undefined when it cannot start. */
async function startBystander(): Promise<{ go(): void; stop(): Promise<number> } | undefined> {
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ['-e', BYSTANDER], { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ready = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    child.once('exit', () => resolve(false));
    child.stdout?.on('data', () => {
      if (out.includes('ready\n')) resolve(true);
    });
  });
  if (!ready) return undefined;
  return {
    go: () => child.stdin?.write('go\n'),
    stop: () =>
      new Promise<number>((resolve) => {
        child.once('exit', () => resolve(Number(out.split('\n')[1] ?? Number.NaN)));
        child.stdin?.end('stop\n');
      }),
  };
}

/** Runs `count` calls of `start` together and watches the caller's event loop meanwhile. */
export async function watchBurst<T>(start: () => Promise<T>, count: number): Promise<BurstWatch<T>> {
  // Started before anything of the caller is watched: its fork holds the caller's thread.
  const bystander = await startBystander();
  const clock = threadClock();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const gc = { scavenge: 0, markCompact: 0, incremental: 0, scavenges: 0, markCompacts: 0 };
  const pauseStart = new Float64Array(MAX_KEPT);
  const pauseEnd = new Float64Array(MAX_KEPT);
  let pauses = 0;
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        gc.scavenge = Math.max(gc.scavenge, entry.duration);
        gc.scavenges++;
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.markCompact = Math.max(gc.markCompact, entry.duration);
        gc.markCompacts++;
      } else if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) gc.incremental = Math.max(gc.incremental, entry.duration);
      if (pauses < MAX_KEPT) {
        pauseStart[pauses] = entry.startTime;
        pauseEnd[pauses++] = entry.startTime + entry.duration;
      }
    }
  });
  collections.observe({ entryTypes: ['gc'] });
  const now = new Float64Array(2);
  const last = new Float64Array(2);
  let lastAt = performance.now();
  clock?.read(last);
  let maxHold = 0;
  let maxCpu = 0;
  let longHolds = 0;
  const holdFrom = new Float64Array(MAX_KEPT);
  const holdTo = new Float64Array(MAX_KEPT);
  const holdMs = new Float64Array(MAX_KEPT);
  let holds = 0;
  let dropped = false;
  const sample = (): void => {
    const at = performance.now();
    if (clock?.read(now) === true) {
      const held = at - lastAt - (now[1] as number) + (last[1] as number);
      maxCpu = Math.max(maxCpu, (now[0] as number) - (last[0] as number));
      maxHold = Math.max(maxHold, held);
      if (held > LONG_MS) longHolds++;
      if (held > KEPT_MS) {
        if (holds < MAX_KEPT) {
          holdFrom[holds] = lastAt;
          holdTo[holds] = at;
          holdMs[holds++] = held;
        } else dropped = true;
      }
      last.set(now);
    }
    lastAt = at;
  };
  const sampler = setInterval(sample, 1);
  delay.enable();
  // The histogram measures from its first tick on: a block before it would go unseen.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const cpuBefore = new Float64Array(2);
  clock?.read(cpuBefore);
  bystander?.go();
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: count }, start));
  const ms = performance.now() - started;
  // The burst may end before the timer's next turn (the last exits in the poll right after a
  // long turn): that turn is measured here, not dropped.
  sample();
  delay.disable();
  clearInterval(sampler);
  const bystanderDelay = bystander === undefined ? Number.NaN : await bystander.stop();
  const cpu = clock !== undefined ? (last[0] as number) - (cpuBefore[0] as number) : Number.NaN;
  clock?.close();
  // Entries are delivered on a later turn: take those of the burst's last collections too.
  await new Promise((resolve) => setImmediate(resolve));
  collections.disconnect();
  // Too many holds to match (none of this size in practice): the bound is the longest hold.
  let maxHoldNoGc = dropped ? maxHold : Math.min(maxHold, KEPT_MS);
  for (let i = 0; i < holds; i++) {
    let overlapped = false;
    for (let j = 0; j < pauses && !overlapped; j++) overlapped = (pauseStart[j] as number) < (holdTo[i] as number) && (pauseEnd[j] as number) > (holdFrom[i] as number);
    if (!overlapped) maxHoldNoGc = Math.max(maxHoldNoGc, holdMs[i] as number);
  }
  return { ms, maxDelay: delay.max / 1e6, maxHold, maxHoldNoGc, maxCpu, longHolds, gc, cpu, bystanderDelay, results };
}
