// SPDX-License-Identifier: MIT
// The exported schemas accept exactly what stream-json's own implementation emits: a transcript
// built field for field from its event struct (every event type, omitted-when-empty fields left
// out) validates, and the same drift a typed client rejects (a boolean in meta, an invented
// status) is rejected by the schemas too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { OutputEventSchema } from '../../lib/stream-json/schema.js';
import { readStreamJsonFixture } from '../fixtures/stream-json/shared.js';
import { decodeReferenceEvent, decodeReferenceStream, REFERENCE_EVENT_TYPES } from '../fixtures/stream-json/reference-decoder.js';

const lines = (name: string) => readStreamJsonFixture(name).split('\n').filter((line) => line.trim() !== '');

test('every line of a reference transcript validates, and every event type is in it', () => {
  const transcript = lines('reference-transcript.jsonl');
  const types = new Set<string>();
  for (const line of transcript) {
    const result = OutputEventSchema.safeParse(JSON.parse(line));
    assert.ok(result.success, `${line}\n${JSON.stringify(result.error?.issues)}`);
    types.add(result.data!.type);
  }
  assert.equal([...types].sort(), [...REFERENCE_EVENT_TYPES].sort());
  assert.is(decodeReferenceStream(`${transcript.join('\n')}\n`).length, transcript.length, 'the test decoder agrees');
});

test('every run ending of the Go implementation validates: success, error, interrupted; usage and interrupt errors; empty output left out', () => {
  for (const line of lines('reference-ends.jsonl')) {
    const result = OutputEventSchema.safeParse(JSON.parse(line));
    assert.ok(result.success, `${line}\n${JSON.stringify(result.error?.issues)}`);
    decodeReferenceEvent(line);
  }
});

test('what a typed client cannot decode is rejected by the schemas and the decoder alike', () => {
  const base = JSON.parse(lines('reference-transcript.jsonl').find((line) => line.includes('"exit_code":"0"'))!) as Record<string, unknown>;
  const drifted: Array<[string, Record<string, unknown>]> = [
    ['a boolean in meta', { ...base, meta: { sandbox_wrapped: true } }],
    ['a number in meta', { ...base, meta: { exit_code: 0 } }],
    ['null in meta', { ...base, meta: { sandbox_exit_code: null } }],
    ['status denied on tool_result', { ...base, status: 'denied' }],
    ['truncated as a string', { ...base, truncated: 'false' }],
    ['output as null', { ...base, output: null }],
    ['schemaVersion 1', { ...base, schemaVersion: 1 }],
  ];
  const end = { schemaVersion: 2, type: 'run_end', runId: 'run_1', status: 'success', exitCode: 0 };
  drifted.push(['run_end status denied', { ...end, status: 'denied' }], ['exitCode as a string', { ...end, exitCode: '0' }], ['an unknown event type', { ...end, type: 'done' }]);
  for (const [name, event] of drifted) {
    assert.not.ok(OutputEventSchema.safeParse(event).success, `schema: ${name}`);
    assert.throws(() => decodeReferenceEvent(JSON.stringify(event)), undefined, `decoder: ${name}`);
  }
});

test.run();
