// SPDX-License-Identifier: MIT
// The user's npmrc reaches npm inside the sandbox without its credentials: registry and scope
// mappings survive (no fallback to the public registry), tokens and logins do not, and the
// original file stays masked.
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildHostNpmrcPath, buildSanitizedNpmrc, writeSanitizedNpmrc } from '../../lib/sandbox/npmrc.js';
import { buildOwnerName, currentHolder } from '../../lib/sandbox/runtime-lease.js';
import { buildRuntimeLayout } from '../../lib/sandbox/runtime-state.js';
import { withScratch } from '../fixtures/workload/host.js';
import { makeTree, sandboxTest, sh, TREE_BASE } from '../helpers/sandbox.js';

const USER_NPMRC = [
  '# my npm settings',
  'registry=https://me:hunter2@registry.example.com/',
  '@acme:registry=https://npm.acme.example/',
  '//npm.acme.example/:_authToken=SECRET-TOKEN',
  '_auth=c2VjcmV0',
  'email=me@example.com',
  'keyfile=/home/me/client.key',
  'fund=false',
  'proxy=http://proxy.example:3128/',
  '',
].join('\n');

test('npm finds the user config where npm would', () => {
  assert.is(buildHostNpmrcPath({}, '/home/u'), '/home/u/.npmrc');
  assert.is(buildHostNpmrcPath({ npm_config_userconfig: '/c/npmrc' }, '/home/u'), '/c/npmrc');
  assert.is(buildHostNpmrcPath({ NPM_CONFIG_USERCONFIG: '/C/npmrc' }, '/home/u'), '/C/npmrc');
});

test('sanitizing keeps registries, scopes and flags, and drops every credential', () => {
  const { text, dropped } = buildSanitizedNpmrc(USER_NPMRC);
  assert.is(
    text,
    [
      '# my npm settings',
      'registry=https://registry.example.com/',
      '@acme:registry=https://npm.acme.example/',
      'fund=false',
      'proxy=http://proxy.example:3128/',
      '',
    ].join('\n'),
  );
  assert.equal(dropped, ['registry (user info)', '//npm.acme.example/:_authToken', '_auth', 'email', 'keyfile']);
  assert.equal(buildSanitizedNpmrc('//r.example/:_password=x\r\nkey=a\\\n').dropped, ['//r.example/:_password', 'key']);
});

test('the copy is rewritten only when the user file is newer, and absent when the user has none', () =>
  withScratch(TREE_BASE, (dir) => {
    const source = join(dir, 'npmrc');
    const target = join(dir, 'copy');
    assert.is(writeSanitizedNpmrc({ npm_config_userconfig: source }, target), undefined);
    writeFileSync(source, 'fund=false\n_authToken=x\n');
    assert.is(writeSanitizedNpmrc({ npm_config_userconfig: source }, target), target);
    assert.is(readFileSync(target, 'utf8'), 'fund=false\n');
    writeFileSync(source, 'fund=true\n');
    const past = new Date(Date.now() - 60_000);
    utimesSync(source, past, past);
    writeSanitizedNpmrc({ npm_config_userconfig: source }, target);
    assert.is(readFileSync(target, 'utf8'), 'fund=false\n', 'older than the copy: kept');
    const future = new Date(Date.now() + 60_000);
    utimesSync(source, future, future);
    writeSanitizedNpmrc({ npm_config_userconfig: source }, target);
    assert.is(readFileSync(target, 'utf8'), 'fund=true\n');
  }));

// The descriptor walk and FIFOs: POSIX only.
const posixTest = process.platform === 'win32' ? test.skip : test;

posixTest('the copy is never written through a link at its name or its temp name, and a FIFO as the user file is not read', () =>
  withScratch(TREE_BASE, (dir) => {
    const source = join(dir, 'npmrc');
    writeFileSync(source, 'fund=false\n');
    const target = join(dir, 'copy');
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'untouched\n');
    symlinkSync(victim, target);
    symlinkSync(victim, `${target}.${buildOwnerName(currentHolder())}.tmp`);
    assert.is(writeSanitizedNpmrc({ npm_config_userconfig: source }, target), target);
    assert.is(readFileSync(victim, 'utf8'), 'untouched\n', 'nothing written where the links point');
    assert.ok(lstatSync(target).isFile(), 'the link at the copy\'s name was replaced by the copy');
    assert.is(readFileSync(target, 'utf8'), 'fund=false\n');
    // A link in place of the copy is never taken as a fresh copy, however new it is.
    rmSync(target);
    symlinkSync(victim, target);
    utimesSync(source, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    writeSanitizedNpmrc({ npm_config_userconfig: source }, target);
    assert.ok(lstatSync(target).isFile());
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    assert.is(writeSanitizedNpmrc({ npm_config_userconfig: fifo }, join(dir, 'copy2')), undefined, 'no copy, and no hang');
  }));

sandboxTest('inside the sandbox npm sees the scope registry but no token, and the original npmrc stays masked', async () => {
  const t = makeTree('zs-workload-npmrc-');
  const userCache = mkdtempSync(join(TREE_BASE, 'zs-workload-npmrc-cache-'));
  const userConfig = join(t.outside, 'user.npmrc');
  writeFileSync(userConfig, USER_NPMRC);
  process.env.XDG_CACHE_HOME = userCache;
  process.env.npm_config_userconfig = userConfig;
  try {
    const r = await sh(t, [
      'echo "$npm_config_userconfig"',
      'npm config get @acme:registry',
      'npm config get registry',
      'npm config get fund',
      'npm config list 2>&1 | grep -c -e SECRET -e hunter2 -e c2VjcmV0',
      // Masked: reading it fails or (Linux) gets an empty file in its place.
      `c=$(cat ${userConfig} 2>/dev/null); [ -n "$c" ] && echo ORIGINAL-READABLE || echo original-masked`,
    ].join('; '), { timeoutMs: 120_000 });
    const copy = join(buildRuntimeLayout(t.ws, userCache).root, 'npmrc');
    assert.is(r.stdout, `${copy}\nhttps://npm.acme.example/\nhttps://registry.example.com/\nfalse\n0\noriginal-masked\n`, r.stderr);
    // The read of the original is reported by path (the kernel saw the mask opened).
    assert.ok(r.denials.some((d) => d.capability.kind === 'filesystem_read' && d.capability.scope === userConfig), JSON.stringify(r.denials));
  } finally {
    delete process.env.npm_config_userconfig;
    delete process.env.XDG_CACHE_HOME;
    t.cleanup();
    rmSync(userCache, { recursive: true, force: true });
  }
});

test.run();
