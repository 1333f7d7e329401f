// SPDX-License-Identifier: MIT
// The write roots of a run's notes read from the head of its file (decodeRoots): the same list a
// whole parse gives, for every file encode and encodeParts write, whatever its paths hold; any
// other layout is left to the whole parse.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { decode, decodeRoots, encode, encodeParts, type SharedNotes } from '../../lib/sandbox/run-notes-file.js';

/** Paths with what JSON escapes or could be mistaken for the array's end. */
const ROOTS = ['/w', '/w/"quoted"', '/w/back\\slash', '/w/ends\\', '/w/]bracket[', '/w/com,ma', '/w/p\u00e9', '/w/\u00ff\u0080', '/w/tab\there', '/w/line\nbreak', '/w/\\"both\\"'];

function notes(roots: string[]): SharedNotes {
  return {
    since: 1234567890123456789n,
    roots,
    gitRoots: [...roots, '/other'],
    configs: new Map([['/w/.git/config', { bytes: Buffer.from('[core]\n"x"]'), state: 'file:1' }]]),
    watched: new Map([['/w/.git/hooks', 'dir:1']]),
    ownEntries: [],
  };
}

test('the roots read from the head are those of the whole parse, as encode and encodeParts write them', () => {
  for (const roots of [ROOTS, [], ['/only'], ROOTS.slice().reverse()]) {
    const given = notes(roots);
    for (const text of [encode(given), Buffer.concat(encodeParts(given)).toString('utf8')]) {
      assert.equal(decodeRoots(text), decode(text)?.roots, JSON.stringify(roots));
      assert.equal(decodeRoots(text), roots);
    }
  }
});

test('another layout or a broken file is left to the whole parse', () => {
  const text = encode(notes(ROOTS));
  const reordered = JSON.stringify({ roots: ROOTS, ...JSON.parse(text) });
  assert.is(decodeRoots(reordered), undefined, 'roots first');
  assert.is(decodeRoots(text.replace('"v":1', '"v":2')), undefined, 'another version');
  assert.is(decodeRoots(text.slice(0, text.indexOf('/w/com'))), undefined, 'cut inside the roots');
  assert.is(decodeRoots(text.replace('"/w",', '1,')), undefined, 'not a string');
  assert.is(decodeRoots(`  ${text}`), undefined, 'not at the start');
});

test.run();
