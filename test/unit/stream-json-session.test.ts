// SPDX-License-Identifier: MIT
// The session flow with a stand-in authorizer (emitting the engine's own event shapes) and runner: order, mapping, exit codes, bounds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import type { RunOptions, SandboxCommand } from '../../lib/sandbox/options.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { StreamEmitter } from '../../lib/stream-json/emitter.js';
import { capStreamJsonOutput, createSink, createTextSink, STREAM_JSON_OUTPUT_LIMIT } from '../../lib/stream-json/formats.js';
import { redactString } from '../../lib/redact.js';
import { protectedPathDenial } from '../../lib/sandbox/denials.js';
import { OutputEventSchema, type OutputEvent } from '../../lib/stream-json/schema.js';
import { buildPermissionDecisionEvent, buildPermissionRequestEvent } from '../../lib/policy/approval/approval.js';
import { formatBlockError } from '../../lib/policy/approval/authorize.js';
import type { Decision, Request } from '../../lib/policy/schema.js';
import { buildStreamOutput, DEFAULT_MAX_OUTPUT_BYTES, formatToolOutput, runStreamSession, STREAM_EXIT, type ShellAuthorizer } from '../../lib/stream-json/session.js';

const WS = '/ws';

function recorder() {
  const events: OutputEvent[] = [];
  let finished = 0;
  const emitter = new StreamEmitter({ write: (e) => void events.push(e), finish: () => void finished++ }, 'run_test');
  return { emitter, events, finished: () => finished };
}

function result(overrides: Partial<RunResult> = {}): RunResult {
  const outputBytes = { stdout: Buffer.byteLength(overrides.stdout ?? ''), stderr: Buffer.byteLength(overrides.stderr ?? '') };
  return { exitCode: 0, signal: null, stdout: '', stderr: '', truncated: false, outputBytes, denials: [], timedOut: false, aborted: false, durationMs: 5, backend: 'linux-native', network: 'deny', protectedPathViolations: [], prewarmed: false, scrubbedEnv: [], ...overrides };
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

const REQUEST: Request = { toolName: 'bash', sideEffect: 'shell', permission: 'prompt', permissionMode: 'ask', args: { command: 'x' } };
const AUTO_ALLOW: Decision = { action: 'allow', reason: 'auto-allowed: sandbox is active for this shell command', risk: { level: 'medium', categories: ['shell'], reason: 'medium risk: shell' }, autoAllowed: true };
const NETWORK_PROMPT: Decision = { action: 'prompt', reason: 'network access requires approval', risk: { level: 'critical', categories: ['network', 'shell'], reason: 'critical risk: network, shell' } };
const OUTSIDE_DENY: Decision = {
  action: 'deny',
  reason: '/etc/passwd is outside the workspace',
  risk: { level: 'high', categories: [], reason: 'high' },
  block: { code: 'outside_workspace', toolName: 'bash', action: 'deny', risk: { level: 'high', categories: [], reason: 'high' }, path: '/etc/passwd', reason: '/etc/passwd is outside the workspace', recoverable: false },
};

/** An authorizer that reports what the engine's approval flow reports for `decision`, and ends the way it does. */
function fakeAuthorizer(decision: Decision, answer?: 'allow' | 'deny', extra: Partial<RunOptions> = {}) {
  const seen: Array<{ command: SandboxCommand; options: RunOptions }> = [];
  let cleanups = 0;
  const authorize: ShellAuthorizer = async (command, options, onEvent) => {
    seen.push({ command, options });
    if (decision.action === 'allow') {
      onEvent(buildPermissionDecisionEvent('call_1', REQUEST, decision, { granted: true, reason: decision.reason ?? 'allowed' }));
    } else if (decision.action === 'deny') {
      onEvent(buildPermissionDecisionEvent('call_1', REQUEST, decision, { granted: false, reason: decision.reason ?? 'denied' }));
      throw new SandboxError('permission_denied', formatBlockError(decision, 'bash'));
    } else {
      onEvent(buildPermissionRequestEvent('call_1', REQUEST, decision));
      if (answer === undefined) {
        onEvent(buildPermissionDecisionEvent('call_1', REQUEST, decision, { granted: false, reason: 'no responder: approval required' }));
        throw new SandboxError('approval_required', `Sandbox approval required for bash: ${decision.reason}`);
      }
      onEvent(buildPermissionDecisionEvent('call_1', REQUEST, decision, { granted: answer === 'allow', reason: `answered ${answer}` }));
      if (answer === 'deny') throw new SandboxError('permission_denied', `Permission denied for bash: ${decision.reason}`);
    }
    return { options: { ...options, ...extra }, cleanup: () => void cleanups++ };
  };
  return { authorize, seen, cleanups: () => cleanups };
}

const types = (events: OutputEvent[]) => events.map((e) => e.type);
const validate = (events: OutputEvent[]) => events.forEach((e) => assert.ok(OutputEventSchema.safeParse(e).success, JSON.stringify(e)));

test('allow: run_start, tool_call, tool_result with sandbox facts, final, run_end; runs with the approved options', async () => {
  const { emitter, events, finished } = recorder();
  const { runner, calls } = fakeRunner(result({ stdout: 'hello\n' }));
  const auth = fakeAuthorizer(AUTO_ALLOW, undefined, { allowWrite: ['/extra'], network: 'deny' });
  const code = await runStreamSession({ emitter, command: ['/bin/bash', '-c', 'echo hello'], display: 'echo hello', workspace: WS, runOptions: { workspace: WS }, runner, authorize: auth.authorize });
  assert.is(code, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end'], 'an automatic allow is a decision, as Zero shows it');
  const allowed = events[2]!;
  assert.ok(allowed.type === 'permission_decision' && allowed.action === 'allow');
  assert.equal(auth.seen, [{ command: ['/bin/bash', '-c', 'echo hello'], options: { workspace: WS } }]);
  assert.equal(calls, [{ command: ['/bin/bash', '-c', 'echo hello'], options: { workspace: WS, allowWrite: ['/extra'], network: 'deny', maxBuffer: 4 * DEFAULT_MAX_OUTPUT_BYTES } }]);
  assert.is(auth.cleanups(), 1, 'turn approvals end when the command has finished');
  const res = events[3]!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.is(res.status, 'ok');
  assert.is(res.output, 'stdout:\nhello');
  assert.is(res.name, 'bash');
  assert.equal(res.meta, {
    exit_code: '0', sandbox_wrapped: 'true', sandbox_backend: 'linux-native', sandbox_target_backend: 'linux-native', sandbox_enforcement_level: 'native',
    sandbox_requires_platform: 'true', sandbox_cwd: WS, sandbox_network: 'deny', sandbox_duration_ms: '5', raw_bytes: '6', emitted_bytes: '6', estimated_tokens: '2',
  });
  assert.equal(events[4], { schemaVersion: 2, type: 'final', runId: 'run_test', text: 'hello\n' }, 'final is the output as a terminal shows it');
  assert.equal(events[1], { schemaVersion: 2, type: 'tool_call', runId: 'run_test', id: 'call_1', name: 'bash', args: { command: 'echo hello' }, sideEffect: 'shell' });
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'success', exitCode: 0 });
  assert.is(finished(), 1);
});

test('prompt (headless): permission_request then an error result (permission_action prompt); no synthetic decision; the runner is never called', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const code = await runStreamSession({ emitter, command: 'curl https://example.com', display: 'curl https://example.com', workspace: WS, runOptions: {}, runner, authorize: fakeAuthorizer(NETWORK_PROMPT).authorize });
  assert.is(code, STREAM_EXIT.denied);
  assert.is(calls.length, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_request', 'tool_result', 'final', 'run_end']);
  const request = events[2]!;
  assert.ok(request.type === 'permission_request');
  if (request.type !== 'permission_request') return;
  assert.ok(request.id === 'call_1' && request.name === 'bash' && request.action === 'prompt' && request.permission === 'prompt' && request.sideEffect === 'shell');
  assert.is(request.reason, 'network access requires approval');
  assert.equal(request.risk?.categories, ['network', 'shell']);
  const res = events[3]!;
  assert.ok(res.type === 'tool_result' && res.status === 'error');
  if (res.type !== 'tool_result') return;
  assert.is(res.output, 'Sandbox approval required for bash: network access requires approval; there is no approval responder in headless mode. The command did not run.');
  assert.is(res.meta?.permission_action, 'prompt');
  assert.equal(JSON.parse(res.meta!.sandbox_denials!), [{ capability: { kind: 'external_network' }, source: 'approval', reason: 'Sandbox approval required for bash: network access requires approval', recoverable: true, nextAction: 'request_approval' }]);
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'error', exitCode: 1 });
});

test('prompt answered (e.g. --network allow): request and decision are both shown, then the run', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result({ network: 'allow' }));
  const code = await runStreamSession({ emitter, command: 'curl x', display: 'curl x', workspace: WS, runOptions: { network: 'allow' }, runner, authorize: fakeAuthorizer(NETWORK_PROMPT, 'allow').authorize });
  assert.is(code, 0);
  assert.is(calls.length, 1);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_request', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const decision = events[3]!;
  assert.ok(decision.type === 'permission_decision' && decision.action === 'allow' && decision.permissionGranted && decision.decisionReason === 'answered allow');
});

test('deny: permission_decision with action deny and the block, then an error result carrying the block and permission_action deny', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const code = await runStreamSession({ emitter, command: 'cat > /etc/passwd', display: 'cat > /etc/passwd', workspace: WS, runOptions: {}, runner, authorize: fakeAuthorizer(OUTSIDE_DENY).authorize });
  assert.is(code, 1);
  assert.is(calls.length, 0);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'permission_decision', 'tool_result', 'final', 'run_end']);
  const decision = events[2]!;
  assert.ok(decision.type === 'permission_decision');
  if (decision.type !== 'permission_decision') return;
  assert.is(decision.action, 'deny');
  assert.is(decision.permissionGranted, false);
  const block = { code: 'outside_workspace', toolName: 'bash', action: 'deny', risk: { level: 'high', reason: 'high' }, path: '/etc/passwd', reason: '/etc/passwd is outside the workspace', recoverable: false };
  assert.equal(decision.block, block, 'empty categories are left out of the protocol risk');
  const res = events[3]!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.equal(res.block, block);
  assert.is(res.status, 'error');
  assert.is(res.meta?.permission_action, 'deny');
  assert.is(res.output, 'Sandbox block [outside_workspace] for bash at /etc/passwd: /etc/passwd is outside the workspace. The command did not run.');
});

test('a failing command: status error, its exit code in meta and run_end; output laid out as stdout:, stderr:, exit_code:', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ exitCode: 3, stdout: 'partial', stderr: 'boom\n\n' }));
  const code = await runStreamSession({ emitter, command: 'false', display: 'false', workspace: WS, runOptions: {}, runner });
  assert.is(code, 3);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result' && res.status === 'error' && res.meta?.exit_code === '3');
  if (res.type !== 'tool_result') return;
  assert.is(res.output, 'stdout:\npartial\nstderr:\nboom\nexit_code: 3');
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'error', exitCode: 3 });
});

test('protected paths the command created are reported in meta, as a structured denial, and fail the run', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ protectedPathViolations: ['/ws/.zero'], denials: [protectedPathDenial('/ws/.zero')] }));
  const code = await runStreamSession({ emitter, command: 'mkdir .zero', display: 'mkdir .zero', workspace: WS, runOptions: {}, runner });
  assert.is(code, 1, 'not a success, as in zero-sandbox run');
  validate(events);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.is(res.meta?.sandbox_protected_path_violations, '/ws/.zero');
  assert.is(res.meta?.sandbox_likely_denied, 'true');
  assert.is(res.meta?.sandbox_denial_kind, 'sandbox');
  assert.is(res.meta?.sandbox_denial_capability, 'protected_metadata');
  assert.is(res.meta?.sandbox_denial_scope, '/ws/.zero');
  assert.match(res.meta!.sandbox_denial_reason!, '/ws/.zero');
  assert.is(res.status, 'error');
  assert.match(res.output!, 'protected workspace metadata path /ws/.zero (removed)');
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

test('output beyond the bound keeps head and tail around the marker, after redaction (no half secret survives)', async () => {
  const secret = 'sk-abcdefghijklmnopqrstuvwxyz0123';
  const { emitter, events } = recorder();
  const stdout = `${'x'.repeat(200)} ${secret} ${'y'.repeat(500)} ${secret} ${'z'.repeat(200)}\n`;
  const { runner } = fakeRunner(result({ stdout, outputBytes: { stdout: stdout.length, stderr: 0 } }));
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner, maxOutputBytes: 512 });
  validate(events);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result');
  if (res.type !== 'tool_result') return;
  assert.is(res.truncated, true);
  assert.is(res.redacted, true);
  assert.is(res.meta?.truncated, 'true');
  assert.ok(res.output!.startsWith(`stdout:\n${'x'.repeat(150)}`), res.output);
  assert.ok(res.output!.endsWith(`${'z'.repeat(150)}\n[zero] 2 likely secret(s) redacted from this output.`), res.output);
  // The budget holds the marker too; N counts the bytes over the budget (after redaction).
  const redactedSize = Buffer.byteLength(redactString(stdout));
  assert.match(res.output!, `\n[zero] output truncated: ${redactedSize - 512} bytes omitted from the middle — `);
  assert.is(Buffer.byteLength(buildStreamOutput(stdout, stdout.length, 512).output), 512, 'the shown stream is exactly the budget');
  assert.not.ok(JSON.stringify(events).includes('sk-abcdefghij'));
});

test('cuts of multi-byte output fall on character boundaries: no lone surrogate', () => {
  for (const max of [300, 301, 302, 303]) {
    const text = `a${'😀'.repeat(200)}`;
    const shown = buildStreamOutput(text, Buffer.byteLength(text), max);
    assert.ok(shown.truncated);
    const kept = shown.output.replace(/\n\[zero\] output truncated: [^\n]*\n/, '');
    assert.ok(/^a(?:😀)+$/u.test(kept), `max ${max}`);
    assert.not.ok(shown.output.includes('\uFFFD'));
  }
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

test('an aborted run (a signal) ends with error code interrupted, run_end status interrupted, exit 130', async () => {
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(new SandboxError('aborted', 'the sandboxed command was aborted'));
  const code = await runStreamSession({ emitter, command: 'sleep 9', display: 'sleep 9', workspace: WS, runOptions: {}, runner });
  assert.is(code, 130);
  validate(events);
  assert.equal(types(events), ['run_start', 'tool_call', 'tool_result', 'error', 'run_end']);
  const error = events[3]!;
  assert.ok(error.type === 'error' && error.code === 'interrupted');
  assert.equal(events.at(-1), { schemaVersion: 2, type: 'run_end', runId: 'run_test', status: 'interrupted', exitCode: 130 });
});

test('an authorizer failing for another reason runs nothing and ends the run with an error', async () => {
  const { emitter, events } = recorder();
  const { runner, calls } = fakeRunner(result());
  const authorize: ShellAuthorizer = async () => {
    throw new SandboxError('sandbox_unavailable', 'Landlock is missing');
  };
  const code = await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner, authorize });
  assert.is(calls.length, 0);
  assert.is(code, 125);
  assert.equal(types(events).slice(-2), ['error', 'run_end']);
});

test('nothing may follow run_end', async () => {
  const { emitter } = recorder();
  emitter.emit({ type: 'run_end', status: 'success', exitCode: 0 });
  assert.throws(() => emitter.emit({ type: 'final', text: '' }), /after run_end/);
});

test('json format: snake_case records, one per line, ending with done', async () => {
  const lines: string[] = [];
  const emitter = new StreamEmitter(createSink('json', { stdout: (t) => void lines.push(t), stderr: () => undefined }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, authorize: fakeAuthorizer(OUTSIDE_DENY).authorize });
  assert.ok(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n')));
  const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(records.map((r) => r.type), ['run_start', 'tool_call', 'permission', 'tool_result', 'final', 'done']);
  assert.equal(records[1], { type: 'tool_call', id: 'call_1', name: 'bash', arguments: '{"command":"x"}' });
  assert.equal(records[2], {
    type: 'permission', tool_call_id: 'call_1', name: 'bash', action: 'deny', permission: 'prompt', permission_granted: false, permission_mode: 'ask',
    autonomy: '', side_effect: 'shell', reason: OUTSIDE_DENY.reason!, decision_reason: OUTSIDE_DENY.reason!, risk: { level: 'high' }, block: { ...OUTSIDE_DENY.block!, risk: { level: 'high', reason: 'high' } },
  });
  assert.equal(Object.keys(records[3]!).sort(), ['meta', 'name', 'output', 'status', 'tool_call_id', 'type']);
  assert.is(records[3]!.status, 'error');
  assert.equal(records.at(-1), { type: 'done', exit_code: 1 });
});

test('text format: output on stdout, permission lines on stderr', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const emitter = new StreamEmitter(createTextSink({ stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, authorize: fakeAuthorizer(NETWORK_PROMPT).authorize });
  assert.equal(out, []);
  assert.is(err[0], '[permission] bash prompt: network access requires approval\n');
  assert.ok(err[1]!.startsWith('zero-sandbox exec: Sandbox approval required'));
});

test('text format: a deny names the decision reason of the engine', async () => {
  const err: string[] = [];
  const emitter = new StreamEmitter(createTextSink({ stdout: () => undefined, stderr: (t) => void err.push(t) }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, authorize: fakeAuthorizer(OUTSIDE_DENY).authorize });
  assert.is(err[0], '[permission] bash deny: /etc/passwd is outside the workspace\n');
  // An automatic allow is quiet in text (the stream formats show it as a decision).
  const quiet: string[] = [];
  const allowing = new StreamEmitter(createTextSink({ stdout: () => undefined, stderr: (t) => void quiet.push(t) }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter: allowing, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result()).runner, authorize: fakeAuthorizer(AUTO_ALLOW).authorize });
  assert.equal(quiet, []);
});

test('output layout: nothing printed, only an exit code, only stderr, a timeout with partial output', async () => {
  assert.is(formatToolOutput('', '', 0), 'Command completed with no output.');
  assert.is(formatToolOutput('\r\n', '', 0), 'Command completed with no output.');
  assert.is(formatToolOutput('', '', 2), 'exit_code: 2');
  assert.is(formatToolOutput('', 'warn\n', 0), 'stderr:\nwarn');
  assert.is(formatToolOutput('a\n\nb\n', 'c', 1), 'stdout:\na\n\nb\nstderr:\nc\nexit_code: 1');
  const { emitter, events } = recorder();
  const { runner } = fakeRunner(result({ exitCode: null, signal: 'SIGKILL', timedOut: true, stdout: 'started\n' }));
  assert.is(await runStreamSession({ emitter, command: 'sleep 9', display: 'sleep 9', workspace: WS, runOptions: { timeoutMs: 1500 }, runner }), 124);
  const res = events.find((e) => e.type === 'tool_result')!;
  assert.ok(res.type === 'tool_result' && res.status === 'error');
  if (res.type !== 'tool_result') return;
  assert.is(res.output, 'Error: Command timed out after 1500ms.\nstdout:\nstarted\nexit_code: 124');
  assert.is(res.meta?.sandbox_timed_out, 'true');
});

test('a stream-json line carries at most 10 KiB of tool_result.output, cut on a character boundary, then \\n[truncated]; json carries all', async () => {
  const stdout = `${'é'.repeat(9000)}TAIL`;
  const lines: Record<string, string[]> = { 'stream-json': [], json: [] };
  for (const format of ['stream-json', 'json'] as const) {
    const emitter = new StreamEmitter(createSink(format, { stdout: (t) => void lines[format]!.push(t), stderr: () => undefined }, 'x'), 'run_t');
    await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result({ stdout })).runner });
  }
  const event = lines['stream-json']!.map((l) => JSON.parse(l) as OutputEvent).find((e) => e.type === 'tool_result')!;
  assert.ok(event.type === 'tool_result');
  if (event.type !== 'tool_result') return;
  assert.is(event.truncated, true);
  assert.ok(event.output!.endsWith('\n[truncated]'));
  const kept = event.output!.slice(0, -'\n[truncated]'.length);
  assert.ok(Buffer.byteLength(kept) <= STREAM_JSON_OUTPUT_LIMIT && Buffer.byteLength(kept) > STREAM_JSON_OUTPUT_LIMIT - 2);
  assert.ok(/^stdout:\n(?:é)+$/u.test(kept), 'whole characters only');
  const record = lines.json!.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r.type === 'tool_result')!;
  assert.is(record.output, `stdout:\n${stdout}`);
  assert.is(record.truncated, undefined);
  const small = { schemaVersion: 2 as const, type: 'tool_result' as const, runId: 'r', id: 'c', status: 'ok' as const, output: 'x'.repeat(STREAM_JSON_OUTPUT_LIMIT), truncated: false };
  assert.is(capStreamJsonOutput(small), small, 'exactly the limit is carried whole');
});

test('text format: the command output on stdout as a terminal shows it', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const emitter = new StreamEmitter(createTextSink({ stdout: (t) => void out.push(t), stderr: (t) => void err.push(t) }, 'zero-sandbox exec'), 'run_t');
  await runStreamSession({ emitter, command: 'x', display: 'x', workspace: WS, runOptions: {}, runner: fakeRunner(result({ stdout: 'one\n', stderr: 'two\n', exitCode: 1 })).runner });
  assert.equal(out, ['one\ntwo\n']);
  assert.equal(err, []);
});

test.run();
