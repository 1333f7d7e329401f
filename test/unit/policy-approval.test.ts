// SPDX-License-Identifier: MIT
// applyApproval: what each answer records, and that approvals never unsandbox or outlive their scope.
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { applyApproval, availableApprovalAnswers, buildPermissionDecisionEvent, buildPermissionRequestEvent, buildPromptText } from '../../lib/policy/approval/approval.js';
import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { NO_BACKEND, stubAnalyzer, stubEngine } from '../fixtures/policy/stub-analyzer.js';

const CURL = 'curl https://example.com';

function setup() {
  return stubEngine(NO_BACKEND, { [CURL]: ['network'] });
}

test('allow on a network prompt widens the turn only; the cleanup takes it back', async () => {
  const s = await setup();
  try {
    const request = { toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command: CURL } };
    const first = s.engine.evaluate(request);
    assert.match(buildPromptText(request, first), 'scope:  network all outbound access');
    const outcome = applyApproval(s.engine, request, first, 'allow');
    assert.is(outcome.granted, true);
    assert.is(s.engine.effectivePolicy().network, 'allow');
    outcome.cleanup();
    assert.is(s.engine.effectivePolicy().network, 'deny');
    assert.is(s.engine.evaluate(request).action, 'prompt');
    const session = applyApproval(s.engine, request, first, 'allow_for_session');
    session.cleanup();
    assert.is(s.engine.effectivePolicy().network, 'deny', 'a session approval covers the command, not the whole policy');
    const again = s.engine.evaluate(request);
    assert.is(again.action, 'allow', 'the identical command is not asked about again this session');
    assert.equal(again.approvedRisks, ['network']);
  } finally {
    s.done();
  }
});

test('allow on an outside-path prompt grants that directory for the call', async () => {
  const s = await setup();
  try {
    const request = { toolName: 'write_file', sideEffect: 'write', permissionMode: 'ask', args: { path: join(s.outside, 'a.txt') } };
    const first = s.engine.evaluate(request);
    assert.equal(availableApprovalAnswers(request, first), ['allow', 'allow_for_session', 'always_allow', 'deny', 'cancel'], 'an outside-path prompt offers what the others offer');
    const outcome = applyApproval(s.engine, request, first, 'allow');
    assert.is(outcome.granted, true);
    assert.is(s.engine.evaluate(request).action, 'allow');
    outcome.cleanup();
    assert.is(s.engine.evaluate(request).action, 'prompt');
  } finally {
    s.done();
  }
});

test('always on an outside-path prompt stores a grant of that tool on that directory: the identical request is allowed in a later session, nothing wider', async () => {
  const s = await setup();
  try {
    const file = join(s.outside, 'a.txt');
    const request = { toolName: 'write_file', sideEffect: 'write', permissionMode: 'ask', args: { path: file } };
    const first = s.engine.evaluate(request);
    assert.is(first.action, 'prompt');
    assert.is(first.block?.code, 'outside_workspace');
    const always = applyApproval(s.engine, request, first, 'always_allow');
    assert.is(always.granted, true);
    assert.match(always.recorded, `write access to ${s.outside} for write_file persistently`);
    assert.equal(s.engine.list().map((g) => [g.toolName, g.decision, g.scopeKind, g.scope]), [['write_file', 'allow', 'dir', s.outside]]);
    // A later session: a new engine on the same grants file.
    const later = await createEngine({ workspaceRoot: s.ws, policy: {}, grantsPath: s.grantsPath, backend: NO_BACKEND, env: {}, analyzer: stubAnalyzer({}) });
    const again = later.evaluate(request);
    assert.is(again.action, 'allow', 'the identical request is not asked about again');
    assert.is(again.grantMatched, true);
    assert.is(later.evaluate({ ...request, args: { path: join(s.outside, 'sub', 'b.txt') } }).action, 'allow', 'below the granted directory');
    assert.is(later.evaluate({ ...request, toolName: 'edit_file' }).action, 'prompt', 'another tool is still asked about');
    assert.is(later.evaluate({ ...request, args: { path: join(dirname(s.outside), 'elsewhere.txt') } }).action, 'prompt', 'the parent directory is not covered');
    assert.is(later.evaluate({ ...request, args: { path: '../escape.txt' } }).action, 'deny', 'a relative escape stays a hard deny');
  } finally {
    s.done();
  }
});

test('deny, cancel and unknown answers grant nothing; always_allow stores a persistent grant for ordinary tools', async () => {
  const s = await setup();
  try {
    const request = { toolName: 'custom_tool', sideEffect: 'read', permissionMode: 'ask', args: { path: 'docs/a.md' } };
    const first = s.engine.evaluate(request);
    assert.is(first.action, 'prompt');
    assert.is(applyApproval(s.engine, request, first, 'deny').granted, false);
    assert.is(applyApproval(s.engine, request, first, 'cancel').cancelled, true);
    assert.is(applyApproval(s.engine, request, first, 'yes please').answer, 'deny');
    assert.is(s.engine.list().length, 0);
    const always = applyApproval(s.engine, request, first, 'always_allow');
    assert.is(always.granted, true);
    assert.equal(s.engine.list().map((g) => [g.toolName, g.scopeKind, g.scope]), [['custom_tool', 'file', join(s.engine.workspaceRoot, 'docs/a.md')]]);
    const ev = buildPermissionRequestEvent('call_1', request, first);
    assert.equal([ev.type, ev.id, ev.name, ev.action, ev.reason], ['permission_request', 'call_1', 'custom_tool', 'prompt', first.reason]);
    const dec = buildPermissionDecisionEvent('call_1', request, always.decision, { granted: true, reason: always.recorded });
    assert.equal([dec.type, dec.action, dec.permissionGranted, dec.decisionReason], ['permission_decision', 'allow', true, 'allowed persistently']);
  } finally {
    s.done();
  }
});

test('a hard deny stays denied whatever the answer', async () => {
  const s = await setup();
  try {
    const request = { toolName: 'write_file', sideEffect: 'write', permissionMode: 'ask', args: { path: '../escape.txt' } };
    const first = s.engine.evaluate(request);
    assert.is(first.action, 'deny');
    assert.is(applyApproval(s.engine, request, first, 'allow').granted, false);
  } finally {
    s.done();
  }
});

test.run();
