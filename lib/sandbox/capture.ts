// SPDX-License-Identifier: MIT
// Output capture from streams, for starters whose OS hands over pipes (macOS, Windows): the same
// rule as the Linux addon's capture. A stream is kept whole up to maxBuffer; past it the first
// half of the cap stays (frozen) and the last half is a ring, so memory stays bounded and the
// command is not killed for its volume; with overflowKill the sandbox is killed instead.
import { writeSync } from 'node:fs';
import type { Readable } from 'node:stream';

import type { CaptureRequest, CapturedOutput, CapturedStream } from './contract.js';

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII and invalid bytes). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
  if (lead >= 0xc2) return 2;
  return 1;
}

/** Head and tail of one stream with a byte count (capture_buffer.cc's BoundedBuffer in TS). */
export class BoundedCapture {
  #head: Buffer[] = [];
  #headBytes = 0;
  #ring: Buffer[] = [];
  #ringBytes = 0;
  #truncated = false;
  /** Bytes the stream produced. */
  bytes = 0;

  /** `cap` bytes are kept in all; 0 keeps everything. */
  constructor(readonly cap: number) {}

  /** Adds a chunk. */
  append(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (!this.#truncated) {
      if (this.cap === 0 || this.#headBytes + chunk.length <= this.cap) {
        this.#head.push(chunk);
        this.#headBytes += chunk.length;
        return;
      }
      // Over the cap for the first time: the first half is frozen, the rest feeds the ring.
      this.#truncated = true;
      const headCap = Math.floor(this.cap / 2);
      const all = Buffer.concat([...this.#head, chunk]);
      this.#head = [all.subarray(0, headCap)];
      this.#headBytes = headCap;
      this.#pushRing(all.subarray(headCap));
      return;
    }
    this.#pushRing(chunk);
  }

  #pushRing(chunk: Buffer): void {
    const ringCap = this.cap - Math.floor(this.cap / 2);
    this.#ring.push(chunk);
    this.#ringBytes += chunk.length;
    // Only the last ringCap bytes can survive.
    while (this.#ringBytes - (this.#ring[0]?.length ?? 0) >= ringCap) this.#ringBytes -= this.#ring.shift()!.length;
    if (this.#ringBytes > ringCap) {
      const joined = Buffer.concat(this.#ring).subarray(this.#ringBytes - ringCap);
      this.#ring = [joined];
      this.#ringBytes = joined.length;
    }
  }

  /** The stream as runSandboxed reports it: head (cut to a character boundary) and tail. */
  result(): CapturedStream {
    const head = Buffer.concat(this.#head);
    if (!this.#truncated) return { head: head.toString('utf8'), bytes: this.bytes };
    // Drop a trailing sequence the cut left incomplete, and the continuation bytes of a character
    // whose start left the ring, so decoding never splits a character.
    let end = head.length;
    for (let back = 1; back <= 4 && back <= end; back++) {
      const byte = head[end - back]!;
      if (isContinuation(byte)) continue;
      if (sequenceLength(byte) > back) end -= back;
      break;
    }
    const tail = Buffer.concat(this.#ring);
    let skip = 0;
    while (skip < 3 && skip < tail.length && isContinuation(tail[skip]!)) skip++;
    return { head: head.subarray(0, end).toString('utf8'), tail: tail.subarray(skip).toString('utf8'), bytes: this.bytes };
  }
}

/**
 * Collects stdout and stderr of a started process as `capture` asks: input written to stdin,
 * bounded capture, the spill file, and the overflow kill. `output()` is complete once both
 * streams have ended (the lifecycle's `exited`).
 */
export function collectStreams(
  streams: [NodeJS.WritableStream | null, Readable | null, Readable | null],
  capture: CaptureRequest,
  killForOverflow: () => void,
): { output: () => CapturedOutput } {
  const overflowKill = capture.overflowKill === true;
  let overflow: 'stdout' | 'stderr' | undefined;
  let spillFailed = false;
  const spill = (chunk: Buffer): void => {
    if (capture.spill === undefined || spillFailed) return;
    try {
      for (let done = 0; done < chunk.length;) done += writeSync(capture.spill, chunk, done);
    } catch {
      spillFailed = true;
    }
  };
  const collect = (stream: Readable | null, name: 'stdout' | 'stderr'): BoundedCapture => {
    const kept = new BoundedCapture(overflowKill ? 0 : capture.maxBuffer);
    stream?.on('data', (chunk: Buffer) => {
      if (overflow !== undefined) return; // the sandbox is being killed: the rest is discarded
      if (overflowKill && kept.bytes + chunk.length > capture.maxBuffer) {
        overflow = name;
        killForOverflow();
        return;
      }
      spill(chunk);
      kept.append(chunk);
    });
    stream?.on('error', () => {});
    return kept;
  };
  const out = collect(streams[1], 'stdout');
  const err = collect(streams[2], 'stderr');
  if (capture.inheritStdin !== true) streams[0]?.end(Buffer.from(capture.input));
  return {
    output: () => ({
      stdout: out.result(),
      stderr: err.result(),
      ...(overflow === undefined ? {} : { overflow }),
      ...(spillFailed || (capture.spill !== undefined && capture.spill < 0) ? { spillFailed: true } : {}),
    }),
  };
}
