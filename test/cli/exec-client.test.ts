// SPDX-License-Identifier: MIT
// A client written for stream-json's own `exec` uses zero-sandbox exec unchanged: every line
// decodes with the published struct's field types (strict: a known field of another JSON type, an
// unknown event type or status fails), with the Go Zero CLI's flag spellings; through interrupts,
// usage errors, a 200 KiB script, 70 MB of output and a reader that closes the pipe early.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { CLI_PATH, runCli } from '../helpers/cli.js';
import { linuxSandboxTestsEnabled } from '../helpers/probe.js';
import { decodeReferenceStream, type DecodedEvent } from '../fixtures/stream-json/reference-decoder.js';
import { parseOutputStream } from '../fixtures/stream-json/shared.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

const sandbox = linuxSandboxTestsEnabled();

function setup() {
  const root = tempDir('zs-client-');
  const workspace = mkdtempSync(join(root, 'ws-'));
  const env = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(root, 'cfg-')), ZERO_SANDBOX_GRANTS_PATH: join(root, 'grants.json') };
  return { root, workspace, env };
}

const prompt = (content: string) => `${JSON.stringify({ schemaVersion: 2, type: 'prompt', content })}\n`;
const ofType = (events: DecodedEvent[], type: string) => events.filter((event) => event.type === type);
/** Decodes as a Go Zero CLI client does, and as this package's schemas do: both must accept every line. */
function decode(stdout: string): DecodedEvent[] {
  parseOutputStream(stdout);
  return decodeReferenceStream(stdout);
}

test('the Go Zero CLI flag spellings: -i -o -f -C, --prompt/-p and positional text, --output-format=debug', async () => {
  if (!sandbox) return;
  const { root, workspace, env } = setup();
  const file = join(root, 'in.jsonl');
  writeFileSync(file, prompt('echo from-file; pwd'));
  const viaFile = await runCli(['exec', '-i', 'stream-json', '-o', 'stream-json', '-f', file, '-C', workspace], { env });
  assert.is(viaFile.code, 0, viaFile.stdout + viaFile.stderr);
  const events = decode(viaFile.stdout);
  assert.equal(events.map((e) => e.type), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const [result] = ofType(events, 'tool_result');
  assert.ok(result!.name === 'bash' && result!.status === 'ok' && result!.output === `stdout:\nfrom-file\n${workspace}`);
  assert.is(ofType(events, 'run_start')[0]!.cwd, workspace);

  writeFileSync(join(workspace, 'relative.jsonl'), prompt('echo relative'));
  const relative = await runCli(['exec', '--input-format=stream-json', '--output-format=debug', '--file=relative.jsonl', '--cwd', workspace], { env });
  assert.is(ofType(decode(relative.stdout), 'tool_result')[0]!.output, 'stdout:\nrelative', '--file is relative to the workspace');

  for (const args of [['-p', 'echo $((40+2))'], ['--prompt=echo $((40+2))'], ['-p=echo', '$((40+2))'], ['echo', '$((40+2))']]) {
    const text = await runCli(['exec', '-o', 'stream-json', '-C', workspace, ...args], { env });
    assert.is(text.code, 0, args.join(' ') + text.stdout + text.stderr);
    assert.is(ofType(decode(text.stdout), 'tool_result')[0]!.output, 'stdout:\n42', args.join(' '));
  }
  // Text and a --file: the text, a blank line, then the file's text.
  writeFileSync(join(workspace, 'more.sh'), '\necho from-the-file\n\n');
  const both = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '-p', 'echo first', '-f', 'more.sh'], { env });
  assert.is(both.code, 0, both.stdout + both.stderr);
  const bothEvents = decode(both.stdout);
  assert.equal(ofType(bothEvents, 'tool_call')[0]!.args, { command: 'echo first\n\necho from-the-file' });
  assert.is(ofType(bothEvents, 'tool_result')[0]!.output, 'stdout:\nfirst\nfrom-the-file');
});

test('model and provider flags are accepted and reported as not applicable in a warning; permission flags keep their meaning', async () => {
  if (!sandbox) return;
  const { root, workspace, env } = setup();
  const extra = mkdtempSync(join(root, 'extra-'));
  const result = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '-m', 'gpt-4.1', '--provider', 'openai', '--max-turns', '3', '--allow-escalation', '--add-dir', extra, '-p', `touch ${join(extra, 'written')}`], { env });
  assert.is(result.code, 0, result.stdout + result.stderr);
  const events = decode(result.stdout);
  assert.equal(events.map((e) => e.type), ['run_start', 'warning', 'warning', 'warning', 'warning', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  assert.equal(ofType(events, 'permission_decision').map((d) => [d.action, d.permissionMode, d.permissionGranted]), [['allow', 'auto', false]], 'headless runs default to auto');
  const messages = ofType(events, 'warning').map((w) => String(w.message));
  for (const flag of ['--model gpt-4.1', '--provider openai', '--max-turns 3', '--allow-escalation']) assert.ok(messages.some((m) => m.startsWith(`${flag} does not apply`)), flag);
  assert.ok(existsSync(join(extra, 'written')), '--add-dir made the directory writable');
  const unsafe = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '--skip-permissions-unsafe', '-p', 'true'], { env });
  assert.is(unsafe.code, 0, unsafe.stdout);
  const unsafeEvents = decode(unsafe.stdout);
  assert.match(String(ofType(unsafeEvents, 'warning')[0]?.message), 'Unsafe permissions are active for this run because --skip-permissions-unsafe was passed');
  assert.equal(ofType(unsafeEvents, 'permission_decision').map((d) => [d.action, d.permissionMode, d.permissionGranted]), [['allow', 'unsafe', true]]);
  const text = await runCli(['exec', '-C', workspace, '--skip-permissions-unsafe', '-p', 'true'], { env });
  assert.match(text.stderr, 'warning: Unsafe permissions are active');
  const json = await runCli(['exec', '-o', 'json', '-C', workspace, '--skip-permissions-unsafe', '-p', 'true'], { env });
  assert.is(JSON.parse(json.stdout.split('\n')[0] as string).permission_mode, 'unsafe');
});

test('a 200 KiB script runs (it reaches the shell as a descriptor, not argv); the caller keeps its stdin for the command', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const lines = Array.from({ length: 5000 }, (_, i) => `v${i}='${'s'.repeat(40)}'`);
  const script = `${lines.join('\n')}\necho "end $v4999" "$0"`;
  assert.ok(Buffer.byteLength(script) > 200 * 1024);
  const result = await runCli(['exec', '-i', 'stream-json', '-o', 'stream-json', '-C', workspace], { env, input: prompt(script) });
  assert.is(result.code, 0, result.stdout.slice(0, 2000) + result.stderr);
  const [res] = ofType(decode(result.stdout), 'tool_result');
  assert.is(res!.output, `stdout:\nend ${'s'.repeat(40)} /proc/self/fd/4`);
  const file = join(workspace, 'script.sh');
  writeFileSync(file, `${script}\nread -r line; echo "stdin: $line"\n`);
  const text = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '-f', 'script.sh'], { env, input: 'from the caller\n' });
  assert.match(String(ofType(decode(text.stdout), 'tool_result')[0]!.output), 'stdin: from the caller');
});

test('70 MB of output: the command is not killed; head and tail of each stream with the marker, truncated true; a stream-json line carries 10 KiB of it', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const script = 'echo FIRST; head -c 70000000 /dev/zero | tr "\\0" x; echo; echo LAST; echo "the reason it failed" >&2; exit 3';
  const written = 6 + 70_000_000 + 1 + 5;
  // json carries all of tool_result.output: 32 KiB of stdout (head, marker, tail), then stderr and the exit code.
  const json = await runCli(['exec', '-o', 'json', '-C', workspace, '-p', script], { env, timeoutMs: 120_000 });
  assert.is(json.code, 3, json.stderr);
  const record = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).find((r) => r.type === 'tool_result')!;
  const whole = String(record.output);
  assert.is(record.truncated, true);
  assert.ok(whole.startsWith('stdout:\nFIRST\nxxx'));
  assert.match(whole, `\n[zero] output truncated: ${written - 32 * 1024} bytes omitted from the middle — `);
  assert.ok(whole.endsWith('xxx\nLAST\nstderr:\nthe reason it failed\nexit_code: 3'), whole.slice(-200));
  assert.is(Buffer.byteLength(whole), 'stdout:\n'.length + 32 * 1024 - 1 + '\nstderr:\nthe reason it failed\nexit_code: 3'.length, 'the stream budget holds the marker; its last newline is trimmed');

  const result = await runCli(['exec', '-o', 'stream-json', '-C', workspace, '--keep-output', '-p', script], { env, timeoutMs: 120_000 });
  assert.is(result.code, 3, result.stderr);
  const events = decode(result.stdout);
  const [res] = ofType(events, 'tool_result');
  const output = String(res!.output);
  assert.is(res!.truncated, true);
  assert.ok(output.startsWith('stdout:\nFIRST\nxxx'));
  assert.ok(output.endsWith('xxx\n[truncated]'), output.slice(-200));
  assert.is(Buffer.byteLength(output), 10 * 1024 + '\n[truncated]'.length);
  const meta = res!.meta as Record<string, string>;
  assert.ok(meta.exit_code === '3' && meta.truncated === 'true' && meta.raw_bytes === String(written + 21));
  assert.is(statSync(meta.spill_path!).size, written + 21, 'all of it was kept on request');
  rmSync(dirname(meta.spill_path!), { recursive: true });
  assert.equal(ofType(events, 'run_end')[0], { schemaVersion: 2, type: 'run_end', runId: events[0]!.runId, status: 'error', exitCode: 3 });
});

test('SIGINT: error code interrupted, run_end status interrupted, exit 130, nothing outlives it', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const marker = join(workspace, 'survived');
  const child = spawn(process.execPath, [CLI_PATH, 'exec', '-o', 'stream-json', '-C', workspace, '-p', `sleep 3; touch ${marker}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let sent = false;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (!sent && stdout.includes('"tool_call"')) {
      sent = true;
      setTimeout(() => child.kill('SIGINT'), 300);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const events = decode(stdout);
  assert.equal(events.map((e) => e.type), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'error', 'run_end']);
  assert.is(ofType(events, 'error')[0]!.code, 'interrupted');
  assert.equal(ofType(events, 'run_end')[0], { schemaVersion: 2, type: 'run_end', runId: events[0]!.runId, status: 'interrupted', exitCode: 130 });
  assert.is(code, 130);
  assert.is(stderr, '');
  await new Promise((resolve) => setTimeout(resolve, 3500));
  assert.not.ok(existsSync(marker), 'nothing in the sandbox outlived the interrupt');
});

test('usage errors in stream-json are error events with code usage_error, then run_end, exit 2', async () => {
  for (const extra of [['--bogus'], ['--timeout', 'abc'], ['one', 'two'], ['-C']]) {
    const result = await runCli(['exec', '-i', 'stream-json', '-o', 'stream-json', ...extra], { input: prompt('true') });
    assert.is(result.code, 2, extra.join(' '));
    const events = decode(result.stdout);
    assert.equal(events.map((e) => [e.type, e.code ?? e.status]), [['error', 'usage_error'], ['run_end', 'error']], extra.join(' '));
    assert.is(result.stderr, '');
  }
});

test('a reader that closes stdout early: exit 1, no stack trace, the sandbox is gone', async () => {
  if (!sandbox) return;
  const { workspace, env } = setup();
  const marker = join(workspace, 'after');
  // `yes` never ends by itself: only the closed pipe can end this run.
  const pipeline = `"${process.execPath}" "${CLI_PATH}" exec -o stream-json -C "${workspace}" -p 'yes; touch ${marker}' 2>"${workspace}/.stderr" | head -c 10; echo " $\{PIPESTATUS[0]}"`;
  const started = Date.now();
  const shell = spawnSync('/bin/bash', ['-c', pipeline], { env, encoding: 'utf8', timeout: 60_000 });
  assert.ok(Date.now() - started < 30_000, 'the run ended when its reader went away');
  assert.is(shell.stdout, '{"schemaVe 1\n');
  const stderr = spawnSync('cat', [join(workspace, '.stderr')], { encoding: 'utf8' }).stdout;
  assert.is(stderr, '', 'no stack trace, no EPIPE message');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.not.ok(existsSync(marker), 'the command was killed with its sandbox');
  const finite = spawnSync('/bin/bash', ['-c', `"${process.execPath}" "${CLI_PATH}" exec -o stream-json -C "${workspace}" -p 'seq 1 200000' | head -c 5; echo " $\{PIPESTATUS[0]}"`], { env, encoding: 'utf8', timeout: 60_000 });
  assert.is(finite.stdout, '{"sch 1\n');
  assert.is(finite.stderr, '');
});

test.after(removeTempDirs);

test.run();
