// SPDX-License-Identifier: MIT
// The session flow with a stand-in engine and runner: event order, permission mapping, exit codes, bounds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import type { RunOptions, SandboxCommand } from '../../lib/sandbox/options.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { StreamEmitter } from '../../lib/stream-json/emitter.js';
import { buildJsonDocument, createTextSink } from '../../lib/stream-json/formats.js';
import { OutputEventSchema, type OutputEvent } from '../../lib/stream-json/schema.js';
import { runStreamSession, STREAM_EXIT, type ShellDecision, type ShellRequest } from '../../lib/stream-json/session.js';

const WS = '/ws';

function recorder() {
  const events: OutputEvent[] = [];
  let finished = 0;
  const emitter = new StreamEmitter({ write: (e) => void events.push(e), finish: () => void finished++ }, 'run_test');
  return { emitter, events, finished: () => finished };
}

function result(overrides: Partial<RunResult> = {}): RunResult {
  return { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, durationMs: 5, backend: 'linux-native', network: 'deny', protectedPathViolations: [], prewarmed: false, ...overrides };
}

function fakeRunner(res: RunResult | Error) {
  const calls: Array<{ command: SandboxCommand; options: RunOptions }> = [];
  const runner = async (command: SandboxCommand, options: RunOptions) => {
    calls.push({ command, options });
    if (res instanceof Error) throw res;
    return res;
  };
  return { runner, calls };
}

const NETWORK_PROMPT: ShellDecision = { action: 'prompt', reason: 'network access requires approval', risk: { level: 'critical', categories: ['network', 'shell'], reason: 'critical risk: network, shell' } };
const OUTSIDE_DENY: ShellDecision = {
  action: 'deny',
  reason: '/etc/passwd is outside the workspace',
  risk: { level: 'high', categories: [], reason: 'high' },
  block: { code: 'outside_workspace', toolName: 'bash', action: 'deny', risk: { level: 'high' }, path: '/etc/passwd', reason: '/etc/passwd is outside the workspace', recoverable: false },
};

const types = (events: OutputEvent[]) => events.map((e) => e.type);
const validate = (events: OutputEvent[]) => events.forEach((e) => assert.ok(OutputEventSchema.safeParse(e).success, JSON.stringify(e)));

test('allow: run_start, tool_call, tool_result with sandbox facts, final, run_end; the engine saw the bash request', async () => {
  const { emitter, events, finished } = recorder();
  const { runner, calls } = fakeRunner(result({ stdout: 'hello\n' }));
  const seen: ShellRequest[] = [];
  const code = await runStreamSession({ emitter, command: ['/bin/bash', '-c', 'echo hello'], display: 'echo hello', workspace: WS, runOptions: { workspace: WS }, runner, evaluate: (r) => (seen.push(r), { action: 'allow', risk: { level: 'medium' }, autoAllowed: true }) });
  assert.is(code, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'tool_result', 'final', 'run_end']);
  assert.equal(seen, [{ toolName: 'bash', sideEffect: 'shell', permission: 'prompt', permissionMode: 'auto', args: { command: 'echo hello' }, workspaceRoot: WS }]);
  assert.equal(calls, [{ command: ['/bin/bash', '-c', 'echo hello'], options: { workspace: WS } }]);
  const res = events[2]!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.is(res.status, 'ok');
  assert.is(res.output, 'hello\n');
  assert.equal(res.meta, { sandbox_backend: 'linux-native', sandbox_wrapped: true, sandbox_network: 'deny', sandbox_enforcement_level: 'native', sandbox_cwd: WS, sandbox_exit_code: 0, sandbox_duration_ms: 5 });
  assert.equal(events[1], { schemaVersion: 2, type: 'tool_call', runId: 'run_test', id: 'call_1', name: 'bash', args: { command: 'echo hello' }, sideEffect: 'shell' });
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'success', exitCode: 0 });
  assert.is(finished(), 1);
});

test('prompt (headless): permission_request then a denied result; the runner is never called', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const code = await runStreamSession({ emitter, command: 'curl https://example.com', display: 'curl https://example.com', workspace: WS, runOptions: {}, runner, evaluate: () => NETWORK_PROMPT });
  assert.is(code, STREAM_EXIT.denied);
  assert.is(calls.length, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_request', 'tool_result', 'final', 'run_end']);
  const request = events[2]!;
  assert.equal(request, {
    schemaVersion: 2, type: 'permission_request', runId: 'run_test', id: 'call_1', name: 'bash', permission: 'prompt', permissionMode: 'auto', sideEffect: 'shell',
    reason: 'network access requires approval', risk: { level: 'critical', categories: ['network', 'shell'], reason: 'critical risk: network, shell' }, action: 'prompt',
  });
  const res = events[3]!;
  assert.ok(res.type === 'tool_result' && res.status === 'denied' && res.output.startsWith('Sandbox approval required: network access requires approval.'));
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'denied', exitCode: 77 });
});

test('deny: permission_decision with action deny and the block, then a denied result carrying the block', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const code = await runStreamSession({ emitter, command: 'cat > /etc/passwd', display: 'cat > /etc/passwd', workspace: WS, runOptions: {}, runner, evaluate: () => OUTSIDE_DENY });
  assert.is(code, 77);
  assert.is(calls.length, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const decision = events[2]!;
  assert.ok(decision.type === 'permission_decision');
  if (decision.type !== 'permission_decision') return;
  assert.is(decision.action, 'deny');
  assert.is(decision.permissionGranted, false);
  assert.equal(decision.block, OUTSIDE_DENY.block);
  assert.is(decision.risk?.categories, undefined, 'empty categories are omitted');
  const res = events[3]!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.equal(res.block, OUTSIDE_DENY.block);
  assert.is(res.output, 'Sandbox block [outside_workspace] for bash at /etc/passwd: /etc/passwd is outside the workspace');
});

test('a failing command: status error, its exit code in meta and run_end, stderr after stdout', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ exitCode: 3, stdout: 'partial', stderr: 'boom\n' }));
  const code = await runStreamSession({ emitter, command: 'false', display: 'false', workspace: WS, runOptions: {}, runner });
  assert.is(code, 3);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result' && res.status === 'error' && res.output === 'partial\nboom\n' && res.meta?.sandbox_exit_code === 3);
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'error', exitCode: 3 });
});

test('protected paths the command created are reported in meta and fail the run', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ protectedPathViolations: ['/ws/.zero'] }));
  const code = await runStreamSession({ emitter, command: 'mkdir .zero', display: 'mkdir .zero', workspace: WS, runOptions: {}, runner });
  assert.is(code, 1, 'not a success, as in zero-sandbox run');
  validate(events);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.equal(res.meta?.sandbox_protected_path_violations, ['/ws/.zero']);
  assert.is(res.status, 'error');
  assert.match(res.output, 'protected workspace metadata path /ws/.zero (removed)');
});

test('signal, timeout and not-found map to 128+N, 124 and 127', async () => {
  const cases: Array<[Partial<RunResult>, number]> = [
    [{ exitCode: null, signal: 'SIGKILL' }, 137],
    [{ exitCode: null, signal: 'SIGKILL', timedOut: true }, 124],
    [{ exitCode: null, execError: { code: 'ENOENT', errno: 2 } as RunResult['execError'] }, 127],
  ];
  for (const [overrides, expected] of cases) {
    const { emitter, events } = recorder();
    const { runner } = fakeRunner(result(overrides));
    assert.is(await runStreamSession({ emitter, command: ['nosuch'], display: 'nosuch', workspace: WS, runOptions: {}, runner }), expected);
    validate(events);
  }
});

test('output beyond the bound is cut with truncated: true, after redaction (no half secret survives)', async () => {
  const secret = 'sk-abcdefghijklmnopqrstuvwxyz0123';
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ stdout: `${'x'.repeat(10)} ${secret} ${'y'.repeat(100)}` }));
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner, maxOutputChars: 21 });
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.is(res.truncated, true);
  assert.is(res.output, 'xxxxxxxxxx [REDACTED]');
  assert.not.ok(JSON.stringify(events).includes('sk-abcdefghij'));
});

test('a sandbox that cannot be set up becomes an error result, an error event and run_end 125', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(new SandboxError('sandbox_unavailable', 'Landlock is missing'));
  const code = await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner });
  assert.is(code, 125);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'tool_result', 'error', 'run_end']);
  const error = events[3]!;
  assert.ok(error.type === 'error' && error.code === 'sandbox_unavailable' && error.message === 'Landlock is missing');
});

test('an engine that throws runs nothing and ends the run with an error', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const code = await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner, evaluate: () => { throw new SandboxError('grants_invalid', 'grants file is broken'); } });
  assert.is(calls.length, 0);
  assert.is(code, 125);
  assert.equal(types(events).slice(-2), ['error', 'run_end']);
});

test('nothing may follow run_end', async () => {
  const { emitter } = recorder();
  emitter.emit({ type: 'run_end', status: 'success', exitCode: 0 });
  assert.throws(() => emitter.emit({ type: 'final', text: '' }), /after run_end/);
});

test('json document: snake_case permission records and results', async () => {
  const { emitter, events } = recorder();
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, evaluate: () => OUTSIDE_DENY });
  const doc = buildJsonDocument(events);
  assert.is(doc.status, 'denied');
  assert.is(doc.exit_code, 77);
  assert.is(doc.cwd, WS);
  assert.equal(doc.permissions, [{
    type: 'permission_decision', tool_call_id: 'call_1', name: 'bash', action: 'deny', permission: 'prompt', permission_granted: false, permission_mode: 'auto', side_effect: 'shell',
    reason: OUTSIDE_DENY.reason!, decision_reason: OUTSIDE_DENY.reason!, risk: { level: 'high', reason: 'high' }, block: OUTSIDE_DENY.block!,
  }]);
  assert.equal(doc.tool_results.map((r) => r.status), ['denied']);
  assert.throws(() => buildJsonDocument(events.slice(0, -1)), /no run_end/);
});

test('text format: output on stdout, permission lines on stderr', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const emitter = new StreamEmitter(createTextSink({ stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, evaluate: () => NETWORK_PROMPT });
  assert.equal(out, []);
  assert.is(err[0], '[permission] bash prompt: network access requires approval\n');
  assert.ok(err[1]!.startsWith('zero-sandbox exec: Sandbox approval required'));
});

test.run();
