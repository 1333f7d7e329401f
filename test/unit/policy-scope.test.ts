// SPDX-License-Identifier: MIT
// Workspace scope and path-list vectors (scope.json, pathlists.json) against lib/policy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { checkRequestPath } from '../../lib/policy/paths/path-check.js';
import { buildPathLists, isDirExcluded, isReadDenied, pathListsActive } from '../../lib/policy/paths/path-lists.js';
import { defaultTempRootCandidates, WorkspaceScope } from '../../lib/policy/paths/scope.js';
import { applySetup, loadVectors, makePlaces, type VectorSetup } from '../fixtures/policy/vectors.js';
import { stubAnalyzer } from '../fixtures/policy/stub-analyzer.js';

type V = Record<string, any>;

for (const vector of loadVectors<V>('scope.json')) {
  test(`scope ${vector.id}`, () => {
    const places = makePlaces();
    try {
      const v = places.subDeep(vector);
      applySetup(v.setup as VectorSetup | undefined);
      switch (v.check) {
        case 'validateWrite':
        case 'validateRead': {
          const scope = new WorkspaceScope(v.workspace, v.extraRoots ?? []);
          const result = scope.validate(v.path, v.check === 'validateRead' ? 'read' : 'write');
          if ('blockCode' in v.expect) assert.is(result.code, v.expect.blockCode);
          if (v.expect.reason !== undefined) assert.is(result.reason, v.expect.reason);
          const not = v.expect.reasonNotContains;
          for (const text of Array.isArray(not) ? not : not === undefined ? [] : [not]) {
            assert.not.ok(result.reason.includes(text), `reason "${result.reason}" must not contain "${text}"`);
          }
          break;
        }
        case 'newScope': {
          let ok = true;
          try {
            new WorkspaceScope(v.workspace, v.extraRoots);
          } catch {
            ok = false;
          }
          assert.is(ok, v.expect.ok);
          break;
        }
        case 'scopeAddSequence': {
          const scope = new WorkspaceScope(v.workspace, []);
          for (const add of v.adds) scope.add(add);
          const roots = scope.writeRoots();
          for (const root of v.expect.rootsInclude) assert.ok(roots.includes(root), `${root} in ${roots}`);
          for (const root of v.expect.rootsCover) assert.ok(roots.some((r) => root === r || root.startsWith(`${r}/`)), `${root} covered`);
          assert.is(roots.filter((r) => r === places.map.$EXTRA).length, 1, 'adding the same root twice keeps one');
          break;
        }
        case 'scopeAdd': {
          const scope = new WorkspaceScope(v.workspace, []);
          let roots: string[] | undefined;
          try {
            scope.add(v.add);
            roots = scope.writeRoots();
          } catch {
            roots = undefined;
          }
          assert.is(roots !== undefined, v.expect.ok, JSON.stringify(roots));
          for (const root of v.expect.rootsInclude ?? []) assert.ok(roots?.includes(root), `${root} in ${roots}`);
          break;
        }
        case 'defaultTempWriteRoots':
          assert.equal(defaultTempRootCandidates(v.goos === 'windows' ? 'win32' : v.goos, v.env), v.expect.candidates);
          break;
        default:
          throw new Error(`unhandled check ${v.check}`);
      }
    } finally {
      places.cleanup();
    }
  });
}

for (const vector of loadVectors<V>('pathlists.json')) {
  // Credential vectors run through the plan, in their environment form (credentials.json).
  if (vector.check === 'credentialDenyRead') continue;
  test(`pathlists ${vector.id}`, async () => {
    const places = makePlaces();
    try {
      const v = places.subDeep(vector);
      applySetup(v.setup as VectorSetup | undefined);
      const lists = buildPathLists(v.policy ?? {}, v.workspace);
      switch (v.check) {
        case 'readDenied':
          assert.is(isReadDenied(lists, v.path), v.expect.denied);
          break;
        case 'readExclusionPath':
          assert.is(isReadDenied(lists, v.path), v.expect.excluded);
          break;
        case 'readExclusionDir':
          assert.is(isDirExcluded(lists, v.path), v.expect.excluded);
          break;
        case 'validateWrite':
        case 'validateRead': {
          const scope = new WorkspaceScope(v.workspace, []);
          const block = checkRequestPath(v.path, {
            sideEffect: v.check === 'validateRead' ? 'read' : 'write',
            scope,
            lists,
            listsActive: pathListsActive(lists),
            policyEnforce: v.enforceWorkspace,
            workspaceRoot: v.workspace,
          });
          assert.is(block === undefined, v.expect.allowed);
          break;
        }
        case 'readExclusionGlobs':
        case 'readExclusionsActive':
        case 'shellWriteRoots': {
          const engine = await createEngine({
            workspaceRoot: v.workspace,
            policy: { mode: 'enforce', enforceWorkspace: true, ...v.policy },
            grantsPath: null,
            analyzer: stubAnalyzer(),
            backend: { name: 'unavailable', available: false, platform: 'linux', nativeIsolation: false, commandWrapping: false, setupInitialized: true },
          });
          if (v.check === 'shellWriteRoots') {
            for (const root of v.expect.include) assert.ok(engine.shellWriteRoots().includes(root));
          } else {
            const globs = engine.readExclusionGlobs();
            // Go's nil list: no globs (none at all, or an empty list).
            if (v.expect.globs === null) assert.ok(globs === null || globs.length === 0, JSON.stringify(globs));
            else assert.equal(globs, v.expect.globs);
          }
          break;
        }
        default:
          throw new Error(`unhandled check ${v.check}`);
      }
    } finally {
      places.cleanup();
    }
  });
}

test('lists apply without workspace enforcement and drop entries that do not exist', () => {
  const places = makePlaces();
  try {
    const ws = places.map.$WORKSPACE as string;
    const lists = buildPathLists({ denyRead: [`${ws}/missing`, ws], denyWrite: [ws] }, ws);
    assert.equal(lists.denyRead, [ws]);
    const scope = new WorkspaceScope(ws, []);
    const ctx = { scope, lists, listsActive: true, policyEnforce: false, workspaceRoot: ws };
    assert.is(checkRequestPath(`${ws}/a.txt`, { ...ctx, sideEffect: 'write' })?.code, 'denied');
    assert.is(checkRequestPath(`${ws}/a.txt`, { ...ctx, sideEffect: 'read' })?.code, 'denied');
  } finally {
    places.cleanup();
  }
});

test.run();
