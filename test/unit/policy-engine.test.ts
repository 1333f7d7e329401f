// SPDX-License-Identifier: MIT
// Engine vectors (engine.json) and the mission-change behaviours, run through createEngine.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import type { BackendInfo } from '../../lib/backend/types.js';
import { loadAnalyzer, type Analyzer } from '../../lib/policy/engine/analyzer.js';
import { createEngine, type EngineWithConfig } from '../../lib/policy/engine/create-engine.js';
import { buildGrantProfile, normalizeRequestPermissions } from '../../lib/policy/engine/overlays.js';
import type { Decision, RequestPermissionProfile } from '../../lib/policy/schema.js';
import { applySetup, loadVectors, makePlaces, type Places } from '../fixtures/policy/vectors.js';

type V = Record<string, any>;

/** The real shell analyzer (lib/bash): the vectors run end to end. */
function analyzer(): Promise<Analyzer> {
  return loadAnalyzer();
}

const NO_BACKEND: BackendInfo = { name: 'unavailable', available: false, platform: 'linux', nativeIsolation: false, commandWrapping: false, setupInitialized: true };

function backendOf(v: V): BackendInfo {
  const b = v.backend;
  if (b === undefined) return NO_BACKEND;
  return {
    name: 'linux-native',
    available: b.available === true,
    platform: b.platform ?? 'linux',
    nativeIsolation: b.nativeIsolation === true,
    commandWrapping: b.commandWrapping === true,
    setupInitialized: b.setupInitialized ?? true,
  };
}

function profileOf(p: V): RequestPermissionProfile {
  const out: RequestPermissionProfile = {};
  if (p.network) out.network = { enabled: p.network.enabled === true };
  if (p.fileSystem) out.file_system = { read: p.fileSystem.read ?? [], write: p.fileSystem.write ?? [] };
  return out;
}

async function engineFor(v: V, places: Places): Promise<EngineWithConfig> {
  const setup = v.setup ?? {};
  let root: string | null = setup.engineWorkspaceRoot ?? setup.scopeWorkspaceRoot ?? null;
  if (root !== null && !root.startsWith('/')) root = places.map.$WORKSPACE as string; // Windows-only roots
  const engine = await createEngine({
    workspaceRoot: root,
    policy: v.policy,
    grantsPath: join(places.map.$TMP1 as string, 'grants.json'),
    backend: backendOf(v),
    extraWriteRoots: setup.scopeExtraRoots ?? [],
    env: { ...process.env, ZERO_SANDBOXED: '', ZERO_SANDBOX_BACKEND: '', ...(setup.env ?? {}) },
    analyzer: await analyzer(),
  });
  for (const g of v.grants ?? []) {
    const input = { toolName: g.toolName, decision: g.decision, scope: g.grantedAs ?? g.scope, scopeKind: g.scopeKind === 'toolWide' ? '' : g.scopeKind };
    if (g.store === 'session') engine.grantForSession(input);
    else engine.grant(input);
  }
  for (const pg of v.permissionGrants ?? []) {
    const cleanup = engine.grantRequestPermissions(profileOf(pg.profile), pg.scope);
    if (pg.active === false || pg.cleanupCalled === true) cleanup();
  }
  return engine;
}

function checkDecision(d: Decision, e: V): void {
  const show = JSON.stringify(d);
  if (e.action !== undefined) assert.is(d.action, e.action, show);
  if (e.actionNot !== undefined) assert.is.not(d.action, e.actionNot, show);
  if (e.blockCode !== undefined) assert.is(d.block?.code, e.blockCode, show);
  if (e.hasBlock !== undefined) assert.is(d.block !== undefined, e.hasBlock, show);
  if (e.recoverable !== undefined) assert.is(d.block?.recoverable, e.recoverable, show);
  if (e.reason !== undefined) assert.is(d.reason, e.reason, show);
  if (e.reasonNot !== undefined) assert.is.not(d.reason, e.reasonNot, show);
  if (e.reasonContains !== undefined) assert.ok(d.reason?.includes(e.reasonContains), show);
  if (e.blockReason !== undefined) assert.is(d.block?.reason, e.blockReason, show);
  if (e.blockReasonContains !== undefined) assert.ok(d.block?.reason.includes(e.blockReasonContains), show);
  if (e.riskLevel !== undefined) assert.is(d.risk.level, e.riskLevel, show);
  for (const cat of e.riskCategories ?? []) assert.ok(d.risk.categories.includes(cat), `${cat} in ${show}`);
  for (const cat of e.notRiskCategories ?? []) assert.not.ok(d.risk.categories.includes(cat), `${cat} not in ${show}`);
  if (e.riskCategoriesExact !== undefined) assert.equal(d.risk.categories, e.riskCategoriesExact, show);
  if (e.grantMatched !== undefined) assert.is(d.grantMatched === true, e.grantMatched, show);
  if (e.grantSession !== undefined) assert.is(d.grant?.session === true, e.grantSession, show);
  if (e.autoAllowed !== undefined) assert.is(d.autoAllowed === true, e.autoAllowed, show);
}

// engine-posix.json holds the vectors that need directory symlinks (Wine 8's symlinkSync makes
// none; Windows needs a privilege for them) or '/'-joined expected paths: POSIX hosts run them.
const posixVectors = process.platform === 'win32' ? [] : loadVectors<V>('engine-posix.json');
for (const vector of [...loadVectors<V>('engine.json'), ...posixVectors]) {
  test(`engine ${vector.id}`, async () => {
    const places = makePlaces();
    try {
      const v = places.subDeep(vector);
      applySetup(v.setup);
      const engine = await engineFor(v, places);
      const request = { ...v.request, permissionMode: v.permissionMode ?? v.request?.permissionMode };
      const signal = v.setup?.evaluationCancelled ? AbortSignal.abort() : undefined;
      switch (v.kind) {
        case 'evaluate':
          checkDecision(engine.evaluate(request, signal ? { signal } : {}), v.expect);
          break;
        case 'precheck':
          assert.equal(engine.precheck(request).map((b) => b.code), v.expect.blockCodes);
          break;
        case 'shellSandboxActive':
          assert.is(engine.isShellSandboxActive(), v.expect.active);
          break;
        case 'coversRequestPermissions':
          assert.is(engine.coversRequestPermissions(profileOf(v.request.profile)), v.expect.covered);
          break;
        case 'permissionProfile':
          for (const root of v.request.scopeAddRead) engine.scope.addRead(root);
          for (const root of v.expect.readRootsInclude) assert.ok(engine.shellReadRoots().includes(root));
          for (const root of v.expect.writeRootsExclude) assert.not.ok(engine.shellWriteRoots().includes(root));
          break;
        case 'unsandboxedExecutionAllowed':
          assert.is(engine.unsandboxedExecutionAllowed(), v.expect.allowed);
          break;
        case 'requestPermissionGrantProfile': {
          const granted = buildGrantProfile(normalizeRequestPermissions(profileOf(v.request.profile), engine.workspaceRoot));
          if (v.expect.read !== undefined) assert.equal(granted.read, v.expect.read);
          if (v.expect.write !== undefined) assert.equal(granted.write, v.expect.write);
          break;
        }
        default:
          throw new Error(`unhandled kind ${v.kind}`);
      }
    } finally {
      places.cleanup();
    }
  });
}

test('deny-read entries forbid escalating out of the sandbox; requested file paths widen to their directory', async () => {
  const places = makePlaces();
  try {
    const ws = places.map.$WORKSPACE as string;
    const ext = places.map.$EXTERNAL as string;
    applySetup({ dirs: [`${ws}/secret`], files: [`${ext}/notes.txt`] });
    const open = await engineFor({ setup: { engineWorkspaceRoot: ws }, policy: { mode: 'enforce' } }, places);
    assert.is(open.unsandboxedExecutionAllowed(), true);
    const closed = await engineFor({ setup: { engineWorkspaceRoot: ws }, policy: { mode: 'enforce', denyRead: [`${ws}/secret`] } }, places);
    assert.is(closed.unsandboxedExecutionAllowed(), false);
    const granted = buildGrantProfile(normalizeRequestPermissions({ file_system: { read: [`${ext}/notes.txt`], write: [ext] } }, ws));
    assert.equal(granted.read, [ext]);
    assert.equal(granted.write, [ext]);
    assert.throws(() => buildGrantProfile(normalizeRequestPermissions({ file_system: { write: ['/etc-not-there/x/y'] } }, ws)));
    assert.throws(() => normalizeRequestPermissions({}, ws), /request_permissions requires at least one permission/);
  } finally {
    places.cleanup();
  }
});

test.run();
