// SPDX-License-Identifier: MIT
// The one redaction module every output path uses (stream-json, json, tool results, stored grant
// reasons): secret-named keys and sk-/api_key=/Bearer values never get through. The cases grant
// reasons were scrubbed for before the two pattern lists were merged still hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildOutputEvent } from '../../lib/stream-json/emitter.js';
import { isSecretKey, REDACTED, redactString, redactValue } from '../../lib/redact.js';

const SK = 'sk-proj1234567890abcdefXYZ';
const BEARER = 'eyJhbGciOiJIUzI1NiJ9.payload.sig';

test('sk- keys of 16+ characters are replaced; short sk- words survive', () => {
  assert.is(redactString(`key=${SK} done`), `key=${REDACTED} done`);
  assert.is(redactString('sk-short'), 'sk-short');
  assert.is(redactString('task-1234567890123456789'), 'task-1234567890123456789');
});

test('api_key / api-key / apikey assignments of 12+ characters are replaced, keeping the name', () => {
  assert.is(redactString('api_key=abcdef123456789'), `api_key=${REDACTED}`);
  assert.is(redactString('API-KEY: "abcdef123456789"'), `API-KEY: "${REDACTED}"`);
  assert.is(redactString('export apikey=abcdef123456789 next'), `export apikey=${REDACTED} next`);
  assert.is(redactString('api_key=short'), 'api_key=short');
});

test('Bearer tokens of 16+ characters are replaced', () => {
  assert.is(redactString(`Authorization: Bearer ${BEARER}`), `Authorization: Bearer ${REDACTED}`);
  assert.is(redactString('Bearer abc'), 'Bearer abc');
});

test('the cases of the former grant-reason scrubber still hold: spaced and quoted assignments, values with punctuation, any-case bearer', () => {
  assert.is(redactString(`reason api_key = 'abcdefghijklmn' here`), `reason api_key = '${REDACTED}' here`);
  assert.is(redactString('api-key:abc,defghijklmnop'), `api-key:${REDACTED}`, 'a comma inside the value does not leave its tail visible');
  assert.is(redactString('APIKEY=ab;cdefghijklmnop next'), `APIKEY=${REDACTED} next`);
  assert.is(redactString('bearer abcdefghijklmnop1234'), `bearer ${REDACTED}`);
  assert.is(redactString(`use ${SK} twice ${SK}`), `use ${REDACTED} twice ${REDACTED}`);
});

test('secret-named keys are recognised case- and separator-insensitively', () => {
  for (const key of ['token', 'password', 'apiKey', 'API_KEY', 'OPENAI_API_KEY', 'client_secret', 'githubAccessToken', 'refresh-token', 'id_token', 'private_key', 'db_password', 'AWS_SECRET_ACCESS_KEY']) {
    assert.ok(isSecretKey(key), key);
  }
  for (const key of ['totalTokens', 'promptTokens', 'tokenizer', 'command', 'reason', 'passwordless_login', 'keyboard', '']) {
    assert.not.ok(isSecretKey(key), key);
  }
});

test('redactValue walks objects and arrays without touching the input', () => {
  const input = { args: { command: `curl -H "Authorization: Bearer ${BEARER}"`, token: 'abc', nested: [{ password: 1 }, SK] }, count: 3, ok: true, none: null };
  const copy = structuredClone(input);
  const out = redactValue(input);
  assert.equal(input, copy);
  assert.equal(out, { args: { command: `curl -H "Authorization: Bearer ${REDACTED}"`, token: REDACTED, nested: [{ password: REDACTED }, REDACTED] }, count: 3, ok: true, none: null });
});

test('every emitted event is redacted, stamped with schemaVersion 2 and runId first', () => {
  const event = buildOutputEvent('run_x', { type: 'tool_result', id: 'call_1', status: 'ok', output: `${SK}\napi_key=abcdef123456789\n`, truncated: false });
  assert.equal(Object.keys(event).slice(0, 3), ['schemaVersion', 'type', 'runId']);
  const line = JSON.stringify(event);
  assert.not.ok(line.includes(SK));
  assert.not.ok(line.includes('abcdef123456789'));
  assert.ok(line.includes(REDACTED));
});

test.run();
