// A run's after-run check as it is published with its notes (packCheck, missed-checks.ts) and read
// back by the run that finishes it for a killed one: every kind of value the guard holds comes back
// as it was, through the JSON text the notes file holds.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { packCheck, packedJsonBytes, unpackCheck } from '../../lib/sandbox/missed-checks.js';
import { decode, encode, encodeParts } from '../../lib/sandbox/run-notes-file.js';

test('maps, sets, buffers, bigints and byte-string paths round-trip through JSON', () => {
  const guard = {
    git: {
      watched: new Map([['/w/p\u00e9/.zero', 'missing:'], ['/w/.git/hooks', 'dir:1:2:3:4:5']]),
      configs: new Map([['/w/.git/config', { bytes: Buffer.from([0, 1, 0xff, 0x5b]), state: 'file:9' }], ['/w/x/.git/config', { bytes: undefined, state: 'missing:' }]]),
      hookPaths: new Set(['/w/.git/hooks']),
      noGit: ['/w', '/w/a'],
      settled: [['/w/a', '1:2:3:4:5']],
      truncated: false,
      depth: 3,
      none: null,
      skipped: undefined,
    },
    since: 123456789012345678901234567890n,
  };
  const text = JSON.stringify(packCheck(guard));
  const back = unpackCheck(JSON.parse(text)) as typeof guard;
  assert.equal(back.git.watched, guard.git.watched);
  assert.equal([...back.git.configs.keys()], [...guard.git.configs.keys()]);
  assert.ok(Buffer.isBuffer(back.git.configs.get('/w/.git/config')?.bytes));
  assert.equal(back.git.configs.get('/w/.git/config')?.bytes, guard.git.configs.get('/w/.git/config')?.bytes);
  assert.is(back.git.configs.get('/w/x/.git/config')?.bytes, undefined);
  assert.equal(back.git.hookPaths, guard.git.hookPaths);
  assert.equal(back.git.noGit, guard.git.noGit);
  assert.equal(back.git.settled, guard.git.settled);
  assert.is(back.git.truncated, false);
  assert.is(back.git.depth, 3);
  assert.is(back.git.none, null);
  assert.ok(!('skipped' in back.git));
  assert.is(back.since, guard.since);
});

test('notes published in pieces (encodeParts) read back as the whole file encode writes; pieces of the same values are encoded once', () => {
  const git = {
    roots: ['/w', '/w/p\u00c3\u00a9'],
    watched: new Map([['/w/p\u00c3\u00a9/.zero', 'missing:']]),
    configs: new Map([['/w/.git/config', { bytes: Buffer.from([0, 1, 0xff, 0x5b]), state: 'file:9' }]]),
    hookPaths: new Set(['/w/.git/hooks']),
  };
  const tools = { roots: ['/w'], notes: new Map([['/w/.vscode/tasks.json', { path: '/w/.vscode/tasks.json', states: ['missing'] }]]), readOnly: [] };
  const ownEntries = [{ path: '/w/node_modules/.bin/zero-sandbox', root: '/w', kind: 'file' as const, content: Buffer.from('#!/bin/sh\n'), mode: 0o755 }];
  const notes = { since: 42n, roots: ['/w', '/w/p\u00e9'], gitRoots: git.roots, configs: git.configs, watched: git.watched, ownEntries };
  const check = { git, ownEntries, tools, since: 42n };
  const whole = decode(encode({ ...notes, after: packCheck(check) }));
  const parts = encodeParts({ ...notes, check });
  const pieces = decode(Buffer.concat(parts).toString('utf8'));
  assert.ok(whole !== undefined && pieces !== undefined);
  assert.equal(pieces, whole);
  assert.equal(unpackCheck(pieces?.after), unpackCheck(whole?.after));
  // The same values again, with another time: the kept pieces are the very buffers made before.
  const again = encodeParts({ ...notes, since: 43n, check: { ...check, since: 43n } });
  assert.ok(parts.some((part) => again.includes(part) && part.length > 20), 'a piece of the same value is reused');
  assert.is(decode(Buffer.concat(again).toString('utf8'))?.since, 43n);
  assert.is((unpackCheck(decode(Buffer.concat(again).toString('utf8'))?.after) as { since: bigint }).since, 43n);
});

/** The bytes packedJsonBytes must write: the packed tree's JSON in UTF-8. */
const viaTree = (value: object) => Buffer.from(JSON.stringify(packCheck(value)), 'utf8');

test('packedJsonBytes writes the bytes of the packed tree\'s JSON for every kind of value the guard holds, and for the edges of JSON', () => {
  const strings = ['', 'plain', '/w/p\u00e9/\u00ff', 'quote " and \\ backslash', 'tab\tnl\ncr\r\u0000\u001f\u007f', 'emoji \ud83e\udd80', 'lone \ud800 high', 'lone \udfff low', 'line \u2028 sep \u2029', '\u65e5\u672c'];
  const values: object[] = [
    {},
    [],
    { strings, keys: Object.fromEntries(strings.map((text, i) => [text, i])) },
    { numbers: [0, -0, 1, -1.5, 0.1, 1e21, 1e-7, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] },
    { flags: [true, false, null], nested: { none: null, yes: true } },
    { skipped: undefined, fn: () => 1, sym: Symbol('s'), kept: 'k', inArray: [undefined, () => 2, Symbol('t'), 'x'] },
    { big: 123456789012345678901234567890n, small: 0n, negative: -5n, list: [1n, 2n] },
    { bytes: Buffer.from([0, 1, 0xff, 0x5b]), empty: Buffer.alloc(0), typed: new Uint8Array([7, 8]) },
    new Map<unknown, unknown>([['/w', 'missing:'], [1, undefined], ['fn', () => 3], [2n, new Set(['a', 'b'])], ['m', new Map([['k', Buffer.from('v')]])]]),
    new Set<unknown>(['a', 1, undefined, null, new Map(), []]),
    [new Map(), new Set(), {}, [], [[[]]]],
    { '1': 'digit key', b: 'b', a: 'a', '0': 'zero' },
    Object.assign(Object.create({ inherited: 'not own' }) as object, { own: 'own' }),
  ];
  for (const [i, value] of values.entries()) assert.equal(packedJsonBytes(value), viaTree(value), `value ${i}`);
});

test('packedJsonBytes of guard-shaped values, generated, and of one larger than its first buffer', () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const text = () => Array.from({ length: Math.floor(random() * 12) }, () => String.fromCharCode(random() < 0.8 ? 0x2f + Math.floor(random() * 75) : Math.floor(random() * 0x3000))).join('');
  const note = () => ({ path: `/w/${text()}`, states: Array.from({ length: 1 + Math.floor(random() * 3) }, text), bytes: random() < 0.3 ? Buffer.from(text()) : undefined, depth: Math.floor(random() * 9) });
  for (let round = 0; round < 200; round++) {
    const guard = {
      roots: Array.from({ length: Math.floor(random() * 5) }, text),
      watched: new Map(Array.from({ length: Math.floor(random() * 6) }, () => [text(), text()] as [string, string])),
      configs: new Map(Array.from({ length: Math.floor(random() * 4) }, () => [text(), { bytes: random() < 0.5 ? Buffer.from(text()) : undefined, state: text() }] as [string, unknown])),
      notes: new Map(Array.from({ length: Math.floor(random() * 8) }, () => [text(), note()] as [string, unknown])),
      hookPaths: new Set(Array.from({ length: Math.floor(random() * 3) }, text)),
      truncated: random() < 0.5,
      since: BigInt(Math.floor(random() * 1e9)),
    };
    assert.equal(packedJsonBytes(guard), viaTree(guard), `round ${round}`);
  }
  const large = { notes: new Map(Array.from({ length: 5000 }, (_, i) => [`/w/dir${i}/.vscode/settings.json`, { states: ['missing', `file:${i}`] }])) };
  assert.equal(packedJsonBytes(large), viaTree(large));
  assert.ok(viaTree(large).length > 64 * 1024, 'larger than the first buffer');
  assert.equal(packedJsonBytes({ after: 'large' }), viaTree({ after: 'large' }), 'and a small one after it');
});

test.run();
