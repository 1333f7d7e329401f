// SPDX-License-Identifier: MIT
// The exported stream-json schemas accept the protocol document's examples and reject drift.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { InputEventSchema, OutputEventSchema, RUN_ID_PATTERN, ToolResultEventSchema } from '../../lib/stream-json/schema.js';
import { readStreamJsonFixture } from '../fixtures/stream-json/shared.js';

const lines = (name: string) => readStreamJsonFixture(name).split('\n').filter((line) => line.trim() !== '');

test('every output example of the protocol document validates', () => {
  const examples = lines('protocol-output-examples.jsonl');
  assert.is(examples.length, 12);
  const types = new Set<string>();
  for (const line of examples) {
    const result = OutputEventSchema.safeParse(JSON.parse(line));
    assert.ok(result.success, `${line}\n${JSON.stringify(result.error?.issues)}`);
    types.add(result.data!.type);
  }
  assert.equal([...types].sort(), ['error', 'final', 'permission_decision', 'permission_request', 'run_end', 'run_start', 'text', 'tool_call', 'tool_result', 'usage']);
});

test('both input examples of the protocol document validate', () => {
  for (const line of lines('protocol-input-examples.jsonl')) assert.ok(InputEventSchema.safeParse(JSON.parse(line)).success, line);
});

test('the documented permission_request carries the block object with its nested risk', () => {
  const line = lines('protocol-output-examples.jsonl').find((l) => l.includes('"block"'))!;
  const event = OutputEventSchema.parse(JSON.parse(line));
  assert.is(event.type, 'permission_request');
  if (event.type !== 'permission_request') return;
  assert.is(event.block?.code, 'network');
  assert.is(event.block?.recoverable, true);
  assert.equal(event.block?.risk.categories, ['network']);
});

const base = { schemaVersion: 2, type: 'run_end', runId: 'run_1', status: 'success', exitCode: 0 };

test('output events need schemaVersion 2 and a runId matching the pattern', () => {
  assert.ok(OutputEventSchema.safeParse(base).success);
  assert.not.ok(OutputEventSchema.safeParse({ ...base, schemaVersion: 1 }).success);
  const { runId: _drop, ...noRunId } = base;
  assert.not.ok(OutputEventSchema.safeParse(noRunId).success);
  for (const bad of ['', '-run', 'run id', 'r'.repeat(129), 'run/1']) assert.not.ok(OutputEventSchema.safeParse({ ...base, runId: bad }).success, bad);
  for (const good of ['r', 'run_20260603_abc123', 'A.b:c-d_e', 'r'.repeat(128)]) assert.ok(RUN_ID_PATTERN.test(good), good);
});

test('output schemas are strict: unknown fields and the schema-1 name "violation" are rejected', () => {
  assert.not.ok(OutputEventSchema.safeParse({ ...base, extra: 1 }).success);
  const result = { schemaVersion: 2, type: 'tool_result', runId: 'r', id: 'call_1', status: 'error', output: '', truncated: false };
  assert.ok(ToolResultEventSchema.safeParse(result).success);
  assert.not.ok(ToolResultEventSchema.safeParse({ ...result, status: 'denied' }).success, 'status is ok or error only');
  assert.not.ok(OutputEventSchema.safeParse({ ...base, status: 'denied' }).success, 'run_end status is success, error, interrupted or incomplete');
  const violation = { code: 'network', action: 'prompt', risk: { level: 'critical' }, reason: 'x', recoverable: true };
  assert.not.ok(ToolResultEventSchema.safeParse({ ...result, violation }).success);
  assert.ok(ToolResultEventSchema.safeParse({ ...result, block: violation }).success);
});

test('unknown output and input types are rejected', () => {
  assert.not.ok(OutputEventSchema.safeParse({ ...base, type: 'bogus' }).success);
  assert.not.ok(InputEventSchema.safeParse({ schemaVersion: 2, type: 'text', content: 'x' }).success);
});

test.run();
