// SPDX-License-Identifier: MIT
// Command-prefix store vectors (command_prefix.json: session and persistent grants, lookups,
// segment matching) through the engine and the grants store, with the real analyzer rules.
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAnalyzer } from '../../lib/policy/engine/analyzer.js';
import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { GrantStore } from '../../lib/policy/grants/grants-store.js';
import { loadVectors } from '../fixtures/policy/vectors.js';

type V = Record<string, any>;
const STORE_CHECKS = new Set(['sessionGrantThenLookup', 'persistGrant', 'persistGrantTwice', 'persistedLookup', 'matchSegments']);
const backend = { name: 'unavailable' as const, available: false, platform: 'linux', nativeIsolation: false, commandWrapping: false, setupInitialized: true };

for (const v of loadVectors<V>('command_prefix.json').filter((x) => STORE_CHECKS.has(x.check))) {
  if (v.platform === 'windows' && process.platform !== 'win32') continue;
  test(`prefix ${v.id}`, async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-prefix-')));
    try {
      mkdirSync(join(base, 'ws'));
      const analyzer = await loadAnalyzer();
      const grantsPath = join(base, 'grants.json');
      const engine = await createEngine({ workspaceRoot: join(base, 'ws'), policy: {}, grantsPath, backend, env: {}, analyzer });
      const store = new GrantStore(grantsPath, { validatePrefix: analyzer.validateCommandPrefix });
      switch (v.check) {
        case 'sessionGrantThenLookup': {
          let granted = true;
          try {
            engine.grantCommandPrefix(v.toolName, v.grant, { session: true });
          } catch {
            granted = false;
          }
          const match = engine.matchCommandPrefix(v.toolName, v.command.join(' '));
          assert.is(match !== undefined, v.expect.match);
          if (!v.expect.match) assert.is(granted, false, 'a refused grant never matches');
          break;
        }
        case 'persistGrant':
        case 'persistGrantTwice': {
          let accepted = true;
          try {
            store.grantCommandPrefix(v.toolName, v.prefix);
            if (v.check === 'persistGrantTwice') store.grantCommandPrefix(v.toolName, v.prefix);
          } catch {
            accepted = false;
          }
          if (v.expect.accepted !== undefined) assert.is(accepted, v.expect.accepted);
          if (accepted) assert.is(store.listCommandPrefixes().length, 1);
          break;
        }
        case 'persistedLookup': {
          for (const prefix of v.grants) store.grantCommandPrefix(v.toolName, prefix);
          assert.is(store.lookupCommandPrefix(v.toolName, v.command) !== undefined, v.expect.match);
          assert.is(engine.matchCommandPrefix(v.toolName, v.command.join(' ')) !== undefined, v.expect.match);
          break;
        }
        case 'matchSegments': {
          for (const prefix of v.sessionGrants ?? []) engine.grantCommandPrefix(v.toolName, prefix, { session: true });
          const match = engine.matchCommandPrefix(v.toolName, v.args.command);
          assert.is(match !== undefined, v.expect.match);
          if (v.expect.matchedPrefix) assert.equal(match?.prefix, v.expect.matchedPrefix);
          if (v.expect.session !== undefined) assert.is(match?.session, v.expect.session);
          break;
        }
        default:
          throw new Error(`unhandled ${v.check}`);
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
}

test('an approved prefix means "do not ask again", still sandboxed, and never skips the network prompt', async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-prefix-')));
  try {
    mkdirSync(join(base, 'ws'));
    const engine = await createEngine({ workspaceRoot: join(base, 'ws'), policy: {}, grantsPath: join(base, 'g.json'), backend, env: {} });
    engine.grantCommandPrefix('bash', ['cargo', 'build']);
    const d = engine.evaluate({ toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command: 'cargo build --release && echo done' } });
    assert.is(d.action, 'allow');
    assert.equal(d.commandPrefix, ['cargo', 'build']);
    assert.match(d.reason ?? '', 'still runs sandboxed');
    engine.grantCommandPrefix('bash', ['git', 'push']);
    const net = engine.evaluate({ toolName: 'bash', sideEffect: 'shell', permissionMode: 'ask', args: { command: 'git push origin main' } });
    assert.is(net.action, 'prompt');
    assert.is(net.reason, 'network access requires approval');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test.run();
