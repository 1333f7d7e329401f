// SPDX-License-Identifier: MIT
// npm with the network: an approved `npm install` (network allow) fills the workspace's managed
// cache; a second install in that workspace works offline with the network denied; and a new
// workspace installs offline from what the host cache already holds, read-only, without ever
// writing to it. Exactly one registry fetch (is-number) per run.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildRuntimeLayout } from '../../lib/sandbox/runtime-state.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { buildHostWriteProbe, diffListings, listHost, listTree, type Listing } from '../fixtures/workload/host.js';
import { makeTree, sandboxTest, sh, TREE_BASE, type Tree } from '../helpers/sandbox.js';

const userCache = mkdtempSync(join(TREE_BASE, 'zs-workload-npm-usercache-'));
process.env.XDG_CACHE_HOME = userCache;
// The user's npm cache as our own process sees it: empty at first, so the first workspace's
// managed cache holds only what its install fetched (and seeding it later is quick).
process.env.npm_config_cache = join(userCache, 'host-npm-empty');

const TIMEOUT = { timeoutMs: 180_000 };
const LOAD = 'node -e "const isNumber = require(\'is-number\'); console.log(\'loaded\', isNumber(5), isNumber(\'x\'))"';

function ok(r: RunResult, what: string): void {
  assert.is(r.exitCode, 0, `${what} failed (exit ${r.exitCode}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
}

let first: Tree | undefined;
let hostBefore: Listing | undefined;

sandboxTest('npm install of a registry package succeeds with network allow and the package loads', async () => {
  first = makeTree('zs-workload-npm-');
  hostBefore = listHost();
  const r = await sh(first, `npm init -y >/dev/null && npm install --no-audit --no-fund is-number@7.0.0 && ${LOAD}`, { ...TIMEOUT, network: 'allow' });
  ok(r, 'npm install (network allow)');
  assert.match(r.stdout, /added 1 package/);
  assert.match(r.stdout, /loaded true false\n$/);
  const npmCache = join(buildRuntimeLayout(first.ws, userCache).cacheDir, 'npm', '_cacache');
  assert.ok(readdirSync(join(npmCache, 'content-v2')).length > 0, 'the tarball landed in the managed cache');
});

sandboxTest('a second install in the same workspace works offline with the network denied', async () => {
  assert.ok(first, 'needs the first test');
  const probe = await sh(first, 'node -e "fetch(\'https://registry.npmjs.org/is-number\').then(() => console.log(\'ONLINE\'), () => console.log(\'offline\'))"', TIMEOUT);
  assert.is(probe.stdout, 'offline\n', 'the network really is denied');
  const r = await sh(first, `rm -rf node_modules package-lock.json && npm install --offline --no-audit --no-fund is-number@7.0.0 && ${LOAD}`, TIMEOUT);
  ok(r, 'npm install --offline (network deny)');
  assert.match(r.stdout, /loaded true false\n$/);
});

sandboxTest('a new workspace installs offline from the host cache, read-only, and the host cache does not change', async () => {
  assert.ok(first, 'needs the first test');
  // Play the host: the first workspace's managed npm cache now holds is-number. Point our own
  // (trusted) environment at it as the user's npm cache, as a user with that ~/.npm would have.
  const hostCache = join(buildRuntimeLayout(first.ws, userCache).cacheDir, 'npm');
  process.env.npm_config_cache = hostCache;
  const hostCacheBefore = listTree(hostCache);
  const second = makeTree('zs-workload-npm-');
  try {
    const r = await sh(second, `npm init -y >/dev/null && npm install --offline --no-audit --no-fund is-number@7.0.0 && ${LOAD} && npm config get cache`, TIMEOUT);
    ok(r, 'npm install --offline in a new workspace (network deny)');
    assert.match(r.stdout, /loaded true false\n/);
    const managedNpm = join(buildRuntimeLayout(second.ws, userCache).cacheDir, 'npm');
    assert.is(r.stdout.trim().split('\n').pop(), managedNpm, 'npm used the managed cache, not the host one');
    const content = listTree(join(managedNpm, '_cacache', 'content-v2'));
    assert.ok([...content.values()].some((what) => what.startsWith('link')), 'content is read from the host through links');
    assert.equal(diffListings(hostCacheBefore, listTree(hostCache), second.base), [], 'nothing written to the host npm cache');
  } finally {
    second.cleanup();
  }
});

sandboxTest('no host cache or home file changed during the npm runs, and they are read-only with network allow', async () => {
  assert.ok(first && hostBefore, 'needs the first test');
  assert.equal(diffListings(hostBefore, listHost(), first.base), []);
  assert.is((await sh(first, buildHostWriteProbe(), { network: 'allow' })).stdout, '');
});

test.after(() => {
  first?.cleanup();
  rmSync(userCache, { recursive: true, force: true });
});

test.run();
