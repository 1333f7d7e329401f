// SPDX-License-Identifier: MIT
// lib/sha256.ts against node:crypto: padding boundaries, UTF-8, long input, known vectors.
import { createHash } from 'node:crypto';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { sha256Hex, sha256Hexes } from '../../lib/sha256.js';

const reference = (text: string) => createHash('sha256').update(text).digest('hex');

test('FIPS 180-4 example vectors', () => {
  assert.is(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.is(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.is(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
});

test('every length across the one- and two-block padding boundaries matches node:crypto', () => {
  for (let length = 0; length <= 200; length++) {
    const text = 'x'.repeat(length);
    assert.is(sha256Hex(text), reference(text), `length ${length}`);
  }
});

test('multi-byte UTF-8, lone surrogates and a 1 MB input match node:crypto', () => {
  const inputs = ['/home/ünïcödé/wörkspace', '/tmp/日本語/プロジェクト', 'emoji 🦀🔒', 'lone \ud800 surrogate', '/a/b'.repeat(262_144)];
  for (const text of inputs) assert.is(sha256Hex(text), reference(text), text.slice(0, 40));
});

test('pseudo-random strings match node:crypto', () => {
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 300; i++) {
    const length = next() % 300;
    let text = '';
    for (let j = 0; j < length; j++) text += String.fromCharCode(next() % 0x3000);
    assert.is(sha256Hex(text), reference(text), `case ${i}`);
  }
});

test('sha256Hexes gives sha256Hex of each text, in order, for few texts and for many', () => {
  const texts = ['/home/ünïcödé/wörkspace', 'lone \ud800 surrogate', '', 'emoji 🦀🔒', ...Array.from({ length: 96 }, (_, i) => `/ws/packages/p${i}/dist`)];
  for (const count of [0, 1, 31, 32, 33, texts.length]) {
    const some = texts.slice(0, count);
    assert.equal(sha256Hexes(some), some.map(sha256Hex), `${count} texts`);
  }
});

test.run();
