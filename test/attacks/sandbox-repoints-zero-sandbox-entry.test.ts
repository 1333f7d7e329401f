// Attack: zero-sandbox is installed in the workspace and run from there (`npx zero-sandbox`). Its
// package directory is read-only inside the sandbox, but what `npx` runs is reached through
// links in the writable node_modules: `.bin/zero-sandbox` (a link with npm, a shell shim with
// pnpm) and, with pnpm, `node_modules/zero-sandbox -> .pnpm/...`. The command re-points the link,
// rewrites the shim, replaces the package link by a directory of its own or swaps `.bin` for a
// link, and the next `npx zero-sandbox` runs its code on the host, unsandboxed.
// Fix: the entry points (and every link between them and the package) are noted before the run
// and checked without following links once every process of the sandbox is gone; one that
// changed is put back as installed and reported as a protected-path violation (the run fails).
// The test attacks from a real sandbox through the installed CLI, then runs the host's own
// `npx zero-sandbox --version` and the .bin entry and checks they are the installed package.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { REPO_ROOT } from '../helpers/cli.js';
import { installNpmStyle, installPnpmStyle } from '../helpers/own-install.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function hostEnv(t: Tree): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    XDG_CONFIG_HOME: join(t.base, 'config'),
    ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json'),
    // npx must run the local install, never fetch one.
    npm_config_offline: 'true',
    npm_config_cache: join(t.base, 'npm-cache'),
  };
}

/** Runs `script` (as a build script the engine cannot see into) with the workspace's own CLI. */
function attack(t: Tree, script: string) {
  writeFileSync(join(t.ws, 'build.sh'), `${script}\n`);
  const cli = join(t.ws, 'node_modules', '.bin', 'zero-sandbox');
  return spawnSync(cli, ['run', '--workspace', t.ws, '--', '/bin/sh', 'build.sh'], { cwd: t.ws, env: hostEnv(t), encoding: 'utf8' });
}

/** What the host runs next, both ways a user would: the .bin entry and npx. */
function assertHostRunsInstalled(t: Tree): void {
  const bin = spawnSync(join(t.ws, 'node_modules', '.bin', 'zero-sandbox'), ['--version'], { cwd: t.ws, env: hostEnv(t), encoding: 'utf8' });
  assert.is(bin.stdout, `zero-sandbox ${VERSION}\n`, bin.stderr);
  const npx = spawnSync('npx', ['--no', '--', 'zero-sandbox', '--version'], { cwd: t.ws, env: hostEnv(t), encoding: 'utf8' });
  assert.is(npx.stdout, `zero-sandbox ${VERSION}\n`, npx.stderr);
  const run = spawnSync(join(t.ws, 'node_modules', '.bin', 'zero-sandbox'), ['run', '--workspace', t.ws, '--', 'echo', 'still-sandboxed'], { cwd: t.ws, env: hostEnv(t), encoding: 'utf8' });
  assert.is(run.stdout, 'still-sandboxed\n', run.stderr);
  assert.not.match(bin.stdout + npx.stdout + run.stdout, 'PWNED');
}

const EVIL = `printf '#!/bin/sh\\necho PWNED\\n' > evil.sh && chmod +x evil.sh && mkdir -p evil-bin && cp evil.sh evil-bin/zero-sandbox`;

sandboxTest('npm layout: re-pointing node_modules/.bin/zero-sandbox or swapping .bin for a link is undone and reported; the next npx runs the installed CLI', async () => {
  const t = makeTree('zs-entry-npm-');
  try {
    installNpmStyle(t.ws);
    const link = join(t.ws, 'node_modules', '.bin', 'zero-sandbox');
    const original = readlinkSync(link);
    const repoint = attack(t, `${EVIL} && ln -sfn ../../evil.sh node_modules/.bin/zero-sandbox && echo repointed`);
    assert.is(repoint.stdout, 'repointed\n', repoint.stderr);
    assert.is(repoint.status, 1, 'a run that changed an entry point fails');
    assert.match(repoint.stderr, `${link}: zero-sandbox's own entry point`);
    assert.match(repoint.stderr, 'it was put back as installed');
    assert.is(readlinkSync(link), original);
    assertHostRunsInstalled(t);

    const swap = attack(t, `${EVIL} && mv node_modules/.bin node_modules/bin-old && ln -s ../evil-bin node_modules/.bin && echo swapped`);
    assert.is(swap.stdout, 'swapped\n', swap.stderr);
    assert.is(swap.status, 1);
    assert.match(swap.stderr, `${link}: zero-sandbox's own entry point`);
    assert.is(readlinkSync(link), original);
    assertHostRunsInstalled(t);
  } finally {
    t.cleanup();
  }
});

sandboxTest('pnpm layout: replacing the node_modules/zero-sandbox link or rewriting the .bin shim is undone and reported; the next npx runs the installed CLI', async () => {
  const t = makeTree('zs-entry-pnpm-');
  try {
    installPnpmStyle(t.ws);
    const pkgLink = join(t.ws, 'node_modules', 'zero-sandbox');
    const shim = join(t.ws, 'node_modules', '.bin', 'zero-sandbox');
    const original = readlinkSync(pkgLink);
    const shimText = readFileSync(shim, 'utf8');
    const r = attack(t, [
      EVIL,
      'rm node_modules/zero-sandbox && mkdir -p node_modules/zero-sandbox/dist/cli && echo \'console.log("PWNED")\' > node_modules/zero-sandbox/dist/cli/main.js && echo replaced-link',
      'cp evil.sh node_modules/.bin/zero-sandbox && echo rewrote-shim',
    ].join(' && '));
    assert.is(r.stdout, 'replaced-link\nrewrote-shim\n', r.stderr);
    assert.is(r.status, 1);
    assert.match(r.stderr, `${pkgLink}: zero-sandbox's own entry point`);
    assert.match(r.stderr, `${shim}: zero-sandbox's own entry point`);
    assert.is(readlinkSync(pkgLink), original);
    assert.is(readFileSync(shim, 'utf8'), shimText);
    assert.not.ok(existsSync(join(t.ws, 'node_modules', 'zero-sandbox', 'dist', 'cli', 'main.js')) && readFileSync(join(t.ws, 'node_modules', 'zero-sandbox', 'dist', 'cli', 'main.js'), 'utf8').includes('PWNED'));
    assertHostRunsInstalled(t);
  } finally {
    t.cleanup();
  }
});

sandboxTest('benign: a run that leaves the entry points alone reports nothing and succeeds', async () => {
  const t = makeTree('zs-entry-benign-');
  try {
    installPnpmStyle(t.ws);
    const r = attack(t, 'mkdir -p node_modules/left-pad && echo ok > node_modules/left-pad/index.js && ln -s ../left-pad/index.js node_modules/.bin/left-pad && echo installed');
    assert.is(r.stdout, 'installed\n', r.stderr);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stderr, '');
  } finally {
    t.cleanup();
  }
});

test.run();
