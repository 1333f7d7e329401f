// SPDX-License-Identifier: MIT
// zero-sandbox exec and run --output-format through the built CLI: every stdout line validates against the exported schemas.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { CLI_PATH, runCli } from '../helpers/cli.js';
import { linuxSandboxTestsEnabled } from '../helpers/probe.js';
import { TREE_BASE } from '../helpers/sandbox.js';
import { driveRun } from '../fixtures/stream-json/protocol-client.js';
import { parseOutputStream, readMalformedCases, typesOf } from '../fixtures/stream-json/shared.js';
import type { OutputEvent } from '../../lib/stream-json/schema.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

const sandbox = linuxSandboxTestsEnabled();
const EXEC = ['exec', '--input-format', 'stream-json', '--output-format', 'stream-json'];

/** A fresh workspace plus a config home and grants path nobody else uses. */
function setup() {
  const root = tempDir('zs-exec-');
  const workspace = mkdtempSync(join(root, 'ws-'));
  const env = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(root, 'cfg-')), ZERO_SANDBOX_GRANTS_PATH: join(root, 'grants.json') };
  return { root, workspace, env };
}

const prompt = (content: string) => `${JSON.stringify({ schemaVersion: 2, type: 'prompt', content })}\n`;
const only = <T extends OutputEvent['type']>(events: OutputEvent[], type: T) => events.filter((e): e is Extract<OutputEvent, { type: T }> => e.type === type);

const cases = readMalformedCases();

for (const c of cases) {
  test(`exec rejects ${c.name}: a precise error event, run_end, exit 2, nothing ran`, async () => {
    const { workspace, env } = setup();
    const marker = join(workspace, 'ran');
    const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt(`touch ${marker}`) + c.input });
    assert.is(result.code, 2, result.stderr);
    const events = parseOutputStream(result.stdout);
    assert.equal(typesOf(events), ['error', 'run_end']);
    const [error] = only(events, 'error');
    assert.is(error!.code, 'usage_error');
    assert.is(error!.detail, c.code);
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
  assert.is(only(parseOutputStream(empty.stdout), 'error')[0]!.detail, 'empty_input');
  const images = await runCli([...EXEC, '--workspace', workspace], { env, input: JSON.stringify({ schemaVersion: 2, type: 'message', role: 'user', content: 'ls', images: [{ mediaType: 'image/png', data: 'iVBORw0KGgo=' }] }) });
  assert.is(images.code, 2);
  const [error] = only(parseOutputStream(images.stdout), 'error');
  assert.ok(error!.code === 'usage_error' && error!.detail === 'unsupported_input' && error!.field === 'images' && error!.line === 1);
  const paths = await runCli([...EXEC, '--workspace', workspace], { env, input: JSON.stringify({ schemaVersion: 2, type: 'message', role: 'user', content: 'ls', images: ['a.png'] }) });
  assert.is(only(parseOutputStream(paths.stdout), 'error')[0]!.field, 'images.0', 'images are {mediaType, data} objects, not paths');
});

test('exec --file: reads the file; a missing file is an error naming it', async () => {
  const { root, workspace, env } = setup();
  const missing = join(root, 'nope.jsonl');
  const result = await runCli([...EXEC, '--workspace', workspace, '--file', missing], { env });
  assert.is(result.code, 2);
  const [error] = only(parseOutputStream(result.stdout), 'error');
  assert.ok(error!.code === 'usage_error' && error!.detail === 'input_unreadable');
  assert.match(error!.message, missing);
  const bad = join(root, 'bad.jsonl');
  writeFileSync(bad, '{"schemaVersion":2,"type":"prompt","content":"x","bogus":1}\n');
  const fromFile = await runCli([...EXEC, '--workspace', workspace, '--file', bad], { env });
  assert.is(only(parseOutputStream(fromFile.stdout), 'error')[0]!.field, 'bogus');
});

test('exec: an input over 16 MiB is refused before anything is parsed or run', async () => {
  const { root, workspace, env } = setup();
  const line = prompt('echo x');
  const big = line.repeat(Math.ceil((16 * 1024 * 1024 + 1) / line.length));
  const viaStdin = await runCli([...EXEC, '--workspace', workspace], { env, input: big });
  assert.is(viaStdin.code, 2);
  assert.match(only(parseOutputStream(viaStdin.stdout), 'error')[0]!.message, 'standard input: the input is larger than 16777216 bytes');
  const file = join(root, 'big.jsonl');
  writeFileSync(file, big);
  const viaFile = await runCli([...EXEC, '--workspace', workspace, '--file', file], { env });
  assert.is(viaFile.code, 2);
  const [error] = only(parseOutputStream(viaFile.stdout), 'error');
  assert.ok(error!.code === 'usage_error' && error!.detail === 'input_too_large' && error!.message.startsWith(`--file ${file}:`));
});

test('exec: a missing workspace is an error event naming the flag and path', async () => {
  const { root, env } = setup();
  const result = await runCli([...EXEC, '--workspace', join(root, 'absent')], { env, input: prompt('true') });
  assert.is(result.code, 2);
  assert.match(only(parseOutputStream(result.stdout), 'error')[0]!.message, `--workspace ${join(root, 'absent')}: no such directory`);
});

test('exec usage errors: text output on stderr; structured output as an error event (usage_error) then run_end, exit 2', async () => {
  for (const args of [['exec'], ['exec', '--input-format', 'text'], ['exec', '--input-format', 'stream-json', '--output-format', 'yaml'], ['exec', '--input-format', 'stream-json', '--bogus']]) {
    const result = await runCli(args, { input: prompt('true') });
    assert.is(result.code, 2, args.join(' '));
    assert.is(result.stdout, '');
    assert.match(result.stderr, /zero-sandbox exec: /);
  }
  const structured = [['--bogus'], ['--timeout', 'abc'], ['extra-operand'], ['-p', 'echo x'], ['--permission-mode', 'plan'], ['--input-format', 'yaml'], ['-f']];
  for (const extra of structured) {
    for (const format of ['stream-json', 'debug']) {
      const result = await runCli(['exec', '-i', 'stream-json', '-o', format, ...extra], { input: prompt('true') });
      assert.is(result.code, 2, extra.join(' '));
      const events = parseOutputStream(result.stdout);
      assert.equal(typesOf(events), ['error', 'run_end'], extra.join(' '));
      assert.is(only(events, 'error')[0]!.code, 'usage_error');
      assert.equal(only(events, 'run_end')[0]!.status, 'error');
      assert.equal(only(events, 'run_end')[0]!.exitCode, 2);
    }
    const json = await runCli(['exec', '-i', 'stream-json', '--output-format=json', ...extra], { input: prompt('true') });
    assert.is(json.code, 2);
    assert.equal(json.stdout.trim().split('\n').map((line) => JSON.parse(line).type), ['error', 'done']);
  }
});

test('run --output-format stream-json: a successful and a failing command, every line valid', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const ok = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '--', '/bin/echo', 'hello world'], { env });
  assert.is(ok.code, 0, ok.stderr);
  const events = parseOutputStream(ok.stdout);
  assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const [call] = only(events, 'tool_call');
  assert.equal(call!.args, { command: "/bin/echo 'hello world'" });
  const [res] = only(events, 'tool_result');
  assert.is(res!.status, 'ok');
  assert.is(res!.output, 'stdout:\nhello world');
  assert.equal({ ...res!.meta, sandbox_duration_ms: '0' }, {
    exit_code: '0', sandbox_wrapped: 'true', sandbox_backend: 'linux-native', sandbox_target_backend: 'linux-native', sandbox_enforcement_level: 'native',
    sandbox_requires_platform: 'true', sandbox_cwd: workspace, sandbox_network: 'deny', sandbox_duration_ms: '0', raw_bytes: '12', emitted_bytes: '12', estimated_tokens: '3',
  });
  assert.is(res!.name, 'bash');

  const fail = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '-c', 'echo out; echo err >&2; exit 7'], { env });
  assert.is(fail.code, 7);
  const failed = parseOutputStream(fail.stdout);
  const [bad] = only(failed, 'tool_result');
  assert.ok(bad!.status === 'error' && bad!.output === 'stdout:\nout\nstderr:\nerr\nexit_code: 7' && bad!.meta?.exit_code === '7');
  assert.equal(only(failed, 'run_end')[0], { schemaVersion: 2, type: 'run_end', runId: failed[0]!.runId, status: 'error', exitCode: 7 });
  assert.is(fail.stderr, '');
});

test('run --output-format stream-json: the engine is in front — a network command prompts and never runs; --network allow answers it', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const server = await listener();
  const connect = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo CONNECTED`;
  try {
    const denied = await runCli(['run', '--output-format', 'stream-json', '--workspace', workspace, '--', '/bin/bash', '-c', connect], { env });
    const events = parseOutputStream(denied.stdout);
    assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_request', 'tool_result', 'final', 'run_end']);
    assert.is(only(events, 'permission_request')[0]!.reason, 'network access requires approval');
    assert.is(only(events, 'tool_result')[0]!.status, 'error');
    assert.is(only(events, 'tool_result')[0]!.meta?.permission_action, 'prompt');
    assert.is(denied.code, 1);
    assert.is(server.connections(), 0);
    const allowed = await runCli(['run', '--output-format', 'stream-json', '--network', 'allow', '--workspace', workspace, '--', '/bin/bash', '-c', connect], { env });
    const answered = parseOutputStream(allowed.stdout);
    assert.equal(typesOf(answered), ['run_start', 'tool_call', 'permission_request', 'permission_decision', 'tool_result', 'final', 'run_end']);
    const [decision] = only(answered, 'permission_decision');
    assert.ok(decision!.action === 'allow' && decision!.permissionGranted);
    const [ok] = only(answered, 'tool_result');
    assert.is(ok!.output, 'stdout:\nCONNECTED', 'control: the same command connects once the prompt is answered');
    assert.is(ok!.meta?.sandbox_network, 'allow');
    assert.is(server.connections(), 1);
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

test('run --output-format json prints snake_case records, one per line, ending with done; an unknown format is a usage error', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const result = await runCli(['run', '--output-format', 'json', '--workspace', workspace, '--', '/bin/sh', '-c', 'exit 4'], { env });
  assert.is(result.code, 4);
  const records = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(records.map((r) => r.type), ['run_start', 'tool_call', 'permission', 'tool_result', 'final', 'done']);
  assert.equal([records[2]!.action, records[2]!.permission_granted], ['allow', false], 'an automatic allow: granted by nobody');
  assert.is(records[3]!.tool_call_id, 'call_1');
  assert.is(records[3]!.status, 'error');
  assert.is((records[3]!.meta as Record<string, string>).exit_code, '4');
  assert.equal(records.at(-1), { type: 'done', exit_code: 4 });
  const usage = await runCli(['run', '--output-format', 'xml', '--', 'true'], { env });
  assert.is(usage.code, 2);
  assert.is(usage.stdout, '');
  assert.match(usage.stderr, '--output-format must be text, stream-json or json');
});


/** A TCP listener on the host's loopback that counts connections. */
async function listener() {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.end('HTTP/1.0 200 OK\r\n\r\nHELLO');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, close: () => server.close() };
}

test('exec: events combined in order into one script, run sandboxed in the workspace; every line valid', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const input = JSON.stringify({ schemaVersion: 2, type: 'message', role: 'user', content: 'echo one' }) + '\n\n' + prompt('echo two > out.txt\ncat out.txt');
  const result = await runCli([...EXEC, '--workspace', workspace], { env, input });
  assert.is(result.code, 0, result.stdout + result.stderr);
  const events = parseOutputStream(result.stdout);
  assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const [call] = only(events, 'tool_call');
  assert.equal(call, { schemaVersion: 2, type: 'tool_call', runId: events[0]!.runId, id: 'call_1', name: 'bash', args: { command: 'echo one\n\necho two > out.txt\ncat out.txt' }, sideEffect: 'shell' });
  const [res] = only(events, 'tool_result');
  assert.ok(res!.status === 'ok' && res!.output === 'stdout:\none\ntwo' && res!.truncated === false);
  assert.ok(res!.meta?.sandbox_backend === 'linux-native' && res!.meta.sandbox_network === 'deny' && res!.meta.sandbox_enforcement_level === 'native' && res!.meta.exit_code === '0');
  assert.is(readFileSync(join(workspace, 'out.txt'), 'utf8'), 'two\n');
  assert.is(only(events, 'run_start')[0]!.cwd, workspace);
});

test('exec: a failing command reports status error and its exit code', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt('echo bad >&2; exit 5') });
  assert.is(result.code, 5);
  const events = parseOutputStream(result.stdout);
  const [res] = only(events, 'tool_result');
  assert.ok(res!.status === 'error' && res!.output === 'stderr:\nbad\nexit_code: 5' && res!.meta?.exit_code === '5');
  assert.equal(only(events, 'run_end')[0]!.status, 'error');
  assert.equal(only(events, 'run_end')[0]!.exitCode, 5);
});

test('exec: --limit-* flags and the config\'s sandbox.limits set the caps; a flag stands over the config; a bad size is a usage error', async () => {
  const { workspace, env } = setup();
  const bad = await runCli([...EXEC, '--workspace', workspace, '--limit-tmp', '4X'], { env, input: prompt('true') });
  assert.is(bad.code, 2);
  assert.match(bad.stdout, /--limit-tmp must be a positive size/);
  if (!sandbox) return;
  const configDir = join(env.XDG_CONFIG_HOME as string, 'zero');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'config.json'), '{"sandbox":{"limits":{"tmpBytes":"16M","shmBytes":"8M"}}}');
  const result = await runCli([...EXEC, '--workspace', workspace, '--limit-shm', '4M'], { env, input: prompt('df -B1 --output=size /tmp /dev/shm | tail -n 2 | tr "\\n" " "') });
  assert.is(result.code, 0, result.stdout + result.stderr);
  const [res] = only(parseOutputStream(result.stdout), 'tool_result');
  assert.equal((String(res!.output).match(/\b\d{6,}\b/g) ?? []).map(Number), [16 * 1024 * 1024, 4 * 1024 * 1024], String(res!.output));
});

test('exec: a network command under the default policy is a permission_request, a denied result, and never runs', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const server = await listener();
  const marker = join(workspace, 'ran');
  try {
    const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt(`touch ${marker}\ncurl -sS http://127.0.0.1:${server.port}/`) });
    const events = parseOutputStream(result.stdout);
    assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_request', 'tool_result', 'final', 'run_end']);
    const [request] = only(events, 'permission_request');
    assert.is(request!.reason, 'network access requires approval');
    assert.ok(request!.action === 'prompt' && request!.name === 'bash' && request!.sideEffect === 'shell' && request!.id === 'call_1');
    assert.is(request!.risk?.level, 'critical');
    assert.ok(request!.risk?.categories?.includes('network'));
    const [res] = only(events, 'tool_result');
    assert.is(res!.status, 'error');
    assert.is(res!.meta?.permission_action, 'prompt');
    assert.is(res!.meta?.exit_code, undefined, 'no sandbox facts: nothing ran');
    const [end] = only(events, 'run_end');
    assert.ok(end!.status === 'error' && end!.exitCode !== 0);
    assert.is(result.code, end!.exitCode);
    assert.not.ok(existsSync(marker), 'the script never ran');
    assert.is(server.connections(), 0, 'nothing connected to the listener');
    assert.is(result.stderr, '');
  } finally {
    server.close();
  }
});

test('exec: a persistent deny grant is a permission_decision deny with the block, on the event and the result', async () => {
  if (!sandbox) return;
  const { root, workspace, env } = setup();
  writeFileSync(join(root, 'grants.json'), JSON.stringify({ schemaVersion: 3, policyVersion: 2, grants: { bash: [{ toolName: 'bash', decision: 'deny', approvedAt: '2026-01-01T00:00:00Z' }] } }));
  const marker = join(workspace, 'ran');
  const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt(`touch ${marker}`) });
  const events = parseOutputStream(result.stdout);
  assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const [decision] = only(events, 'permission_decision');
  assert.ok(decision!.action === 'deny' && decision!.permissionGranted === false && decision!.grantMatched === true);
  const block = decision!.block!;
  assert.equal(Object.keys(block).sort(), ['action', 'code', 'reason', 'recoverable', 'risk', 'toolName']);
  assert.ok(block.code === 'persistent_deny' && block.toolName === 'bash' && block.action === 'deny');
  const [res] = only(events, 'tool_result');
  assert.equal(res!.block, block);
  assert.is(res!.meta?.permission_action, 'deny');
  assert.is(res!.output, `Sandbox block [persistent_deny] for bash: ${block.reason} (a stored deny grant matched; remove it with \`zero-sandbox grants revoke bash\`). The command did not run.`);
  assert.not.ok(existsSync(marker));
  assert.is(result.code, 1);
});

test('exec: an invalid project config is an error naming the file and key, exit 3, nothing ran', async () => {
  const { workspace, env } = setup();
  mkdirSync(join(workspace, '.zero'));
  writeFileSync(join(workspace, '.zero', 'config.json'), JSON.stringify({ sandbox: { bogus: true } }));
  const marker = join(workspace, 'ran');
  const result = await runCli([...EXEC, '--workspace', workspace], { env, input: prompt(`touch ${marker}`) });
  assert.is(result.code, 3);
  const [error] = only(parseOutputStream(result.stdout), 'error');
  assert.is(error!.code, 'config_invalid');
  assert.match(error!.message, join(workspace, '.zero', 'config.json'));
  assert.match(error!.message, 'bogus');
  assert.not.ok(existsSync(marker));
});

test('exec: secrets in the script and in its output do not leak through any format', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const script = "echo 'token sk-live0123456789abcdefghij'; echo 'Authorization: Bearer abcdefghijklmnop0123456789'; echo api_key=9f8e7d6c5b4a3210";
  for (const format of ['stream-json', 'json', 'text']) {
    const result = await runCli(['exec', '--input-format', 'stream-json', '--output-format', format, '--workspace', workspace], { env, input: prompt(script) });
    assert.is(result.code, 0, result.stderr);
    for (const value of ['sk-live0123456789', 'abcdefghijklmnop0123456789', '9f8e7d6c5b4a3210']) {
      assert.not.match(result.stdout + result.stderr, value, `${format} leaked ${value}`);
    }
    assert.match(result.stdout, '[REDACTED]');
  }
});

test('a client written against the protocol document drives a full run, and sees a denial', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const cli = [process.execPath, CLI_PATH];
  const ok = await driveRun(cli, [{ type: 'message', role: 'user', content: 'printf "%s\\n" "$((6 * 7))"' }, { type: 'prompt', content: 'pwd' }], { cwd: workspace, env });
  assert.ok(ok.runId.startsWith('run_'));
  assert.equal(ok.types, ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  assert.is(ok.calls.get('call_1')?.name, 'bash');
  assert.equal(ok.results.map((r) => [r.id, r.status, r.output]), [['call_1', 'ok', `stdout:\n42\n${workspace}`]]);
  assert.is(ok.finalText, `42\n${workspace}\n`);
  assert.ok(ok.status === 'success' && ok.exitCode === 0 && ok.processExit === 0);

  const server = await listener();
  try {
    const denied = await driveRun(cli, [{ type: 'prompt', content: `curl -s http://127.0.0.1:${server.port}/` }], { cwd: workspace, env });
    assert.equal(denied.permissions.map((p) => [p.type, p.action, p.reason]), [['permission_request', 'prompt', 'network access requires approval']]);
    assert.equal(denied.results.map((r) => r.status), ['error']);
    assert.ok(denied.status !== 'success' && denied.exitCode !== 0 && denied.processExit === denied.exitCode);
    assert.is(server.connections(), 0);
  } finally {
    server.close();
  }

  const bad = await driveRun(cli, [{ type: 'prompt', content: 'true', extra: 1 }], { cwd: workspace, env });
  assert.equal(bad.types, ['error', 'run_end']);
  assert.match(bad.errors[0]!.message, 'extra');
  assert.is(bad.processExit, 2);
});

test('run --output-format stream-json: SIGINT kills the sandbox and still ends the stream with error and run_end', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const marker = join(workspace, 'survived');
  const child = spawn(process.execPath, [CLI_PATH, 'run', '--output-format', 'stream-json', '--workspace', workspace, '--', '/bin/sh', '-c', `sleep 3; touch ${marker}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let sent = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (!sent && stdout.includes('"tool_call"')) {
      sent = true;
      setTimeout(() => child.kill('SIGINT'), 200);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const events = parseOutputStream(stdout);
  assert.equal(typesOf(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'error', 'run_end']);
  assert.is(only(events, 'error')[0]!.code, 'interrupted');
  assert.is(only(events, 'run_end')[0]!.status, 'interrupted');
  assert.is(code, 130);
  await new Promise((resolve) => setTimeout(resolve, 3500));
  assert.not.ok(existsSync(marker), 'nothing in the sandbox outlived the interrupt');
});

test('exec --timeout: the sandbox is killed, meta says so, exit 124', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const result = await runCli([...EXEC, '--workspace', workspace, '--timeout', '0.5'], { env, input: prompt('echo started; sleep 5; echo finished') });
  assert.is(result.code, 124);
  const [res] = only(parseOutputStream(result.stdout), 'tool_result');
  assert.ok(res!.status === 'error' && res!.meta?.sandbox_timed_out === 'true');
  assert.is(res!.meta?.sandbox_denial_capability, 'resource_limit');
  assert.is(res!.meta?.sandbox_denial_scope, 'timeoutMs');
  assert.match(res!.output!, 'started');
  assert.not.match(res!.output!, 'finished');
});

test('exec names the flags that allow a denial: --network allow (which exec accepts) and --allow-write; a bad --network is a usage error', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const denied = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '-p', 'curl --version >/dev/null 2>&1; echo "net=$ZERO_SANDBOX_NETWORK"'], { env });
  assert.is(denied.code, 1);
  const [refused] = only(parseOutputStream(denied.stdout), 'tool_result');
  assert.match(refused!.output!, '(to allow it: --network allow, or answer "always" to it once in `zero-sandbox run` on a terminal (stored in the grants file))');
  const allowed = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '--network', 'allow', '-p', 'curl --version >/dev/null 2>&1; echo "net=$ZERO_SANDBOX_NETWORK"'], { env });
  assert.is(allowed.code, 0, allowed.stdout + allowed.stderr);
  const [ran] = only(parseOutputStream(allowed.stdout), 'tool_result');
  assert.match(ran!.output!, /^stdout:\nnet=allow(?:\n|$)/);
  assert.is(ran!.meta?.sandbox_network, 'allow');
  const outside = mkdtempSync(join(TREE_BASE, 'zs-exec-outside-'));
  try {
    const write = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '--allow-write', outside, '-p', `touch ${outside}/made`], { env });
    assert.is(write.code, 0, write.stdout + write.stderr);
    assert.ok(existsSync(join(outside, 'made')), '--allow-write is --add-dir');
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
  const bad = await runCli(['exec', '-o', 'stream-json', '--network', 'yes', '-p', 'true'], { env });
  assert.is(bad.code, 2);
  assert.match(bad.stdout, '--network must be deny or allow, not \\"yes\\"');
});

test.after(removeTempDirs);

test.run();
