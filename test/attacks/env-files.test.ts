// Attack: a sandboxed command appends `NODE_OPTIONS=--require ./evil.js` (or `BASH_ENV=`) to a
// plain `.env`, which stays writable. Gemini CLI on the host later loads the nearest `.env` into
// its environment, and every Node program and shell it starts runs the command's file. Fix: once
// the sandbox is gone, a `.env` (at the top or below it, new or existing) with a new line naming
// an execution-affecting variable, or a link put in its place, is put back byte for byte (removed
// if it was new) and the run fails with the violation; a harmless change (`FOO=bar`) is kept.
// Each test runs in a real sandbox, then loads the host's `.env` the way Gemini CLI does and
// starts programs with it.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';

/** The variables a dotenv parser takes from `content` (the forms used here: KEY=v, export KEY=v, quotes). */
function parseEnv(content: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of content.split(/\r\n|[\r\n\u2028\u2029]/)) {
    const m = /^\s*(?:export\s+)?([\w.-]+)\s*(?:=|:\s)\s*(.*?)\s*$/.exec(line);
    if (m === null) continue;
    const value = m[2] as string;
    out[m[1] as string] = /^(["'`]).*\1$/.test(value) ? value.slice(1, -1) : value.replace(/\s+#.*$/, '');
  }
  return out;
}

/** As Gemini CLI finds its `.env`: the nearest one from `dir` up to the workspace. */
function nearestEnv(t: Tree, dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.env'))) return join(at, '.env');
    if (at === t.ws || dirname(at) === at) return undefined;
  }
}

/** Starts `argv` with the variables of `content` added as Gemini CLI adds them (those not already set). */
function startWith(content: string, argv: string[]): void {
  const env: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: undefined, BASH_ENV: undefined };
  for (const [key, value] of Object.entries(parseEnv(content))) if (env[key] === undefined) env[key] = value;
  spawnSync(argv[0] as string, argv.slice(1), { env, stdio: 'ignore', timeout: 30_000 });
}

function put(t: Tree, file: string, content: string): string {
  const path = join(t.ws, ...file.split('/'));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

function protectedDenials(r: { denials: Array<{ capability: { kind: string; scope?: string }; reason?: string }> }) {
  return r.denials.filter((d) => d.capability.kind === 'protected_metadata');
}

sandboxTest('attack: NODE_OPTIONS and BASH_ENV planted in .env files are undone after the run; the host agent loading them runs nothing', async () => {
  const t = makeTree();
  try {
    const ranNode = join(t.outside, 'ran-node');
    const ranBash = join(t.outside, 'ran-bash');
    const top = put(t, '.env', 'API_KEY=1\r\nPORT=3000\n');
    const nested = put(t, 'packages/a/.env', 'DATABASE_URL=postgres://localhost/app\n');
    const created = join(t.ws, 'packages', 'b', '.env');
    mkdirSync(dirname(created), { recursive: true });
    const linked = put(t, 'packages/c/.env', 'PORT=3001\n');
    const evilJs = join(t.ws, 'evil.js');
    const evilSh = join(t.ws, 'evil.sh');
    const planted = {
      top: `NODE_OPTIONS=--require ${evilJs}\n`,
      nested: `bash_env=${evilSh}\n`,
      created: `export BASH_ENV="${evilSh}"\n`,
    };
    const r = await sh(t, [
      `printf '%s' "require('fs').writeFileSync('${ranNode}', '')" > evil.js`,
      `printf '%s\\n' "touch '${ranBash}'" > evil.sh`,
      `printf '%s' '${planted.top}' >> .env`,
      `printf '%s' '${planted.nested}' >> packages/a/.env`,
      `printf '%s' '${planted.created}' > packages/b/.env`,
      `printf '%s' '${planted.top}' > evil.env && rm packages/c/.env && ln -s ../../evil.env packages/c/.env`,
      'echo written',
    ].join(' && '));
    assert.match(r.stdout, /written/, 'the writes succeed inside the sandbox');

    // What the command wrote would run: the same lines, loaded as Gemini CLI loads them.
    startWith(`API_KEY=1\r\nPORT=3000\n${planted.top}`, [process.execPath, '-e', '0']);
    assert.ok(existsSync(ranNode), 'the planted NODE_OPTIONS runs evil.js in a node process');
    startWith(planted.created, ['bash', '-c', 'true']);
    assert.ok(existsSync(ranBash), 'the planted BASH_ENV runs evil.sh in a bash process');
    rmSync(ranNode);
    rmSync(ranBash);

    assert.is(readFileSync(top, 'utf8'), 'API_KEY=1\r\nPORT=3000\n', 'the top .env is back byte for byte');
    assert.is(readFileSync(nested, 'utf8'), 'DATABASE_URL=postgres://localhost/app\n', 'the nested .env is back byte for byte');
    assert.not.ok(existsSync(created), 'the new .env is removed');
    assert.not.ok(lstatSync(linked).isSymbolicLink(), 'the link put in place of a .env is gone');
    assert.is(readFileSync(linked, 'utf8'), 'PORT=3001\n', 'and the .env is back');
    assert.ok(existsSync(evilJs), 'other files the command wrote stay');
    assert.equal([...r.protectedPathViolations].sort(), [top, nested, created, linked].sort());
    const denials = protectedDenials(r);
    assert.equal(denials.map((d) => d.capability.scope ?? '').sort(), [top, nested, created, linked].sort());
    assert.match(denials.find((d) => d.capability.scope === top)?.reason ?? '', /NODE_OPTIONS/);
    assert.match(denials.find((d) => d.capability.scope === nested)?.reason ?? '', /bash_env/);
    assert.is(r.exitCode, 1);

    // The host agent started in each directory loads what is there now: nothing of the command's runs.
    for (const dir of [t.ws, ...['a', 'b', 'c'].map((p) => join(t.ws, 'packages', p))]) {
      const env = nearestEnv(t, dir);
      const content = env === undefined ? '' : readFileSync(env, 'utf8');
      startWith(content, [process.execPath, '-e', '0']);
      startWith(content, ['bash', '-c', 'true']);
    }
    assert.not.ok(existsSync(ranNode), 'no node process started with the host .env runs evil.js');
    assert.not.ok(existsSync(ranBash), 'no bash started with the host .env runs evil.sh');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a harmless change to .env files (FOO=bar, a URL with /home in it) is kept and the run exits 0', async () => {
  const t = makeTree();
  try {
    const top = put(t, '.env', 'API_KEY=1\n');
    const nested = put(t, 'packages/a/.env', 'PATH=/opt/bin\n');
    const r = await sh(t, 'echo FOO=bar >> .env && echo DATABASE_URL=postgres://localhost/home >> packages/a/.env');
    assert.is(r.exitCode, 0);
    assert.equal(r.protectedPathViolations, []);
    assert.equal(protectedDenials(r), []);
    assert.is(readFileSync(top, 'utf8'), 'API_KEY=1\nFOO=bar\n');
    assert.is(readFileSync(nested, 'utf8'), 'PATH=/opt/bin\nDATABASE_URL=postgres://localhost/home\n');
  } finally {
    t.cleanup();
  }
});

test.run();
