// SPDX-License-Identifier: MIT
// authorizeCommand: the prompt/approval flow in front of a sandboxed command, and the terminal prompt.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { authorizeCommand } from '../../lib/policy/approval/authorize.js';
import { askOnTerminal, buildTerminalQuestion, parseTerminalAnswer } from '../../lib/policy/approval/terminal-prompt.js';
import { NATIVE_BACKEND, stubEngine } from '../fixtures/policy/stub-analyzer.js';

const CURL = 'curl https://example.com';
function setup() {
  return stubEngine(NATIVE_BACKEND, { [CURL]: ['network'] });
}

const code = (expected: string) => (e: unknown) => e instanceof SandboxError && e.code === expected;

test('an auto-allowed command resolves with network deny and reports the decision', async () => {
  const s = await setup();
  try {
    const events: Array<Record<string, unknown>> = [];
    const auth = await authorizeCommand('echo hi', { engine: s.engine, onPermissionEvent: (e) => events.push(e) });
    assert.is(auth.network, 'deny');
    assert.equal(events.map((e) => [e.type, e.action]), [['permission_decision', 'allow']]);
  } finally {
    s.done();
  }
});

test('headless: a prompt is denied (approval_required) and the permission_request event is still emitted', async () => {
  const s = await setup();
  try {
    const events: Array<Record<string, unknown>> = [];
    try {
      await authorizeCommand(CURL, { engine: s.engine, onPermissionEvent: (e) => events.push(e) });
      assert.unreachable('must reject');
    } catch (error) {
      assert.ok(code('approval_required')(error), String(error));
      assert.match((error as Error).message, 'Sandbox approval required for bash: network access requires approval');
    }
    assert.equal(events.map((e) => [e.type, e.action]), [['permission_request', 'prompt'], ['permission_decision', 'deny']]);
    assert.is(events[0]?.reason, 'network access requires approval');
  } finally {
    s.done();
  }
});

test('an approved network prompt runs with network allow for that call only, or for the session', async () => {
  const s = await setup();
  try {
    let asked: string | undefined;
    const once = await authorizeCommand(CURL, {
      engine: s.engine,
      onPermissionRequest: (prompt) => {
        asked = prompt.scope;
        assert.ok(prompt.availableDecisions.includes('allow_for_session'));
        return 'allow';
      },
    });
    assert.is(asked, 'network all outbound access');
    assert.is(once.network, 'allow');
    once.cleanup();
    assert.is(s.engine.effectivePolicy().network, 'deny');
    const session = await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => 'allow_for_session' });
    session.cleanup();
    assert.is(session.network, 'allow');
    const again = await authorizeCommand(CURL, { engine: s.engine });
    assert.is(again.network, 'allow', 'no prompt needed any more this session');
  } finally {
    s.done();
  }
});

test('deny and cancel answers reject; hard denies reject with the block text without asking', async () => {
  const s = await setup();
  try {
    await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => 'deny' }).then(
      () => assert.unreachable('deny must reject'),
      (e) => assert.ok(code('permission_denied')(e)),
    );
    await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => 'cancel' }).then(
      () => assert.unreachable('cancel must reject'),
      (e) => assert.ok(code('aborted')(e)),
    );
    let asked = false;
    await authorizeCommand('ls', { engine: s.engine, cwd: '/', onPermissionRequest: () => ((asked = true), 'allow') }).then(
      () => assert.unreachable('outside cwd must reject'),
      (e) => {
        assert.ok(code('permission_denied')(e));
        assert.match((e as Error).message, /^Sandbox block \[outside_workspace\] for bash at \/: /);
      },
    );
    assert.is(asked, false);
  } finally {
    s.done();
  }
});

test('terminal answers: keys and words map to the offered answers only; no terminal means deny', () => {
  const offered = ['allow', 'allow_for_session', 'deny', 'cancel'] as const;
  assert.is(parseTerminalAnswer('o', [...offered]), 'allow');
  assert.is(parseTerminalAnswer(' Session ', [...offered]), 'allow_for_session');
  assert.is(parseTerminalAnswer('a', [...offered]), undefined, 'always is not offered here');
  assert.is(parseTerminalAnswer('d', [...offered]), 'deny');
  assert.is(parseTerminalAnswer('yes', [...offered]), undefined);
  assert.is(buildTerminalQuestion([...offered]), 'Allow? [o]nce, [s]ession, [d]eny: ');
  const prompt = { request: { toolName: 'bash' }, decision: { action: 'prompt' as const, risk: { level: 'high' as const, categories: [], reason: 'high' } }, scope: '', text: '', availableDecisions: ['allow' as const] };
  assert.is(askOnTerminal(prompt, join(tmpdir(), 'no-such-tty-zs')), 'deny');
});

test.run();
