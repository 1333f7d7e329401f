// SPDX-License-Identifier: MIT
// Approvals stick through runSandboxed with the real analyzer: a session answer to a destructive
// prompt and an always answer to a network prompt are honoured by the identical next run without
// asking, a different command is still asked about, and every approved run stays sandboxed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import type { PermissionPrompt } from '../../lib/policy/approval/authorize.js';
import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, rejection, sandboxTest } from '../helpers/sandbox.js';

sandboxTest('allow_for_session on rm -rf ./build is not asked again for the identical run; a wider one is', async () => {
  const t = makeTree();
  try {
    const engine = await createEngine({ workspaceRoot: t.ws, grantsPath: join(t.base, 'grants.json'), configPaths: false });
    const asked: string[] = [];
    const responder = (answer: 'allow_for_session' | 'deny') => (prompt: PermissionPrompt) => {
      asked.push(String(prompt.request.args?.command));
      return answer;
    };
    mkdirSync(join(t.ws, 'build'));
    await runSandboxed('rm -rf ./build', { workspace: t.ws, engine, onPermissionRequest: responder('allow_for_session') });
    assert.not.ok(existsSync(join(t.ws, 'build')));
    mkdirSync(join(t.ws, 'build'));
    const again = await runSandboxed('rm -rf ./build', { workspace: t.ws, engine, onPermissionRequest: responder('deny') });
    assert.is(again.exitCode, 0);
    assert.equal(asked, ['rm -rf ./build'], 'the identical command was not asked about again');
    writeFileSync(join(t.outside, 'keep'), 'x');
    const wider = await rejection(runSandboxed(`rm -rf ./build ${t.outside}`, { workspace: t.ws, engine, onPermissionRequest: responder('deny') }));
    assert.is(wider.code, 'permission_denied');
    assert.equal(asked, ['rm -rf ./build', `rm -rf ./build ${t.outside}`]);
    assert.ok(existsSync(join(t.outside, 'keep')));
  } finally {
    t.cleanup();
  }
});

sandboxTest('always_allow on a network prompt is persisted and honoured by a new engine, with network for that call', async () => {
  const t = makeTree();
  try {
    const grantsPath = join(t.base, 'grants.json');
    const command = 'curl -s --max-time 1 http://127.0.0.1:9/ || echo unreachable';
    const first = await createEngine({ workspaceRoot: t.ws, grantsPath, configPaths: false });
    const r1 = await runSandboxed(command, { workspace: t.ws, engine: first, onPermissionRequest: () => 'always_allow' });
    assert.is(r1.network, 'allow');
    assert.equal(JSON.parse(readFileSync(grantsPath, 'utf8')).approvedCommands.bash.map((a: { command: string }) => a.command), [command]);
    const second = await createEngine({ workspaceRoot: t.ws, grantsPath, configPaths: false });
    const r2 = await runSandboxed(command, { workspace: t.ws, engine: second });
    assert.is(r2.network, 'allow', 'no responder needed: the stored approval answered');
    assert.is(second.effectivePolicy().network, 'deny', 'only that call had network');
    const other = await rejection(runSandboxed('curl -s http://127.0.0.1:10/', { workspace: t.ws, engine: second }));
    assert.is(other.code, 'approval_required');
  } finally {
    t.cleanup();
  }
});

test.run();
