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

/** The packed JSON is written here first (reused; a write that grew it past 1 MiB lets it go). */
const SCRATCH_BYTES = 64 * 1024;
let scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
let written = 0;
/** Strings JSON writes as they are between quotes: no quote, backslash, control character or surrogate. */
const VERBATIM = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function room(bytes: number): void {
  if (written + bytes <= scratch.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(scratch.length * 2, written + bytes));
  scratch.copy(bigger, 0, 0, written);
  scratch = bigger;
}

/** ASCII text (punctuation, numbers, keywords, base64). */
function putAscii(text: string): void {
  room(text.length);
  written += scratch.write(text, written, 'latin1');
}

function putString(text: string): void {
  // JSON's escapes for the rest (non-ASCII characters other than surrogates stay as they are).
  if (!VERBATIM.test(text)) return putRaw(JSON.stringify(text));
  // At most three bytes per UTF-16 unit (no surrogates here), and the quotes.
  room(text.length * 3 + 2);
  scratch[written++] = 0x22;
  written += scratch.write(text, written, 'utf8');
  scratch[written++] = 0x22;
}

function putRaw(text: string): void {
  room(text.length * 3);
  written += scratch.write(text, written, 'utf8');
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** Writes JSON.stringify(packCheck(value)) for a value JSON does not leave out. */
function putPacked(value: unknown): void {
  if (typeof value === 'string') return putString(value);
  if (Buffer.isBuffer(value)) {
    putAscii('{"$b":"');
    putAscii(value.toString('base64'));
    return putAscii('"}');
  }
  if (value instanceof Map) {
    putAscii('{"$m":[');
    let first = true;
    for (const [k, v] of value) {
      putAscii(first ? '[' : ',[');
      first = false;
      putInArray(k);
      putAscii(',');
      putInArray(v);
      putAscii(']');
    }
    return putAscii(']}');
  }
  if (value instanceof Set) {
    putAscii('{"$s":[');
    let first = true;
    for (const v of value) {
      if (!first) putAscii(',');
      first = false;
      putInArray(v);
    }
    return putAscii(']}');
  }
  if (typeof value === 'bigint') return putAscii(`{"$n":"${value.toString()}"}`);
  if (Array.isArray(value)) {
    putAscii('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) putAscii(',');
      putInArray(value[i]);
    }
    return putAscii(']');
  }
  if (value !== null && typeof value === 'object') {
    putAscii('{');
    let first = true;
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      if (omitted(v)) continue;
      if (!first) putAscii(',');
      first = false;
      putString(key);
      putAscii(':');
      putPacked(v);
    }
    return putAscii('}');
  }
  if (typeof value === 'number') return putAscii(Number.isFinite(value) ? String(value) : 'null');
  putAscii(value === null ? 'null' : value ? 'true' : 'false');
}

function putInArray(value: unknown): void {
  if (omitted(value)) putAscii('null');
  else putPacked(value);
}

/**
 * The UTF-8 bytes of `JSON.stringify(packCheck(value))` for an object, written straight into a
 * reused buffer: no packed copy of the tree and no JSON string in between (a burst's runs each
 * packed their guard's fresh look, ~20 KB of the young generation per run).
 */
export function packedJsonBytes(value: object): Buffer {
  written = 0;
  try {
    putPacked(value);
    return Buffer.from(scratch.subarray(0, written));
  } finally {
    if (scratch.length > 1024 * 1024) scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  }
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
