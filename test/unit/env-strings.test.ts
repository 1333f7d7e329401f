// SPDX-License-Identifier: MIT
// envStrings (lib/backend/linux/spec.ts): a spec's NAME=value strings are those of the environment
// given, in its order, whether they are made afresh or handed out again for an environment of the
// same variables; any change of a name, a value, the order or the count makes them afresh.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { envStrings } from '../../lib/backend/linux/spec.js';

const strings = (env: Record<string, string>) => Object.entries(env).map(([name, value]) => `${name}=${value}`);

test('the strings of each environment in a sequence, the same array again only for the same variables', () => {
  const base = { PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', EMPTY: '', EQ: 'a=b' };
  const sequence: Array<{ env: Record<string, string>; again: boolean }> = [
    { env: { ...base }, again: false },
    { env: { ...base }, again: true },
    { env: { ...base, HOME: '/home/v' }, again: false },
    { env: { ...base, HOME: '/home/v' }, again: true },
    { env: { ...base, HOME: '/home/v', EXTRA: '1' }, again: false },
    { env: { ...base, HOME: '/home/v' }, again: false },
    { env: { HOME: '/home/v', PATH: base.PATH, LANG: base.LANG, EMPTY: '', EQ: 'a=b' }, again: false },
    { env: { HOME: '/home/v', PATH: base.PATH, LANG: base.LANG, EMPTY: '' }, again: false },
    { env: { HOME: '/home/v', PATH: base.PATH, LANG: base.LANG, EMPTY: '', '1': 'digit first' }, again: false },
    { env: {}, again: false },
    { env: {}, again: true },
  ];
  let before: readonly string[] | undefined;
  for (const [i, { env, again }] of sequence.entries()) {
    const made = envStrings(env);
    assert.equal([...made], strings(env), `step ${i}`);
    assert.ok(Object.isFrozen(made), `step ${i}: frozen`);
    assert.is(made === before, again, `step ${i}: ${again ? 'handed out again' : 'made afresh'}`);
    before = made;
  }
});

test.run();
