// SPDX-License-Identifier: MIT
// "Once / session / always / deny" mean the same for every prompt kind: a session or always answer
// to a network or destructive prompt is honoured by the identical next request, is bound to that
// exact command (never a wider prefix), and an always-answer to a network prompt is persisted.
// Approvals never unsandbox: the decision only lets the command run in the sandbox.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { applyApproval } from '../../lib/policy/approval/approval.js';
import { authorizeCommand } from '../../lib/policy/approval/authorize.js';
import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { NATIVE_BACKEND, stubEngine } from '../fixtures/policy/stub-analyzer.js';

const RM = 'rm -rf ./build';
const RM_WIDER = 'rm -rf ./build ~';
const CURL = 'curl https://example.com/f';
const CURL_OTHER = 'curl https://example.org/f';

function setup() {
  return stubEngine(NATIVE_BACKEND, { [RM]: ['destructive'], [RM_WIDER]: ['destructive'], [CURL]: ['network'], [CURL_OTHER]: ['network'] });
}

const shell = (command: string) => ({ toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command } });

test('a session answer to a destructive prompt is honoured by the identical next request only', async () => {
  const s = await setup();
  try {
    const first = s.engine.evaluate(shell(RM));
    assert.is(first.action, 'prompt');
    const outcome = applyApproval(s.engine, shell(RM), first, 'allow_for_session');
    assert.is(outcome.granted, true);
    outcome.cleanup();
    const again = s.engine.evaluate(shell(RM));
    assert.is(again.action, 'allow');
    assert.match(again.reason ?? '', 'still runs sandboxed');
    assert.is(s.engine.evaluate(shell(RM_WIDER)).action, 'prompt', 'a longer command with the same prefix is asked about');
  } finally {
    s.done();
  }
});

test('always on a destructive or network prompt is persisted for the exact command and honoured by a new engine', async () => {
  const s = await setup();
  try {
    for (const command of [RM, CURL]) {
      const first = s.engine.evaluate(shell(command));
      applyApproval(s.engine, shell(command), first, 'always_allow').cleanup();
    }
    const file = JSON.parse(readFileSync(s.engine.grantsPath, 'utf8'));
    assert.equal(file.approvedCommands.bash.map((a: { command: string; risks: string[] }) => [a.command, a.risks]), [[RM, ['destructive']], [CURL, ['network']]]);
    const fresh = await createEngine({ workspaceRoot: s.ws, policy: {}, grantsPath: s.engine.grantsPath, backend: NATIVE_BACKEND, env: {}, analyzer: (s.engine as unknown as { analyzer: never }).analyzer });
    assert.is(fresh.evaluate(shell(RM)).action, 'allow');
    const net = fresh.evaluate(shell(CURL));
    assert.is(net.action, 'allow');
    assert.equal(net.approvedRisks, ['network']);
    assert.is(fresh.evaluate(shell(CURL_OTHER)).action, 'prompt', 'another URL is another command');
    assert.is(fresh.effectivePolicy().network, 'deny', 'the policy itself is not widened');
  } finally {
    s.done();
  }
});

test('an approved network command runs with network allowed for that call only', async () => {
  const s = await setup();
  try {
    await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => 'allow_for_session' }).then((a) => a.cleanup());
    let asked = false;
    const again = await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => ((asked = true), 'deny') });
    assert.not.ok(asked, 'the identical request is not asked about again');
    assert.is(again.network, 'allow');
    again.cleanup();
    assert.is(s.engine.effectivePolicy().network, 'deny');
    await authorizeCommand(CURL_OTHER, { engine: s.engine }).then(
      () => assert.unreachable('another network command must still need approval'),
      (error) => assert.is(error.code, 'approval_required'),
    );
  } finally {
    s.done();
  }
});

test('a plain prefix grant or a tool-wide bash grant does not answer a network or destructive prompt', async () => {
  const s = await setup();
  try {
    s.engine.grantCommandPrefix('bash', ['curl']);
    s.engine.grant({ toolName: 'bash', decision: 'allow' });
    assert.is(s.engine.evaluate(shell(CURL)).action, 'prompt');
    assert.is(s.engine.evaluate(shell(RM)).action, 'prompt');
  } finally {
    s.done();
  }
});

test('an unknown answer from the responder is an error, not a denial', async () => {
  const s = await setup();
  try {
    await authorizeCommand(CURL, { engine: s.engine, onPermissionRequest: () => 'yes' as never }).then(
      () => assert.unreachable('an unknown answer must reject'),
      (error) => {
        assert.is(error.code, 'invalid_argument');
        assert.match(error.message, /returned "yes"; accepted: allow, allow_for_session, always_allow, deny, cancel/);
      },
    );
  } finally {
    s.done();
  }
});

test.run();
