// SPDX-License-Identifier: MIT
// The path lists of the options (allowWrite, allowRead, denyRead, denyWrite) are checked by a loop
// of validateOptions rather than by zod per element; the rest by the schema. Whatever the lists
// hold, validateOptions accepts exactly what the full schema accepts, and rejects with the full
// schema's message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { optionSchemas, validateOptions } from '../../lib/sandbox/options.js';

const ITEMS: unknown[] = ['/a', 'b', '', ' ', 0, null, undefined, {}, ['/x'], new String('/s'), Symbol('s')];
const LISTS = ['allowWrite', 'allowRead', 'denyRead', 'denyWrite'] as const;

/** What validateOptions says, and what the full schema says, of `options`. */
function verdicts(options: Record<string, unknown>): { fast: string; full: string } {
  let fast = 'ok';
  try {
    validateOptions('run', options);
  } catch (error) {
    fast = (error as Error).message;
  }
  const parsed = optionSchemas().run.safeParse(options);
  return { fast, full: parsed.success ? 'ok' : 'rejected' };
}

test('validateOptions accepts a path list exactly when the full schema does, whatever it holds', () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let rejected = 0;
  for (let round = 0; round < 400; round++) {
    const options: Record<string, unknown> = {};
    for (const name of LISTS) {
      const shape = random(6);
      if (shape === 0) continue;
      if (shape === 1) {
        options[name] = ITEMS[random(ITEMS.length)];
        continue;
      }
      const list: unknown[] = [];
      const length = random(5);
      // Mostly good paths, now and then one that is not (or a hole).
      for (let i = 0; i < length; i++) list[i] = random(4) === 0 ? ITEMS[random(ITEMS.length)] : `/p${i}`;
      if (shape === 2 && length > 1) delete list[random(length)];
      options[name] = list;
    }
    if (random(8) === 0) options.network = 'sometimes';
    const { fast, full } = verdicts(options);
    assert.is(fast === 'ok', full === 'ok', `${fast} for ${String(Object.entries(options).map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.map(String).join(',')}]` : String(v)}`))}`);
    if (full !== 'ok') rejected++;
  }
  assert.ok(rejected > 20, 'some lists were bad');
});

test('a bad path in a long list is named as the full schema names it', () => {
  const list = Array.from({ length: 3000 }, (_, i) => `/p${i}`);
  list[1234] = '';
  assert.throws(() => validateOptions('run', { denyRead: list }), /options\.denyRead\[1234\] is invalid/);
  assert.throws(() => validateOptions('spawn', { allowWrite: '/one' }), /options\.allowWrite is invalid/);
  validateOptions('spawn', { allowWrite: list.map((_, i) => `/q${i}`), denyWrite: [] });
});

test.run();
