// SPDX-License-Identifier: MIT
// The clock a parse's time limit is counted on. The limit is CPU time, so that a loaded machine
// (which slows a parse without making the text any harder) does not turn a readable command into
// an unreadable one. It must be the parsing thread's CPU time: the process's also counts V8's
// background threads, which recompile the WebAssembly parser with the optimizing compiler for
// seconds after it loads (1.5-2.5 s of CPU), and counting them made ordinary scripts time out.
import { openSync, readSync } from 'node:fs';

/** Milliseconds per clock tick of /proc's per-thread times (USER_HZ is 100 on Linux). */
const MS_PER_TICK = 10;
/** How often, in wall-clock milliseconds, the CPU time is read during a parse. */
const CPU_CHECK_EVERY_MS = 5;

let statFd: number | null | undefined;
const statBuffer = Buffer.alloc(1024);

/**
 * This thread's CPU time in milliseconds (user + system, 10 ms ticks) where the OS tells it
 * without native code (Linux: /proc/thread-self/stat), else undefined. The descriptor is opened
 * once, by the thread that parses, and names that thread for good.
 */
function threadCpuMs(): number | undefined {
  if (statFd === null) return undefined;
  try {
    statFd ??= openSync('/proc/thread-self/stat', 'r');
    const length = readSync(statFd, statBuffer, 0, statBuffer.length, 0);
    const text = statBuffer.toString('latin1', 0, length);
    // The command name (field 2) may hold spaces and parentheses: count fields after its end.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime and stime, fields 14 and 15
    if (!Number.isFinite(ticks)) throw new Error('unexpected /proc/thread-self/stat');
    return ticks * MS_PER_TICK;
  } catch {
    statFd = null;
    return undefined;
  }
}

function processCpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** A running time limit: CPU and wall-clock budgets in milliseconds (Infinity: none). */
export interface Deadline {
  readonly cpuBudget: number;
  readonly wallBudget: number;
  readonly wallStart: number;
  readonly threadStart: number | undefined;
  readonly processStart: number;
  nextCpuCheck: number;
}

/** Starts a time limit now. */
export function startDeadline(cpuBudget: number, wallBudget: number): Deadline {
  const wallStart = performance.now();
  return { cpuBudget, wallBudget, wallStart, threadStart: threadCpuMs(), processStart: processCpuMs(), nextCpuCheck: wallStart };
}

/**
 * CPU time spent since the limit started: the thread's where it can be read; otherwise the
 * process's, counted at most at the wall clock's rate (one thread cannot use more than that, so
 * background threads cannot end the parse faster than the wall clock would).
 */
function cpuSpent(deadline: Deadline, wallNow: number): number {
  if (deadline.threadStart !== undefined) {
    const thread = threadCpuMs();
    if (thread !== undefined) return thread - deadline.threadStart;
  }
  return Math.min(processCpuMs() - deadline.processStart, wallNow - deadline.wallStart);
}

/** Whether the limit has run out (called from the parser's progress callback; cheap). */
export function pastDeadline(deadline: Deadline): boolean {
  const now = performance.now();
  if (now - deadline.wallStart > deadline.wallBudget) return true;
  if (now < deadline.nextCpuCheck) return false;
  deadline.nextCpuCheck = now + CPU_CHECK_EVERY_MS;
  return cpuSpent(deadline, now) > deadline.cpuBudget;
}
