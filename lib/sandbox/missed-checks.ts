// SPDX-License-Identifier: MIT
// The after-run check of a run whose process died while its command ran (SIGKILL, a crash, an
// out-of-memory kill): nothing removed or put back what its command planted at protected paths
// (a git config key that runs a program, a hook, a new repository, .zero/.agents, a tool config),
// so the user's next `git status` or agent would run it. Every run publishes its whole check with
// its notes (run-notes.ts); the next run of overlapping write roots, in any process of the user,
// claims the notes of such a run once that run's sandbox is gone, runs that check exactly as the
// run would have (the same code: descriptor walks, no link followed), and reports what it removed
// or put back. `finishInterruptedRuns` does the same for every such run without starting one.
// What still holds between the kill and that next run: host git run in the workspace meanwhile
// runs what was planted (README, "Runs whose process was killed").
import type { ProtectedPathViolation } from './git-check.js';

/**
 * The check's state as JSON: maps, sets, buffers and bigints tagged (the guard holds nothing
 * else; byte-string paths round-trip as their code points).
 */
export function packCheck(value: unknown): unknown {
  // Strings first: a run of 1,000 write roots packs some 10,000 paths and states.
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return { $b: value.toString('base64') };
  if (value instanceof Map) return { $m: [...value].map(([k, v]) => [packCheck(k), packCheck(v)]) };
  if (value instanceof Set) return { $s: [...value].map(packCheck) };
  if (typeof value === 'bigint') return { $n: value.toString() };
  if (Array.isArray(value)) return value.map(packCheck);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = packCheck(v);
    return out;
  }
  return value;
}

/** The reverse of packCheck. Throws on a malformed record (the caller reports it). */
export function unpackCheck(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpackCheck);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (typeof record.$b === 'string') return Buffer.from(record.$b, 'base64');
  if (Array.isArray(record.$m)) return new Map((record.$m as unknown[]).map((pair) => (pair as unknown[]).map(unpackCheck) as [unknown, unknown]));
  if (Array.isArray(record.$s)) return new Set((record.$s as unknown[]).map(unpackCheck));
  if (typeof record.$n === 'string') return BigInt(record.$n);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = unpackCheck(v);
  return out;
}

/** What a missed check removed or put back, with the write roots of the run it belonged to. */
export type InterruptedRunReport = ProtectedPathViolation & { interruptedRun: string[] };

/** The line the CLI and stream-json print for one thing a missed check removed or put back. */
export function interruptedRunNotice(path: string, reason: string): string {
  return `an earlier run of this workspace was killed before its after-run check; that check ran now: ${path}${reason === '' ? '' : `: ${reason}`}`;
}
