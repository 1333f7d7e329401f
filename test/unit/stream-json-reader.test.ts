// SPDX-License-Identifier: MIT
// The stream-json input reader: blank lines ignored, every bad line named with its line and field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildScript, readInput, readInputLine } from '../../lib/stream-json/reader.js';
import { readMalformedCases, readStreamJsonFixture } from '../fixtures/stream-json/shared.js';

const cases = readMalformedCases();

for (const c of cases) {
  test(`rejects ${c.name} with ${c.code} at line ${c.line}${c.field === undefined ? '' : ` field ${c.field}`}`, () => {
    const { errors } = readInput(c.input);
    assert.is(errors.length, 1, JSON.stringify(errors));
    const [error] = errors;
    assert.is(error!.code, c.code);
    assert.is(error!.line, c.line);
    assert.is(error!.field, c.field);
    assert.ok(error!.message.startsWith(`Invalid stream-json input at line ${c.line}`), error!.message);
    if (c.field !== undefined) assert.ok(error!.message.includes(`"${c.field}"`), error!.message);
  });
}

test('accepts the valid fixture: blank and whitespace-only lines ignored, line numbers kept', () => {
  const { events, errors } = readInput(readStreamJsonFixture('valid-input.jsonl'));
  assert.equal(errors, []);
  assert.equal(events.map((e) => e.line), [2, 4, 5]);
  assert.equal(events.map((e) => e.event.type), ['message', 'prompt', 'message']);
});

test('combines content in order with a blank line between', () => {
  const { events } = readInput(readStreamJsonFixture('valid-input.jsonl'));
  assert.is(buildScript(events), 'echo first\n\necho second\n\necho third');
});

test('accepts CRLF line endings and keeps multi-line content intact', () => {
  const input = '{"schemaVersion":2,"type":"prompt","content":"a\\nb"}\r\n\r\n{"schemaVersion":2,"type":"prompt","content":"c"}\r\n';
  const { events, errors } = readInput(input);
  assert.equal(errors, []);
  assert.is(buildScript(events), 'a\nb\n\nc');
});

test('reports every bad line, not only the first, and keeps good ones apart', () => {
  const input = ['{"schemaVersion":2,"type":"prompt","content":"ok"}', 'nope', '{"schemaVersion":1,"type":"prompt","content":"x"}'].join('\n');
  const { events, errors } = readInput(input);
  assert.is(events.length, 1);
  assert.equal(errors.map((e) => [e.line, e.code]), [[2, 'invalid_json'], [3, 'unsupported_schema_version']]);
});

test('names every unknown field of a line when there are several', () => {
  const error = readInputLine('{"schemaVersion":2,"type":"prompt","content":"x","a":1,"b":2}', 7);
  assert.ok('code' in error && error.code === 'unknown_field');
  if (!('code' in error)) return;
  assert.is(error.field, 'a');
  assert.ok(error.message.includes('also: b'), error.message);
});

test('a line whose content is empty or blank is refused (it would run nothing); content is trimmed when joined', () => {
  const { errors } = readInput(['{"schemaVersion":2,"type":"prompt","content":"touch ran"}', '{"schemaVersion":2,"type":"prompt","content":"   "}'].join('\n'));
  assert.equal(errors.map((e) => [e.line, e.code, e.field]), [[2, 'invalid_field', 'content']]);
  assert.match(errors[0]!.message, 'Invalid stream-json input at line 2, field "content": content is required');
  const { events } = readInput(['{"schemaVersion":2,"type":"prompt","content":"echo a \\n"}', '{"schemaVersion":2,"type":"prompt","content":"\\n echo b"}'].join('\n'));
  assert.is(buildScript(events), 'echo a\n\necho b');
});

test('an empty input has no events and no errors', () => {
  assert.equal(readInput(''), { events: [], errors: [] });
  assert.equal(readInput('\n  \n\t\n'), { events: [], errors: [] });
});

test.run();
