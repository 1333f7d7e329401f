// SPDX-License-Identifier: MIT
// Re-entrancy, sandbox environment and platform-contract vectors from the Go Zero CLI's tests
// (test/fixtures/policy/contract.json): the markers a nested run trusts, what the command's
// environment keeps and sets, network modes failing closed, what every plan protects, and the
// seatbelt rules a plan turns into.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildSeatbeltProfile } from '../../lib/backend/macos/profile.js';
import { normalizeNetworkMode } from '../../lib/enums.js';
import { buildSandboxEnv } from '../../lib/env.js';
import { HostFacts } from '../../lib/host-facts.js';
import { isReentrant } from '../../lib/policy/engine/decision-helpers.js';
import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { resolvePlan } from '../../lib/sandbox/plan.js';
import { applySetup, loadVectors, makePlaces } from '../fixtures/policy/vectors.js';
import { stubAnalyzer } from '../fixtures/policy/stub-analyzer.js';

type V = Record<string, any>;

function planFor(v: V, home: string): ReturnType<typeof resolvePlan> {
  const options = {
    workspace: v.workspace as string,
    cwd: undefined,
    network: (v.network ?? 'deny') as 'allow' | 'deny',
    allowWrite: v.allowWrite ?? [],
    allowRead: [],
    denyRead: v.denyRead ?? [],
    denyReadIfAppears: [],
    denyWrite: v.denyWrite ?? [],
    envPass: [],
    limits: {},
    timeoutMs: undefined,
  };
  return resolvePlan({ argv: ['/bin/true'], options, envs: [{ HOME: home }], commandEnv: {}, runtimeWriteRoots: [], facts: new HostFacts() });
}

for (const vector of loadVectors<V>('contract.json')) {
  test(`contract ${vector.id} (${vector.check})`, async () => {
    const places = makePlaces();
    try {
      const v = places.subDeep(vector);
      applySetup(v.setup);
      const e = v.expect;
      switch (v.check) {
        case 'isReentrant':
          assert.is(isReentrant(v.env), e.sandboxed);
          break;
        case 'sandboxEnv': {
          const env = buildSandboxEnv(v.source_env, { backend: v.backend, network: v.network });
          const pairs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
          for (const pair of e.contains ?? []) assert.ok(pairs.includes(pair), pair);
          for (const pair of e.notContains ?? []) assert.not.ok(pairs.includes(pair), pair);
          if (e.pathSegment !== undefined) assert.ok((env.PATH ?? '').split(':').includes(e.pathSegment), env.PATH);
          break;
        }
        case 'scrubbed': {
          const env = buildSandboxEnv({ [v.name]: 'plain-value' }, { backend: 'linux-native', network: 'deny', scrubbed: [] });
          assert.is(!(v.name in env), e.scrubbed, v.name);
          break;
        }
        case 'normalizeNetworkMode':
          assert.is(normalizeNetworkMode(v.input), e.mode);
          break;
        case 'engineEffectiveNetwork': {
          const backend = { name: 'unavailable', available: false, platform: 'linux', nativeIsolation: false, commandWrapping: false, setupInitialized: true } as const;
          const engine = await createEngine({ workspaceRoot: places.map.$WORKSPACE as string, policy: v.policy, grantsPath: null, analyzer: stubAnalyzer(), backend });
          assert.is(engine.effectivePolicy().network, e.mode);
          break;
        }
        case 'planWriteRoot0': {
          const root = planFor(v, places.map.$HOME as string).writeRoots[0];
          for (const name of e.protectedNamesInclude ?? []) assert.ok(root?.protectedNames.includes(name), name);
          for (const path of e.readOnlyInclude ?? []) assert.ok(root?.readOnlySubpaths.includes(path), path);
          break;
        }
        case 'planRoots': {
          const plan = planFor(v, places.map.$HOME as string);
          const roots = plan.writeRoots.map((w) => w.root);
          for (const root of e.writeRootsInclude ?? []) assert.ok(roots.includes(root), root);
          for (const root of e.readRootsInclude ?? []) assert.ok(plan.readRoots.includes(root), root);
          for (const path of e.denyReadInclude ?? []) assert.ok(plan.denyRead.includes(path), path);
          if (e.denyWriteCount !== undefined) assert.is(plan.denyWrite.length, e.denyWriteCount);
          if (e.network !== undefined) assert.is(plan.network, e.network);
          break;
        }
        case 'seatbeltNetwork':
        case 'seatbeltDenyWrite': {
          const profile = buildSeatbeltProfile(planFor(v, places.map.$HOME as string), { tmpDir: places.map.$TEMP as string });
          if (v.check === 'seatbeltNetwork') {
            assert.match(profile.profile, e.contains);
            break;
          }
          // The path's deny rule follows the write allow, so it wins over it.
          const param = Object.entries(profile.params).find(([, value]) => value === e.denyRuleFor)?.[0];
          const lines = profile.profile.split('\n');
          const allowAt = lines.findIndex((line) => line.includes(e.appearsAfter));
          const denyAt = lines.findIndex((line) => line.includes('(deny file-write*') && param !== undefined && line.includes(`(param "${param}")`));
          assert.ok(denyAt >= 0, 'a deny file-write* rule for the path');
          assert.ok(allowAt >= 0 && denyAt > allowAt, 'the deny rule follows the write allow');
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

test.run();
