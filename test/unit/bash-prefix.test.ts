// SPDX-License-Identifier: MIT
// Our own cases for known-safe segments and command-prefix validation, proposal and matching.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKnownSafeSegment } from '../../lib/bash/known-safe.js';
import { matchCommandPrefix, normalizeLauncherName, proposeCommandPrefix, validateCommandPrefix } from '../../lib/bash/prefix.js';
import { loadShellParser } from '../../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

test('known-safe segments: the always list and the conditional tools', () => {
  const safe = [['ls', '-la'], ['/bin/cat', 'x'], ['git', 'status'], ['git', '--no-pager', 'log', '-5'], ['git', '-c', 'color.ui=never', 'diff'],
    ['git', 'branch', '--show-current'], ['git', 'branch'], ['sed', '-n', '1,20p', 'file'], ['sed', '-n', '5p'], ['find', '.', '-name', 'x'],
    ['rg', 'TODO'], ['base64', '-d', 'x'], ['WC.EXE', '-l']];
  const unsafe = [['git', 'push'], ['git', '-C', 'dir', 'status'], ['git', 'diff', '--output=x'], ['git', 'log', '--exec=x'], ['git', 'branch', '-D', 'x'],
    ['git', '--upload-pack=x', 'status'], ['sed', '-i', 's/a/b/', 'f'], ['sed', '-n', '1p;w out', 'f'], ['find', '.', '-delete'], ['find', '.', '-exec', 'rm', '{}', ';'],
    ['rg', '--pre', 'x', 'y'], ['rg', '-z', 'x'], ['base64', '-o', 'out'], ['npm', 'install'], ['ps', 'aux'], []];
  for (const argv of safe) assert.ok(isKnownSafeSegment(argv, 'linux'), JSON.stringify(argv));
  for (const argv of unsafe) assert.not.ok(isKnownSafeSegment(argv, 'linux'), JSON.stringify(argv));
  assert.not.ok(isKnownSafeSegment(['grep', 'x'], 'win32'));
  assert.ok(isKnownSafeSegment(['echo', 'x'], 'win32'));
  assert.ok(isKnownSafeSegment(['git', 'status'], 'win32'));
});

test('validation trims tokens and refuses control, glob and substitution characters and paths', () => {
  assert.equal(validateCommandPrefix([' cargo ', 'build ']), { ok: true, prefix: ['cargo', 'build'] });
  for (const prefix of [[], ['cargo', ''], ['cargo', 'b*'], ['cargo', '$(x)'], ['cargo', 'a`b`'], ['cargo', 'a\nb'], ['./run'], ['C:go'], ['~/bin/x'],
    ['PYTHON~1.EXE'], ['python.exe:stream'], ['bash', '-lc'], ['sudo', 'apt'], ['busybox'], ['make', 'test'], ['npx', 'x'], [1 as unknown as string]]) {
    const result = validateCommandPrefix(prefix);
    assert.is(result.ok, false, JSON.stringify(prefix));
    if (!result.ok) assert.ok(result.reason.length > 0);
  }
  for (const prefix of [['go', 'test'], ['kubectl', 'get', 'pods'], ['docker', 'ps'], ['gcc-13', '-c'], ['7z', 'x'], ['zstd', '-d']]) {
    assert.ok(validateCommandPrefix(prefix).ok, JSON.stringify(prefix));
  }
});

test('launcher normalization keeps ordinary names intact', () => {
  assert.equal(
    ['python3.11', 'python3.13td', 'Python3.11-DBG', 'pwsh.EXE', 'node-gyp', 'sha256sum', 'gcc-13', 'lua5.4'].map(normalizeLauncherName),
    ['python3', 'python3', 'python3', 'pwsh', 'node-gyp', 'sha256sum', 'gcc', 'lua5'],
  );
});

test('proposals: the single uncovered segment, known-safe tails, and refusals', () => {
  const propose = (command: string, extra: Record<string, unknown> = {}) =>
    proposeCommandPrefix({ toolName: 'bash', args: { command, ...extra }, platform: 'linux' });
  assert.equal(propose('cargo build --release'), ['cargo', 'build', '--release']);
  assert.equal(propose('git status && cargo test -q | tail -5'), ['cargo', 'test', '-q']);
  assert.equal(propose('ls -la'), ['ls', '-la']);
  assert.equal(propose('cargo test && cargo build'), null);
  assert.equal(propose('FOO=1 cargo test'), null);
  assert.equal(propose('cargo test > out'), null);
  assert.equal(propose('cargo test &'), null);
  assert.equal(propose('! cargo test'), null);
  assert.equal(propose('cargo test "$X"'), null);
  assert.equal(propose('cargo test $(pwd)'), null);
  assert.equal(propose('(cargo test)'), null);
  assert.equal(propose('cargo test "unterminated'), null);
  assert.equal(propose('cargo test --all', { prefix_rule: ['cargo', 'test'] }), ['cargo', 'test']);
  assert.equal(propose('cargo test', { prefix_rule: ['cargo', 'build'] }), null);
  assert.equal(propose('cargo test', { prefix_rule: 'cargo test' }), null);
  assert.equal(proposeCommandPrefix({ toolName: 'write_file', args: { command: 'cargo test' }, platform: 'linux' }), null);
  assert.equal(proposeCommandPrefix({ toolName: 'bash', args: {}, platform: 'linux' }), null);
});

test('matching: every segment covered by a prefix or known-safe, at least one real match, persistent first', () => {
  const grants = { persistent: [['cargo', 'test']], session: [['cargo', 'build'], ['cargo', 'test']] };
  assert.equal(matchCommandPrefix('cargo test --all | tail -5', grants, { platform: 'linux' }), { matched: true, prefix: ['cargo', 'test'], session: false });
  assert.equal(matchCommandPrefix('cargo build && ls', grants, { platform: 'linux' }), { matched: true, prefix: ['cargo', 'build'], session: true });
  assert.equal(matchCommandPrefix('ls && pwd', grants, { platform: 'linux' }), { matched: false });
  assert.equal(matchCommandPrefix('cargo test && npm install', grants, { platform: 'linux' }), { matched: false });
  assert.equal(matchCommandPrefix('cargo test > out', grants, { platform: 'linux' }), { matched: false });
  assert.equal(matchCommandPrefix('cargo tests', grants, { platform: 'linux' }), { matched: false });
  assert.equal(matchCommandPrefix('cargo', grants, { platform: 'linux' }), { matched: false });
  assert.equal(matchCommandPrefix('bash -lc x', { session: [['bash', '-lc']] }, { platform: 'linux' }), { matched: false });
});

test.run();
