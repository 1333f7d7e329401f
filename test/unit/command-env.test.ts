// SPDX-License-Identifier: MIT
// commandEnvironment (lib/backend/linux/command-env.ts): the command's environment of a Linux run
// is kept from the last run only for the same frozen source and the same inputs. Any other source,
// or any change of the variables passed through, the network mode or the managed-state variables,
// scrubs afresh, with what buildSandboxEnv gives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { commandEnvironment } from '../../lib/backend/linux/command-env.js';
import { envStrings } from '../../lib/backend/linux/spec.js';
import { buildSandboxEnv } from '../../lib/env.js';

const TOKEN = `ghp_${'A1b2'.repeat(9)}`;

function fresh(source: Record<string, string>, network: 'deny' | 'allow', pass: string[], overrides: Record<string, string>) {
  const scrubbed: string[] = [];
  const env = buildSandboxEnv(source, { backend: 'linux-native', network, pass, tmpDir: '/tmp', overrides, scrubbed });
  return { env, scrubbed };
}

test('the same frozen source and inputs give the same frozen answer; any change gives a new one', () => {
  const source = Object.freeze({ PATH: '/usr/bin:/bin', HOME: '/home/u', GH_TOKEN: 'x', PLAIN: TOKEN, KEEP: 'k' });
  const inputs = { network: 'deny' as const, pass: [] as string[], overrides: { npm_config_cache: '/c/npm' } };
  const first = commandEnvironment(source, inputs);
  assert.ok(Object.isFrozen(first.env));
  assert.equal(first, fresh(source, 'deny', [], inputs.overrides));
  const again = commandEnvironment(source, { ...inputs, overrides: { npm_config_cache: '/c/npm' } });
  assert.is(again.env, first.env, 'kept: equal inputs in new objects');
  assert.equal(again.scrubbed, ['GH_TOKEN', 'PLAIN']);
  again.scrubbed.push('changed by a caller');
  assert.equal(commandEnvironment(source, inputs).scrubbed, ['GH_TOKEN', 'PLAIN'], 'each answer has its own list');
  assert.is(envStrings(first.env), envStrings(again.env));

  const changes: Array<[string, Parameters<typeof commandEnvironment>[1], Readonly<Record<string, string>>]> = [
    ['a variable passed through', { ...inputs, pass: ['GH_TOKEN'] }, source],
    ['the network mode', { ...inputs, network: 'allow' }, source],
    ['a managed-state variable', { ...inputs, overrides: { npm_config_cache: '/c/npm2' } }, source],
    ['another frozen source', inputs, Object.freeze({ ...source, KEEP: 'changed' })],
  ];
  let before = first.env;
  for (const [what, changed, from] of changes) {
    const next = commandEnvironment(from, changed);
    assert.is.not(next.env, before, what);
    assert.equal(next, fresh({ ...from } as Record<string, string>, changed.network, [...changed.pass], changed.overrides), what);
    assert.equal(envStrings(next.env), Object.entries(next.env).map(([name, value]) => `${name}=${value}`), what);
    before = next.env;
  }
});

test('a source that is not frozen is scrubbed afresh at every call', () => {
  const source: Record<string, string> = { PATH: '/bin', A: 'one' };
  const inputs = { network: 'deny' as const, pass: [] as string[], overrides: {} };
  const first = commandEnvironment(source, inputs);
  assert.not.ok(Object.isFrozen(first.env));
  // Its spec strings are not handed out again by identity: the object may have changed since.
  assert.ok(envStrings(first.env).includes('A=one'));
  (first.env as Record<string, string>).A = 'two';
  assert.ok(envStrings(first.env).includes('A=two'), 'the same object, changed: its strings afresh');
  source.A = TOKEN;
  const second = commandEnvironment(source, inputs);
  assert.is.not(second.env, first.env);
  assert.is(second.env.A, undefined, 'the new value is judged, and scrubbed');
  assert.equal(second.scrubbed, ['A']);
});

test.run();
