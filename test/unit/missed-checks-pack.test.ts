// A run's after-run check as it is published with its notes (packCheck, missed-checks.ts) and read
// back by the run that finishes it for a killed one: every kind of value the guard holds comes back
// as it was, through the JSON text the notes file holds.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { packCheck, unpackCheck } from '../../lib/sandbox/missed-checks.js';
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

test.run();
