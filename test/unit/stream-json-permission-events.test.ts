// SPDX-License-Identifier: MIT
// Mapping the engine's permission events onto the protocol: typed bodies and the headless selection rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildPermissionDecisionEvent, buildPermissionRequestEvent } from '../../lib/policy/approval/approval.js';
import type { Decision, Request } from '../../lib/policy/schema.js';
import { buildPermissionBody, selectPermissionEvents } from '../../lib/stream-json/permission-events.js';

const REQUEST: Request = { toolName: 'bash', sideEffect: 'shell', permission: 'prompt', permissionMode: 'ask', args: { command: 'curl x' } };
const PROMPT: Decision = { action: 'prompt', reason: 'network access requires approval', risk: { level: 'critical', categories: ['network', 'shell'], reason: 'critical risk: network, shell' } };
const request = buildPermissionRequestEvent('call_1', REQUEST, PROMPT);
const headlessDeny = buildPermissionDecisionEvent('call_1', REQUEST, PROMPT, { granted: false, reason: 'no responder: approval required' });
const answeredAllow = buildPermissionDecisionEvent('call_1', REQUEST, PROMPT, { granted: true, reason: 'allowed once' });
const autoAllow = buildPermissionDecisionEvent('call_1', REQUEST, { action: 'allow', reason: 'sandboxed shell command allowed', risk: { level: 'medium', categories: ['shell'], reason: 'medium risk: shell' } }, { granted: false, allowed: true, reason: 'auto' });

test('the engine request event becomes a typed permission_request', () => {
  const body = buildPermissionBody(request);
  assert.equal(body, { type: 'permission_request', id: 'call_1', name: 'bash', permission: 'prompt', permissionMode: 'ask', sideEffect: 'shell', reason: 'network access requires approval', risk: { level: 'critical', categories: ['network', 'shell'] }, action: 'prompt' });
});

test('events missing id, name or action, unknown types and unknown actions are dropped', () => {
  assert.is(buildPermissionBody({ ...request, id: 3 }), undefined);
  assert.is(buildPermissionBody({ ...request, name: undefined }), undefined);
  assert.is(buildPermissionBody({ ...request, type: 'permission' }), undefined);
  assert.is(buildPermissionBody({ ...answeredAllow, action: 'maybe' }), undefined);
});

test('headless prompt: the request only, never the synthetic no-responder deny', () => {
  assert.equal(selectPermissionEvents([request, headlessDeny], 'approval_required').map((b) => b.type), ['permission_request']);
});

test('answered prompt: request and decision', () => {
  const shown = selectPermissionEvents([request, answeredAllow], 'allowed');
  assert.equal(shown.map((b) => [b.type, b.action]), [['permission_request', 'prompt'], ['permission_decision', 'allow']]);
});

test('an automatic allow is shown as Zero shows it (granted by nobody, with mode, side effect and reason); so is a hard deny', () => {
  assert.equal(selectPermissionEvents([autoAllow], 'allowed'), [{
    type: 'permission_decision', id: 'call_1', name: 'bash', permission: 'prompt', permissionMode: 'ask', sideEffect: 'shell', reason: 'sandboxed shell command allowed',
    risk: { level: 'medium', categories: ['shell'] }, action: 'allow', permissionGranted: false, decisionReason: 'auto',
  }]);
  const deny = buildPermissionDecisionEvent('call_1', REQUEST, { action: 'deny', reason: 'no', risk: PROMPT.risk }, { granted: false, reason: 'no' });
  assert.equal(selectPermissionEvents([deny], 'denied').map((b) => [b.type, b.action, b.type === 'permission_decision' && b.permissionGranted]), [['permission_decision', 'deny', false]]);
});

test.run();
