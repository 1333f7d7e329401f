// SPDX-License-Identifier: MIT
// Turns event bodies into redacted, schema-versioned output events and hands them to the chosen format.
import { randomBytes } from 'node:crypto';

import { redactValue } from '../redact.js';
import type { OutputEvent } from './schema.js';

/** An output event without the fields every line shares (`schemaVersion`, `runId`). */
export type OutputEventBody = OutputEvent extends infer E ? (E extends OutputEvent ? Omit<E, 'schemaVersion' | 'runId'> : never) : never;

/** Receives the finished (stamped and redacted) events of one run. */
export interface EventSink {
  /** Called once per event, in order. */
  write(event: OutputEvent): void;
  /** Called once after `run_end`. */
  finish(): void;
}

/** Builds a run id like `run_20260603_1a2b3c` (matches the protocol's runId pattern). */
export function buildRunId(now: Date = new Date(), suffix: string = randomBytes(4).toString('hex')): string {
  const day = now.toISOString().slice(0, 10).replace(/-/g, '');
  return `run_${day}_${suffix}`;
}

/** Stamps a body with `schemaVersion: 2` and `runId` (in protocol key order) and redacts it. */
export function buildOutputEvent(runId: string, body: OutputEventBody): OutputEvent {
  const { type, ...rest } = body;
  return redactValue({ schemaVersion: 2, type, runId, ...rest }) as OutputEvent;
}

/** One run's event stream: stamps, redacts, records and forwards every event to its sink. */
export class StreamEmitter {
  readonly runId: string;
  private readonly sink: EventSink;
  private readonly log: OutputEvent[] = [];
  private ended = false;

  constructor(sink: EventSink, runId: string = buildRunId()) {
    this.sink = sink;
    this.runId = runId;
  }

  /** Emits one event. Nothing may follow `run_end`. */
  emit(body: OutputEventBody): OutputEvent {
    if (this.ended) throw new Error(`stream-json: ${body.type} emitted after run_end`);
    const event = buildOutputEvent(this.runId, body);
    this.log.push(event);
    this.sink.write(event);
    if (event.type === 'run_end') {
      this.ended = true;
      this.sink.finish();
    }
    return event;
  }

  /** Every event emitted so far (already redacted). */
  get events(): readonly OutputEvent[] {
    return this.log;
  }

  /** Whether run_end has been emitted. */
  get done(): boolean {
    return this.ended;
  }
}
