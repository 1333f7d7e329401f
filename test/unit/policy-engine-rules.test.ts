// SPDX-License-Identifier: MIT
// The engine's behaviour changes and fail-closed rules, through createEngine.
import { outsideTempBase } from '../helpers/outside.js';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import type { BackendInfo } from '../../lib/backend/types.js';
import { createEngine, type CreateEngineOptions } from '../../lib/policy/engine/create-engine.js';
import { loadAnalyzer } from '../../lib/policy/engine/analyzer.js';

const NATIVE: BackendInfo = { name: 'linux-native', available: true, platform: 'linux', nativeIsolation: true, commandWrapping: true, setupInitialized: true };
const CURL = 'curl https://example.com';
const analyzer = await loadAnalyzer();

interface Ctx {
  ws: string;
  outside: string;
  grants: string;
  done(): void;
}

function dirs(): Ctx {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-mission-')));
  const ws = join(base, 'ws');
  mkdirSync(ws);
  // Outside the workspace and outside the temp roots.
  const outside = realpathSync(mkdtempSync(join(outsideTempBase(), '.zs-outside-')));
  return { ws, outside, grants: join(base, 'grants.json'), done: () => [base, outside].forEach((d) => rmSync(d, { recursive: true, force: true })) };
}

function make(c: Ctx, extra: Partial<CreateEngineOptions> = {}) {
  return createEngine({ workspaceRoot: c.ws, policy: {}, grantsPath: c.grants, backend: NATIVE, analyzer, env: {}, ...extra });
}

const bash = (command: string, more: Record<string, unknown> = {}) => ({ toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command }, ...more });

test('network shell commands prompt instead of being denied; unsafe mode denies them', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const d = engine.evaluate(bash(CURL));
    assert.is(d.action, 'prompt');
    assert.is(d.reason, 'network access requires approval');
    assert.is(d.block, undefined);
    const unsafe = engine.evaluate(bash(CURL, { permissionMode: 'unsafe' }));
    assert.is(unsafe.action, 'deny');
    assert.is(unsafe.block?.code, 'network');
    assert.is(engine.evaluate(bash(CURL, { permissionGranted: true })).action, 'prompt');
  } finally {
    c.done();
  }
});

test('an approved network prompt widens only the turn (or the session) and stays sandboxed', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const cleanup = engine.grantRequestPermissions({ network: { enabled: true } }, 'turn');
    assert.is(engine.effectivePolicy().network, 'allow');
    const d = engine.evaluate(bash(CURL));
    assert.is(d.action, 'allow');
    assert.is(d.autoAllowed, true, 'allowed because the native sandbox still wraps it');
    cleanup();
    assert.is(engine.effectivePolicy().network, 'deny');
    assert.is(engine.evaluate(bash(CURL)).action, 'prompt');
    engine.grantRequestPermissions({ network: { enabled: true } }, 'session')();
    assert.is(engine.evaluate(bash(CURL)).action, 'allow');
    assert.ok(engine.coversRequestPermissions({ network: { enabled: true } }));
  } finally {
    c.done();
  }
});

test('tool-wide bash allow grants and approved prefixes do not bypass the network prompt', async () => {
  const c = dirs();
  try {
    const engine = await make(c, { backend: { ...NATIVE, available: false } });
    engine.grant({ toolName: 'bash', decision: 'allow' });
    const d = engine.evaluate(bash(CURL));
    assert.is(d.action, 'prompt');
    assert.is(d.grantMatched, undefined);
    engine.revoke('bash');
    engine.grantCommandPrefix('bash', ['cargo', 'build'], { session: true });
    const p = engine.evaluate(bash('cargo build --release'));
    assert.is(p.action, 'allow');
    assert.equal(p.commandPrefix, ['cargo', 'build']);
    assert.is(engine.evaluate(bash('cargo test')).action, 'prompt');
    assert.throws(() => engine.grantCommandPrefix('bash', ['python3'], { session: true }));
  } finally {
    c.done();
  }
});

test('outside-workspace reads and writes prompt; approval grants that scope for the turn', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const file = join(c.outside, 'notes.txt');
    const read = engine.evaluate({ toolName: 'read_file', sideEffect: 'read', permission: 'allow', args: { path: file } });
    assert.is(read.action, 'prompt');
    assert.is(read.reason, `Reading ${file} requires access outside the workspace.`);
    assert.is(read.block?.recoverable, true);
    const write = engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: file } });
    assert.is(write.block?.code, 'outside_workspace');
    assert.match(write.block?.reason ?? '', '--allow-write');
    const cleanup = engine.grantRequestPermissions({ file_system: { write: [file] } }, 'turn');
    assert.is(engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: file } }).action, 'allow');
    cleanup();
    assert.is(engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: file } }).action, 'prompt');
  } finally {
    c.done();
  }
});

test('unsafe mode, apply_patch escapes, symlink traversal and relative escapes stay hard denies', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const outsideFile = join(c.outside, 'x.txt');
    const unsafe = engine.evaluate({ toolName: 'write_file', sideEffect: 'write', permissionMode: 'unsafe', args: { path: outsideFile } });
    assert.is(unsafe.action, 'deny');
    assert.is(unsafe.block?.recoverable, false);
    const patch = engine.evaluate({ toolName: 'apply_patch', sideEffect: 'write', args: { patch: '*** Begin Patch\n*** Add File: ..\\escape.txt\n+x\n*** End Patch\n' } });
    assert.is(patch.action, 'deny');
    assert.is(patch.block?.code, 'outside_workspace');
    const unified = engine.evaluate({ toolName: 'apply_patch', sideEffect: 'write', args: { patch: '--- a/x\n+++ b/../escape.txt\n@@ -1 +1 @@\n-a\n+b\n' } });
    assert.is(unified.block?.code, 'outside_workspace');
    symlinkSync(c.outside, join(c.ws, 'link'));
    engine.grant({ toolName: 'write_file', decision: 'allow', scope: 'link/x.txt', scopeKind: 'file' });
    const link = engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: 'link/x.txt' } });
    assert.is(link.action, 'deny');
    assert.is(link.block?.code, 'symlink_traversal');
    assert.is(link.grantMatched, undefined);
    const rel = engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: '../escape.txt' } });
    assert.is(rel.action, 'deny');
    const cwd = engine.evaluate(bash('ls', { args: { command: 'ls', cwd: c.outside } }));
    assert.is(cwd.action, 'deny');
  } finally {
    c.done();
  }
});

test('destructive shell commands prompt (deny in unsafe mode); workspace writes auto-allow except protected paths', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    assert.is(engine.evaluate(bash('rm -rf build')).action, 'prompt');
    assert.is(engine.evaluate(bash('rm -rf build', { permissionMode: 'unsafe' })).block?.code, 'destructive_command');
    assert.is(engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: 'src/a.ts' } }).autoAllowed, true);
    for (const path of ['.git/hooks/pre-commit', '.zero/config.json', '.agents/x']) {
      assert.is(engine.evaluate({ toolName: 'edit_file', sideEffect: 'write', args: { path } }).action, 'prompt', path);
    }
  } finally {
    c.done();
  }
});

test('persistent and session grants match by tool and scope only; a dir deny wins even in unsafe mode', async () => {
  const c = dirs();
  try {
    const engine = await make(c, { backend: { ...NATIVE, available: false } });
    engine.grantForSession({ toolName: 'custom_tool', decision: 'allow', scope: 'docs', scopeKind: 'dir' });
    const inDocs = engine.evaluate({ toolName: 'custom_tool', sideEffect: 'read', args: { path: 'docs/a.md' } });
    assert.is(inDocs.action, 'allow');
    assert.is(inDocs.grant?.session, true);
    assert.is(engine.evaluate({ toolName: 'custom_tool', sideEffect: 'read', args: { path: 'src/a.md' } }).action, 'prompt');
    assert.is(engine.evaluate({ toolName: 'other_tool', sideEffect: 'read', args: { path: 'docs/a.md' } }).action, 'prompt');
    engine.grant({ toolName: 'read_file', decision: 'deny', scope: 'secrets', scopeKind: 'dir' });
    const d = engine.evaluate({ toolName: 'read_file', sideEffect: 'read', permissionMode: 'unsafe', args: { path: './secrets/creds.txt' } });
    assert.is(d.block?.code, 'persistent_deny');
    assert.is(d.block?.recoverable, true);
  } finally {
    c.done();
  }
});

test('a broken grants file fails closed: untouched, no grant or auto-allow, the error in every reason', async () => {
  const c = dirs();
  try {
    const garbage = '{"schemaVersion":3,"policyVersion":2,"grants":{"write_file":[{"decision":"al';
    writeFileSync(c.grants, garbage);
    const engine = await make(c);
    const write = engine.evaluate({ toolName: 'write_file', sideEffect: 'write', args: { path: 'a.txt' } });
    assert.is(write.action, 'prompt');
    assert.match(write.reason ?? '', `invalid sandbox grants file at ${c.grants}`);
    const shell = engine.evaluate(bash('echo hi'));
    assert.is(shell.action, 'prompt', 'no native-sandbox auto-allow');
    assert.is(engine.evaluate({ toolName: 'read_file', sideEffect: 'read', permission: 'allow', args: { path: 'a' } }).action, 'prompt');
    const denied = engine.evaluate({ toolName: 'x', sideEffect: 'read', permission: 'deny' });
    assert.is(denied.action, 'deny');
    assert.match(denied.reason ?? '', 'grants file unusable');
    const patch = engine.evaluate({ toolName: 'apply_patch', sideEffect: 'write', args: { patch: '*** Begin Patch\n*** Add File: /etc/x\n*** End Patch' } });
    assert.is(patch.action, 'deny');
    assert.match(patch.reason ?? '', 'grants file unusable');
    assert.throws(() => engine.grant({ toolName: 'bash', decision: 'deny' }));
    assert.is(readFileSync(c.grants, 'utf8'), garbage);
    assert.is(engine.evaluate(bash('echo hi', { permissionGranted: true })).action, 'allow', 'an explicit per-call approval still works');
  } finally {
    c.done();
  }
});

test('re-entrancy markers (both) and an unavailable backend disable the shell auto-allow', async () => {
  const c = dirs();
  try {
    assert.is((await make(c)).evaluate(bash('echo hi')).autoAllowed, true);
    const nested = await make(c, { env: { ZERO_SANDBOXED: '1', ZERO_SANDBOX_BACKEND: 'linux-native' } });
    assert.is(nested.evaluate(bash('echo hi')).action, 'prompt');
    const half = await make(c, { env: { ZERO_SANDBOXED: '1' } });
    assert.is(half.evaluate(bash('echo hi')).action, 'allow');
    const none = await make(c, { backend: { ...NATIVE, available: false } });
    assert.is(none.evaluate(bash('echo hi')).action, 'prompt');
    assert.is(none.evaluate(bash('echo hi', { args: { command: 'echo hi', sandbox_permissions: 'require_escalated' } })).reason, 'unsandboxed shell command requires approval');
  } finally {
    c.done();
  }
});

test('in-process network tools are exempt from the shell network policy', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const fetch = { toolName: 'web_fetch', sideEffect: 'network', args: { url: 'https://example.com/x', command: CURL } };
    const d = engine.evaluate(fetch);
    assert.is(d.action, 'prompt');
    assert.is.not(d.reason, 'network access requires approval');
    assert.is(engine.evaluate({ ...fetch, permissionGranted: true }).action, 'allow');
    const other = engine.evaluate({ toolName: 'notes', sideEffect: 'read', args: { command: CURL } });
    assert.is(other.block?.code, 'network');
  } finally {
    c.done();
  }
});

test('a cancelled evaluation is a context_canceled deny; garbage requests never throw', async () => {
  const c = dirs();
  try {
    const engine = await make(c);
    const d = engine.evaluate({ toolName: 'read_file', sideEffect: 'read', permission: 'allow', args: { path: 'a' } }, { signal: AbortSignal.abort() });
    assert.is(d.action, 'deny');
    assert.is(d.block?.code, 'context_canceled');
    assert.is(d.block?.recoverable, false);
    const weird = engine.evaluate(null as never);
    assert.is(weird.action, 'prompt');
    assert.ok(weird.risk.categories.includes('out_of_workspace'), 'an unknown side effect is the critical out_of_workspace');
    assert.is(engine.evaluate({ toolName: 'x', sideEffect: 'read', args: { path: 42, url: {}, command: ['a'] } as never }).action, 'prompt');
  } finally {
    c.done();
  }
});

test('lenient API spellings: camelCase fileSystem, an empty policy mode, a backend without setupInitialized', async () => {
  const c = dirs();
  try {
    const { setupInitialized: _omit, ...plain } = NATIVE;
    const engine = await make(c, { policy: { mode: '', network: 'scoped' }, backend: plain as BackendInfo });
    assert.equal([engine.effectivePolicy().mode, engine.effectivePolicy().network], ['enforce', 'deny']);
    assert.is(engine.evaluate(bash('echo hi')).autoAllowed, true, 'no setup marker needed off Windows');
    const windows = await make(c, { backend: { ...plain, platform: 'windows' } as BackendInfo });
    assert.is(windows.evaluate(bash('echo hi')).action, 'prompt', 'Windows needs its setup first');
    const file = join(c.outside, 'n.txt');
    const cleanup = engine.grantRequestPermissions({ fileSystem: { read: [file] } }, 'turn');
    assert.is(engine.evaluate({ toolName: 'read_file', sideEffect: 'read', permission: 'allow', args: { path: file } }).action, 'allow');
    cleanup();
    await make(c, { policy: { mode: 'off' } }).then(
      () => assert.unreachable('an unknown mode is an error'),
      (e: Error) => assert.match(e.message, 'invalid policy field mode'),
    );
  } finally {
    c.done();
  }
});

test.run();
