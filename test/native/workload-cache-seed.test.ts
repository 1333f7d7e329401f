// SPDX-License-Identifier: MIT
// Seeding the managed npm cache from the host's: index copied, content symlinked, built aside and
// moved in only over an empty target, never through a symlink; host cache paths and GOPROXY.
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildGoProxy, buildHostGoDownloadDir, buildHostNpmCache, isNpmMutable, seedNpmCache } from '../../lib/sandbox/cache-seed.js';
import { acquireRuntimeState, buildNeedsNpmSeed } from '../../lib/sandbox/runtime-state.js';
import { withScratch } from '../fixtures/workload/host.js';
import { TREE_BASE } from '../helpers/sandbox.js';

function fakeHostCache(dir: string): string {
  const host = join(dir, 'host-npm');
  const index = join(host, '_cacache', 'index-v5', 'ab', 'cd');
  const content = join(host, '_cacache', 'content-v2', 'sha512', '12', '34');
  mkdirSync(index, { recursive: true });
  mkdirSync(content, { recursive: true });
  mkdirSync(join(host, '_cacache', 'tmp'));
  mkdirSync(join(host, '_logs'));
  writeFileSync(join(index, 'bucket'), 'line\n');
  writeFileSync(join(content, 'blob'), 'tarball');
  writeFileSync(join(host, '_logs', 'debug.log'), 'log');
  symlinkSync('/etc/passwd', join(content, 'sneaky'));
  return host;
}

/** Seeds an empty managed cache from a fresh fake host cache in `dir`. */
function seedFresh(dir: string, budgetMs?: number): { host: string; target: string; stats: ReturnType<typeof seedNpmCache> } {
  const host = fakeHostCache(dir);
  const target = join(dir, 'managed-npm');
  mkdirSync(target);
  return { host, target, stats: seedNpmCache(host, join(dir, 'staging'), target, budgetMs) };
}

test('the host npm and Go caches are found where the tools look', () => {
  assert.is(buildHostNpmCache({}, '/home/u'), '/home/u/.npm');
  assert.is(buildHostNpmCache({ npm_config_cache: '/c/npm' }, '/home/u'), '/c/npm');
  assert.is(buildHostNpmCache({ NPM_CONFIG_CACHE: '/C/npm' }, '/home/u'), '/C/npm');
  assert.is(buildHostNpmCache({ npm_config_cache: 'relative' }, '/home/u'), '/home/u/.npm');
  assert.is(buildHostGoDownloadDir({}, '/home/u'), '/home/u/go/pkg/mod/cache/download');
  assert.is(buildHostGoDownloadDir({ GOPATH: '/gp:/other' }, '/home/u'), '/gp/pkg/mod/cache/download');
  assert.is(buildHostGoDownloadDir({ GOMODCACHE: '/m' }, '/home/u'), '/m/cache/download');
});

test('GOPROXY reads the host module cache first, then the user list; off stays off', () => {
  assert.is(buildGoProxy('/d', undefined), 'file:///d,https://proxy.golang.org,direct');
  assert.is(buildGoProxy('/d', 'https://corp.example|direct'), 'file:///d,https://corp.example|direct');
  assert.is(buildGoProxy('/d', 'off'), 'off');
});

test('only npm content is immutable', () => {
  assert.ok(isNpmMutable('_cacache/index-v5/ab/cd/x'));
  assert.not.ok(isNpmMutable('_cacache/content-v2/sha512/12/34/x'));
});

test('seeding copies the index, links content, skips logs, tmp and symlinks, and moves in over the empty target', () =>
  withScratch(TREE_BASE, (dir) => {
    const { host, target, stats } = seedFresh(dir);
    assert.equal(stats, { copied: 1, linked: 1, complete: true });
    const bucket = join(target, '_cacache', 'index-v5', 'ab', 'cd', 'bucket');
    assert.not.ok(lstatSync(bucket).isSymbolicLink(), 'npm appends to index buckets in place: a copy');
    assert.is(readFileSync(bucket, 'utf8'), 'line\n');
    const blob = join(target, '_cacache', 'content-v2', 'sha512', '12', '34', 'blob');
    assert.is(readlinkSync(blob), join(host, '_cacache', 'content-v2', 'sha512', '12', '34', 'blob'));
    assert.not.ok(existsSync(join(target, '_cacache', 'content-v2', 'sha512', '12', '34', 'sneaky')));
    assert.equal(readdirSync(join(target, '_cacache')).sort(), ['content-v2', 'index-v5']);
    assert.not.ok(existsSync(join(target, '_logs')));
    assert.not.ok(existsSync(join(dir, 'staging')));
  }));

test('seeding stops at its time budget and still leaves a consistent (smaller) cache', () =>
  withScratch(TREE_BASE, (dir) => {
    const { target, stats } = seedFresh(dir, -1);
    assert.equal(stats, { copied: 0, linked: 0, complete: false });
    assert.equal(readdirSync(join(target, '_cacache')).sort(), ['content-v2', 'index-v5'], 'moved in, holding what was done');
    assert.equal(readdirSync(join(target, '_cacache', 'index-v5')), []);
    assert.not.ok(existsSync(join(dir, 'staging')));
  }));

test('seeding never replaces a used cache nor follows a symlink planted at the target', () =>
  withScratch(TREE_BASE, (dir) => {
    const host = fakeHostCache(dir);
    const used = join(dir, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'mine'), 'x');
    assert.is(seedNpmCache(host, join(dir, 'staging'), used), undefined);
    assert.equal(readdirSync(used), ['mine']);
    const victim = join(dir, 'victim');
    mkdirSync(victim);
    const planted = join(dir, 'planted');
    symlinkSync(victim, planted);
    assert.is(seedNpmCache(host, join(dir, 'staging'), planted), undefined);
    assert.equal(readdirSync(victim), [], 'nothing written through the symlink');
    assert.ok(lstatSync(planted).isSymbolicLink());
    assert.not.ok(existsSync(join(dir, 'staging')), 'the staging dir is always removed');
    assert.is(seedNpmCache(join(dir, 'no-such-cache'), join(dir, 'staging'), used), undefined);
  }));

test('only commands that mention a JS package manager trigger seeding', () => {
  assert.ok(buildNeedsNpmSeed(['npm', 'install']));
  assert.ok(buildNeedsNpmSeed(['/usr/bin/npx', 'tsc']));
  assert.ok(buildNeedsNpmSeed(['/bin/sh', '-c', 'cd app && npm ci']));
  assert.ok(buildNeedsNpmSeed(['/bin/sh', '-c', '(yarn install)']));
  assert.not.ok(buildNeedsNpmSeed(['/bin/sh', '-c', 'cat .npmrc; rm -rf node_modules/npm-run']));
  assert.not.ok(buildNeedsNpmSeed(['make', 'all']));
});

test('the first npm command of a workspace seeds its managed cache, once; other commands never do', () =>
  withScratch(TREE_BASE, (dir) => {
    const env = { HOME: join(dir, 'home'), npm_config_cache: fakeHostCache(dir) };
    const userCacheDir = join(dir, 'cache');
    for (const ws of ['a', 'b']) mkdirSync(join(dir, ws));
    const plain = acquireRuntimeState(join(dir, 'a'), { env, userCacheDir, argv: ['make'] });
    assert.ok(plain);
    assert.is(plain.npmSeed, undefined);
    assert.equal(readdirSync(join(plain.layout.cacheDir, 'npm')), []);
    plain.release();
    const first = acquireRuntimeState(join(dir, 'a'), { env, userCacheDir, argv: ['/bin/sh', '-c', 'npm ci'] });
    assert.ok(first);
    assert.equal(first.npmSeed, { copied: 1, linked: 1, complete: true }, 'a root created earlier is still seeded while its npm cache is empty');
    assert.ok(existsSync(join(first.layout.cacheDir, 'npm', '_cacache', 'index-v5', 'ab', 'cd', 'bucket')));
    assert.ok(existsSync(join(first.layout.root, 'npm-seeded')), 'the marker sits in the root, outside the write roots');
    first.release();
    const again = acquireRuntimeState(join(dir, 'a'), { env, userCacheDir, argv: ['npm', 'test'] });
    assert.is(again?.npmSeed, undefined, 'tried once per root');
    again?.release();
  }));

test.run();
