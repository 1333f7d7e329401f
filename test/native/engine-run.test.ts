// runSandboxed with the permission engine in front: deny rejects with the block, a prompt asks the
// responder (no responder: denied), an approved network prompt runs the command with network for
// that call or the session — still sandboxed — and every decision is reported as an event.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, rejection, sandboxTest, type Tree } from '../helpers/sandbox.js';

async function engineFor(t: Tree) {
  return createEngine({ workspaceRoot: t.ws, grantsPath: join(t.base, 'grants.json'), configPaths: false });
}

function hostServer(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((socket) => {
    hits++;
    socket.end('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, hits: () => hits })));
}

sandboxTest('an ordinary command is auto-allowed because the sandbox is active, and reported', async () => {
  const t = makeTree();
  try {
    const engine = await engineFor(t);
    const events: Array<Record<string, unknown>> = [];
    const r = await runSandboxed('echo hi', { workspace: t.ws, engine, onPermissionEvent: (e) => events.push(e) });
    assert.is(r.stdout, 'hi\n');
    assert.equal(events.map((e) => [e.type, e.action]), [['permission_decision', 'allow']]);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a network command without a responder is denied after a permission_request; it never runs', async () => {
  const t = makeTree();
  const host = await hostServer();
  try {
    const engine = await engineFor(t);
    const events: Array<Record<string, unknown>> = [];
    const error = await rejection(runSandboxed(`curl -s http://127.0.0.1:${host.port}/ ; touch ran`, { workspace: t.ws, engine, onPermissionEvent: (e) => events.push(e) }));
    assert.is(error.code, 'approval_required');
    assert.match(error.message, /network access requires approval/);
    assert.is(events[0]?.type, 'permission_request');
    assert.is(events[0]?.reason, 'network access requires approval');
    assert.equal((events[0]?.risk as { categories: string[] }).categories.includes('network'), true);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
    assert.is(host.hits(), 0);
  } finally {
    host.server.close();
    t.cleanup();
  }
});

sandboxTest('an approved network prompt runs the command with network for that call only, still sandboxed', async () => {
  const t = makeTree();
  const host = await hostServer();
  try {
    const engine = await engineFor(t);
    const prompts: string[] = [];
    const r = await runSandboxed(`curl -s http://127.0.0.1:${host.port}/; touch /etc/zs-evil 2>/dev/null || echo etc-readonly`, {
      workspace: t.ws,
      engine,
      onPermissionRequest: (prompt) => {
        prompts.push(prompt.scope);
        return 'allow';
      },
    });
    assert.equal(prompts, ['network all outbound access']);
    assert.is(r.network, 'allow');
    assert.is(r.stdout, 'oketc-readonly\n', 'network reached the host; the filesystem stayed sandboxed');
    assert.is(host.hits(), 1);
    const again = await rejection(runSandboxed(`curl -s http://127.0.0.1:${host.port}/`, { workspace: t.ws, engine }));
    assert.is(again.code, 'approval_required', 'a turn approval does not outlive its call');
    assert.is(engine.effectivePolicy().network, 'deny');
  } finally {
    host.server.close();
    t.cleanup();
  }
});

sandboxTest('allow_for_session keeps network approved for later calls of the session', async () => {
  const t = makeTree();
  const host = await hostServer();
  try {
    const engine = await engineFor(t);
    await runSandboxed(`curl -s http://127.0.0.1:${host.port}/`, { workspace: t.ws, engine, onPermissionRequest: () => 'allow_for_session' });
    const later = await runSandboxed(`curl -s http://127.0.0.1:${host.port}/`, { workspace: t.ws, engine });
    assert.is(later.stdout, 'ok');
    assert.is(later.network, 'allow');
    assert.is(host.hits(), 2);
  } finally {
    host.server.close();
    t.cleanup();
  }
});

sandboxTest('a persistent deny grant rejects with the block; deny and cancel answers stop the command', async () => {
  const t = makeTree();
  try {
    const engine = await engineFor(t);
    const destructive = await rejection(runSandboxed('rm -rf ./build; touch ran', { workspace: t.ws, engine, onPermissionRequest: () => 'deny' }));
    assert.is(destructive.code, 'permission_denied');
    const cancelled = await rejection(runSandboxed('rm -rf ./build; touch ran', { workspace: t.ws, engine, onPermissionRequest: () => 'cancel' }));
    assert.is(cancelled.code, 'aborted');
    engine.grant({ toolName: 'bash', decision: 'deny' });
    const denied = await rejection(runSandboxed('echo hi; touch ran', { workspace: t.ws, engine }));
    assert.is(denied.code, 'permission_denied');
    assert.match(denied.message, /Sandbox block \[persistent_deny\] for bash/);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
  } finally {
    t.cleanup();
  }
});

test.run();
