// SPDX-License-Identifier: MIT
// Everyday developer work succeeds in a real sandbox under the default policy (network denied):
// make, python venv + pip, unittest, node, npm init + test, tar/gzip, git clone/branch/commit and
// git init/commit; tools write their caches and logs to the managed state, and no host cache or
// home file changes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildRuntimeLayout } from '../../lib/sandbox/runtime-state.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { buildHostWriteProbe, copyProject, diffListings, listHost, type Listing } from '../fixtures/workload/host.js';
import { makeTree, sandboxTest, sh, TREE_BASE, type Tree } from '../helpers/sandbox.js';

// The managed state of these tests goes to a private user cache dir, so ~/.cache must not change
// at all (XDG_CACHE_HOME is where our own process says the user cache dir is).
const userCache = mkdtempSync(join(TREE_BASE, 'zs-workload-usercache-'));
process.env.XDG_CACHE_HOME = userCache;

const GIT = 'git -c user.name=workload -c user.email=workload@example.com';
const TIMEOUT = { timeoutMs: 180_000 };

function ok(r: RunResult, what: string): void {
  assert.is(r.exitCode, 0, `${what} failed (exit ${r.exitCode}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
}

/** Runs `fn` with a fresh workspace holding the fixture project; checks the host did not change. */
async function withProject(fn: (t: Tree) => Promise<void>): Promise<void> {
  const t = makeTree('zs-workload-');
  const before: Listing = listHost();
  try {
    copyProject(t.ws);
    await fn(t);
    assert.equal(diffListings(before, listHost(), t.base), [], 'no host cache or home file changed');
    assert.is((await sh(t, buildHostWriteProbe())).stdout, '', 'the host caches and home stay read-only');
  } finally {
    t.cleanup();
  }
}

function managed(t: Tree): ReturnType<typeof buildRuntimeLayout> {
  return buildRuntimeLayout(t.ws, userCache);
}

sandboxTest('make builds and runs a small C program', () =>
  withProject(async (t) => {
    const r = await sh(t, 'make >/dev/null && ./hello && ls *.o | wc -l && make clean >/dev/null && ls', TIMEOUT);
    ok(r, 'make');
    assert.match(r.stdout, /^hello from make\n\s*2\n/);
    assert.not.match(r.stdout, /\.o\n/, 'make clean removed the objects');
  }));

sandboxTest('python3 -m venv creates a venv whose pip runs (--version, list) without the network', () =>
  withProject(async (t) => {
    const r = await sh(t, 'python3 -m venv venv && venv/bin/python -c "import sys; print(sys.prefix)" && venv/bin/pip --version && venv/bin/pip list', TIMEOUT);
    ok(r, 'venv + pip');
    assert.match(r.stdout, new RegExp(`${t.ws}/venv\\n`));
    assert.match(r.stdout, /^pip \d+/m);
    assert.match(r.stdout, /Package\s+Version/);
    assert.ok(existsSync(join(t.ws, 'venv', 'pyvenv.cfg')));
  }));

sandboxTest('python3 -m unittest discovers and passes the tests (temp files included)', () =>
  withProject(async (t) => {
    const r = await sh(t, 'python3 -m unittest -v 2>&1', TIMEOUT);
    ok(r, 'unittest');
    assert.match(r.stdout, /Ran 2 tests/);
    assert.match(r.stdout, /\nOK\n/);
  }));

sandboxTest('node runs a script that writes to the workspace and TMPDIR', () =>
  withProject(async (t) => {
    const r = await sh(t, 'node script.mjs', TIMEOUT);
    ok(r, 'node');
    assert.is(r.stdout, 'sum=6 files=data.json tmp=scratch\n');
    assert.is(readFileSync(join(t.ws, 'out', 'data.json'), 'utf8'), '{"sum":6}');
  }));

sandboxTest('npm init -y and npm test work; npm writes its cache and _logs into the managed state', () =>
  withProject(async (t) => {
    const r = await sh(t, 'npm init -y >/dev/null && npm pkg set scripts.test="node npm-test.cjs" && npm test && npm config get cache', TIMEOUT);
    ok(r, 'npm init + test');
    assert.match(r.stdout, /npm test passed/);
    const layout = managed(t);
    assert.is(r.stdout.trim().split('\n').pop(), join(layout.cacheDir, 'npm'));
    assert.ok(JSON.parse(readFileSync(join(t.ws, 'package.json'), 'utf8')).name);
    const logs = readdirSync(join(layout.cacheDir, 'npm', '_logs'));
    assert.ok(logs.some((name) => name.endsWith('-debug-0.log')), `npm debug logs in the managed cache: ${logs.join(', ')}`);
  }));

sandboxTest('tar and gzip create and extract archives', () =>
  withProject(async (t) => {
    const r = await sh(t, [
      'mkdir -p pkg/sub && echo one > pkg/a.txt && echo two > pkg/sub/b.txt',
      'tar czf pkg.tgz pkg && mkdir x && tar xzf pkg.tgz -C x && cat x/pkg/a.txt x/pkg/sub/b.txt',
      'gzip -k pkg/a.txt && gunzip -c pkg/a.txt.gz && tar tzf pkg.tgz | sort',
    ].join(' && '), TIMEOUT);
    ok(r, 'tar/gzip');
    assert.is(r.stdout, 'one\ntwo\none\npkg/\npkg/a.txt\npkg/sub/\npkg/sub/b.txt\n');
    assert.ok(statSync(join(t.ws, 'pkg', 'a.txt.gz')).size > 0);
  }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=workload', '-c', 'user.email=workload@example.com', ...args], { cwd, encoding: 'utf8' });
}

sandboxTest('git clone from a local path, branch and commit work; the existing repo keeps its hooks, and its config is put back', () =>
  withProject(async (t) => {
    // A source repository outside every write root, and the workspace itself an existing repo.
    git(t.outside, 'init', '-q', '-b', 'main');
    writeFileSync(join(t.outside, 'README'), 'upstream\n');
    git(t.outside, 'add', 'README');
    git(t.outside, 'commit', '-qm', 'upstream');
    git(t.ws, 'init', '-q');
    const config = readFileSync(join(t.ws, '.git', 'config'), 'utf8');
    const hooks = readdirSync(join(t.ws, '.git', 'hooks')).sort();
    const upstream = git(t.outside, 'rev-parse', 'HEAD');
    const r = await sh(t, [
      `${GIT} clone -q ${t.outside} clone`,
      'cd clone',
      `${GIT} checkout -qb feature`,
      'echo change >> README && echo new > NEW',
      `${GIT} add README NEW && ${GIT} commit -qm "feature work"`,
      `${GIT} config branch.feature.description "set in the clone"`,
      `${GIT} log --format=%s main..feature && ${GIT} branch --format="%(refname:short)" | sort`,
      'cd ..',
      '(echo "#!/bin/sh" > .git/hooks/pre-commit) 2>/dev/null || echo HOOK-DENIED',
      // The config is writable inside (git remote add works); a program-running key is undone after.
      `${GIT} config core.hooksPath /tmp/evil`,
    ].join(' && '), TIMEOUT);
    assert.is(r.stdout, 'feature work\nfeature\nmain\nHOOK-DENIED\n', r.stderr);
    assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.is(r.exitCode, 1, 'a run that left a program-running config change fails');
    assert.is(git(join(t.ws, 'clone'), 'log', '-1', '--format=%s', 'feature').trim(), 'feature work');
    assert.is(git(t.outside, 'rev-parse', 'HEAD'), upstream, 'the source repository did not change');
    assert.equal(readdirSync(t.outside).sort(), ['.git', 'README']);
    assert.is(readFileSync(join(t.ws, '.git', 'config'), 'utf8'), config);
    assert.equal(readdirSync(join(t.ws, '.git', 'hooks')).sort(), hooks);
  }));

sandboxTest('git init of a new repository and a first commit work inside the workspace', () =>
  withProject(async (t) => {
    const r = await sh(t, [
      'git init -q fresh && cd fresh',
      'echo hello > hello.txt',
      `${GIT} add hello.txt && ${GIT} commit -qm "first commit"`,
      `${GIT} config core.autocrlf false`,
      `${GIT} log --format=%s && ${GIT} status --porcelain | wc -l | tr -d ' '`,
    ].join(' && '), TIMEOUT);
    ok(r, 'git init + commit');
    assert.is(r.stdout, 'first commit\n0\n');
    assert.is(git(join(t.ws, 'fresh'), 'log', '-1', '--format=%s').trim(), 'first commit');
  }));

sandboxTest('a workspace that holds the user cache dir keeps its managed state in the temp dir, usable inside', () =>
  withProject(async (t) => {
    process.env.XDG_CACHE_HOME = join(t.ws, '.cache');
    const layout = buildRuntimeLayout(t.ws, join(t.ws, '.cache'));
    try {
      const r = await sh(t, 'npm config get cache && npm init -y >/dev/null && ls "$npm_config_cache/_logs" | wc -l | tr -d " "', TIMEOUT);
      ok(r, 'npm with the temp fallback');
      const [cache, logs] = r.stdout.trim().split('\n');
      assert.is(cache, join(layout.cacheDir, 'npm'));
      assert.ok(Number(logs) >= 1, `npm wrote its logs there (${logs})`);
      assert.ok(layout.root.startsWith(`${tmpdir()}/zero-runtime-`), layout.root);
      assert.not.ok(existsSync(join(t.ws, '.cache')), 'nothing of the state inside the workspace');
    } finally {
      process.env.XDG_CACHE_HOME = userCache;
      rmSync(layout.root, { recursive: true, force: true });
      rmSync(`${layout.root}.leases`, { recursive: true, force: true });
    }
  }));

let hasCargo = false;
try {
  execFileSync('cargo', ['--version'], { stdio: 'ignore' });
  hasCargo = true;
} catch {
  // no Rust toolchain on this machine
}

(hasCargo ? sandboxTest : test.skip)('cargo new + build --offline work; cargo keeps its locks in the managed CARGO_HOME', () =>
  withProject(async (t) => {
    const r = await sh(t, 'cargo new -q --vcs none app && cd app && cargo build -q --offline && ./target/debug/app', TIMEOUT);
    ok(r, 'cargo');
    assert.is(r.stdout, 'Hello, world!\n');
    const cargoHome = join(managed(t).dataDir, 'cargo');
    assert.ok(readdirSync(cargoHome).some((name) => name.startsWith('.package-cache')), 'cargo lock files in the managed CARGO_HOME');
  }));

// At exit, not after the last test: a run's lease of the managed state lingers 3 s, and its
// release stamps the user cache dir's state base (the dir came back after an earlier removal).
process.once('exit', () => rmSync(userCache, { recursive: true, force: true }));

test.run();
