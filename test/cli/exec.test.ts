// SPDX-License-Identifier: MIT
// zero-sandbox exec and run --output-format through the built CLI: every stdout line validates against the exported schemas.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { linuxSandboxTestsEnabled } from '../helpers/probe.js';
import { parseOutputStream, readStreamJsonFixture, typesOf } from '../fixtures/stream-json/shared.js';
import type { OutputEvent } from '../../lib/stream-json/schema.js';

const sandbox = linuxSandboxTestsEnabled();
const EXEC = ['exec', '--input-format', 'stream-json', '--output-format', 'stream-json'];

/** A fresh workspace plus a config home and grants path nobody else uses. */
function setup() {
  const root = mkdtempSync(join(tmpdir(), 'zs-exec-'));
  const workspace = mkdtempSync(join(root, 'ws-'));
  const env = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(root, 'cfg-')), ZERO_SANDBOX_GRANTS_PATH: join(root, 'grants.json') };
  return { root, workspace, env };
}

const prompt = (content: string) => `${JSON.stringify({ schemaVersion: 2, type: 'prompt', content })}\n`;
const only = <T extends OutputEvent['type']>(events: OutputEvent[], type: T) => events.filter((e): e is Extract<OutputEvent, { type: T }> => e.type === type);

interface Case {
  name: string;
  input: string;
  code: string;
  line: number;
  field?: string;
}

const { cases } = JSON.parse(readStreamJsonFixture('malformed-input.json')) as { cases: Case[] };

for (const c of cases) {
  test(`exec rejects ${c.name}: a precise error event, run_end, exit 2, nothing ran`, async () => {
    const { workspace, env } = setup();
    const marker = join(workspace, 'ran');
    const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt(`touch ${marker}`) + c.input });
    assert.is(result.code, 2, result.stderr);
    const events = parseOutputStream(result.stdout);
    assert.equal(typesOf(events), ['error', 'run_end']);
    const [error] = only(events, 'error');
    assert.is(error!.code, c.code);
    assert.is(error!.line, c.line + 1, 'the touch line comes first');
    assert.is(error!.field, c.field);
    assert.match(error!.message, `line ${c.line + 1}`);
    assert.equal(only(events, 'run_end')[0]!.exitCode, 2);
    assert.not.ok(existsSync(marker), 'no input line may run when one is bad');
  });
}

test('exec: an input with no events, and images, are refused with exit 2', async () => {
  const { workspace, env } = setup();
  const empty = await runCli([...EXEC, '--workspace', workspace], { env, input: '\n\n' });
  assert.is(empty.code, 2);
  assert.is(only(parseOutputStream(empty.stdout), 'error')[0]!.code, 'empty_input');
  const images = await runCli([...EXEC, '--workspace', workspace], { env, input: JSON.stringify({ schemaVersion: 2, type: 'message', role: 'user', content: 'ls', images: ['a.png'] }) });
  assert.is(images.code, 2);
  const [error] = only(parseOutputStream(images.stdout), 'error');
  assert.ok(error!.code === 'unsupported_input' && error!.field === 'images' && error!.line === 1);
});

test('exec --file: reads the file; a missing file is an error naming it', async () => {
  const { root, workspace, env } = setup();
  const missing = join(root, 'nope.jsonl');
  const result = await runCli([...EXEC, '--workspace', workspace, '--file', missing], { env });
  assert.is(result.code, 2);
  const [error] = only(parseOutputStream(result.stdout), 'error');
  assert.is(error!.code, 'input_unreadable');
  assert.match(error!.message, missing);
  const bad = join(root, 'bad.jsonl');
  writeFileSync(bad, '{"schemaVersion":2,"type":"prompt","content":"x","bogus":1}\n');
  const fromFile = await runCli([...EXEC, '--workspace', workspace, '--file', bad], { env });
  assert.is(only(parseOutputStream(fromFile.stdout), 'error')[0]!.field, 'bogus');
});

test('exec: a missing workspace is an error event naming the flag and path', async () => {
  const { root, env } = setup();
  const result = await runCli([...EXEC, '--workspace', join(root, 'absent')], { env, input: prompt('true') });
  assert.is(result.code, 2);
  assert.match(only(parseOutputStream(result.stdout), 'error')[0]!.message, `--workspace ${join(root, 'absent')}: no such directory`);
});

test('exec usage errors go to stderr only, exit 2', async () => {
  for (const args of [['exec'], ['exec', '--input-format', 'text'], ['exec', '--input-format', 'stream-json', '--output-format', 'yaml'], ['exec', '--input-format', 'stream-json', '--bogus']]) {
    const result = await runCli(args, { input: prompt('true') });
    assert.is(result.code, 2, args.join(' '));
    assert.is(result.stdout, '');
    assert.match(result.stderr, /zero-sandbox exec: /);
  }
});

test('run --output-format stream-json: a successful and a failing command, every line valid', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const ok = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '--', '/bin/echo', 'hello world'], { env });
  assert.is(ok.code, 0, ok.stderr);
  const events = parseOutputStream(ok.stdout);
  assert.equal(typesOf(events), ['run_start', 'tool_call', 'tool_result', 'final', 'run_end']);
  const [call] = only(events, 'tool_call');
  assert.equal(call!.args, { command: "/bin/echo 'hello world'" });
  const [res] = only(events, 'tool_result');
  assert.is(res!.status, 'ok');
  assert.is(res!.output, 'hello world\n');
  assert.equal({ ...res!.meta, sandbox_duration_ms: 0 }, { sandbox_backend: 'linux-native', sandbox_wrapped: true, sandbox_network: 'deny', sandbox_enforcement_level: 'native', sandbox_cwd: workspace, sandbox_exit_code: 0, sandbox_duration_ms: 0 });

  const fail = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '-c', 'echo out; echo err >&2; exit 7'], { env });
  assert.is(fail.code, 7);
  const failed = parseOutputStream(fail.stdout);
  const [bad] = only(failed, 'tool_result');
  assert.ok(bad!.status === 'error' && bad!.output === 'out\nerr\n' && bad!.meta?.sandbox_exit_code === 7);
  assert.equal(only(failed, 'run_end')[0], { schemaVersion: 2, type: 'run_end', runId: failed[0]!.runId, status: 'error', exitCode: 7 });
  assert.is(fail.stderr, '');
});

test('run --output-format stream-json: under the default deny a host listener is unreachable (and reachable with allow)', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('HELLO\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`;
  try {
    const denied = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '--', '/bin/bash', '-c', connect], { env });
    const [res] = only(parseOutputStream(denied.stdout), 'tool_result');
    assert.is(res!.status, 'error');
    assert.not.match(res!.output, 'CONNECTED');
    assert.is(res!.meta?.sandbox_network, 'deny');
    assert.ok(denied.code !== 0);
    const allowed = await runCli(['run', '--output-format', 'stream-json', '--network', 'allow', '--workspace', workspace, '--', '/bin/bash', '-c', connect], { env });
    const [ok] = only(parseOutputStream(allowed.stdout), 'tool_result');
    assert.is(ok!.output, 'CONNECTED\n', 'control: the same command connects when the network is allowed');
    assert.is(ok!.meta?.sandbox_network, 'allow');
  } finally {
    server.close();
  }
});

test('run --output-format: secrets printed by the command do not leak through the protocol', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const secrets = ['sk-live0123456789abcdefghij', 'api_key=9f8e7d6c5b4a3210', 'Bearer abcdefghijklmnop0123456789'];
  const script = `printf '%s\\n' 'a ${secrets[0]}' '${secrets[1]}' 'Authorization: ${secrets[2]}'`;
  for (const format of ['stream-json', 'json']) {
    const result = await runCli(['run', '--output-format', format, '--workspace', workspace, '-c', script], { env });
    assert.is(result.code, 0, result.stderr);
    for (const value of ['sk-live0123456789', '9f8e7d6c5b4a3210', 'abcdefghijklmnop0123456789']) assert.not.match(result.stdout, value, `${format} leaked ${value}`);
    assert.match(result.stdout, '[REDACTED]');
  }
});

test('run --output-format json prints one document; an unknown format is a usage error', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const result = await runCli(['run', '--output-format', 'json', '--workspace', workspace, '--', '/bin/sh', '-c', 'exit 4'], { env });
  assert.is(result.code, 4);
  const doc = JSON.parse(result.stdout) as { schema_version: number; status: string; exit_code: number; tool_results: Array<{ status: string }> };
  assert.is(doc.schema_version, 2);
  assert.is(doc.status, 'error');
  assert.is(doc.exit_code, 4);
  assert.is(doc.tool_results[0]!.status, 'error');
  const usage = await runCli(['run', '--output-format', 'xml', '--', 'true'], { env });
  assert.is(usage.code, 2);
  assert.is(usage.stdout, '');
  assert.match(usage.stderr, '--output-format must be text, stream-json or json');
});

test.run();
