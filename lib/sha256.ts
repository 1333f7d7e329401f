// SPDX-License-Identifier: MIT
// SHA-256 (FIPS 180-4) of a string's UTF-8 bytes in plain JS, for the run path: importing node:crypto costs ~4 ms of CLI start.
import { createRequire } from 'node:module';

/**
 * The first 32 bits of the fractional parts of the roots of the first primes: SHA-256's round
 * constants (cube roots of the first 64) and initial hash value (square roots of the first 8).
 */
function rootFractions(count: number, root: (n: number) => number): Uint32Array {
  const out = new Uint32Array(count);
  let found = 0;
  for (let candidate = 2; found < count; candidate++) {
    let prime = true;
    for (let d = 2; d * d <= candidate; d++) if (candidate % d === 0) prime = false;
    if (!prime) continue;
    const value = root(candidate);
    out[found++] = Math.floor((value - Math.floor(value)) * 2 ** 32);
  }
  return out;
}

const K = rootFractions(64, Math.cbrt);
const H0 = rootFractions(8, Math.sqrt);

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

/**
 * The SHA-256 digest of `text` (encoded as UTF-8) as 64 lowercase hex digits, the same as
 * `createHash('sha256').update(text).digest('hex')` (test/unit/sha256.test.ts compares them).
 * For short inputs such as paths; it is not constant-time and not meant for secrets.
 */
export function sha256Hex(text: string): string {
  const data = Buffer.from(text, 'utf8');
  const blocks = new Uint8Array(Math.ceil((data.length + 9) / 64) * 64);
  blocks.set(data);
  blocks[data.length] = 0x80;
  const view = new DataView(blocks.buffer);
  const bits = data.length * 8;
  view.setUint32(blocks.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(blocks.length - 4, bits >>> 0);
  const h = Uint32Array.from(H0);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < blocks.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number;
      const b = w[i - 2] as number;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16] as number) + s0 + (w[i - 7] as number) + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h as unknown as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const next = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i] as number) + (next[i] as number);
  }
  let hex = '';
  for (const word of h) hex += word.toString(16).padStart(8, '0');
  return hex;
}

/**
 * From this many texts on, sha256Hexes loads node:crypto (once for the process): its import costs
 * less than hashing them here, which runs interpreted at first (1,000 paths: ~20-50 ms before the
 * function is optimized, ~3 ms through node:crypto).
 */
const MANY = 32;

let nodeHash: ((text: string) => string) | undefined;

/** sha256Hex of each of `texts`, in order. */
export function sha256Hexes(texts: readonly string[]): string[] {
  if (texts.length < MANY) return texts.map(sha256Hex);
  if (nodeHash === undefined) {
    const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
    nodeHash = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
  }
  return texts.map(nodeHash);
}
