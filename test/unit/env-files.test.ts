// The `.env` check after the run (env-files.ts): which lines name a variable through which a
// host agent's programs would run other code, and, on the host side alone, what the check keeps,
// puts back and removes (what a command would leave is written between the note and the check).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { execNamesIn, isExecEnvName, MAX_ENV_BYTES, plantedExecNames } from '../../lib/sandbox/env-files.js';
import { checkToolConfigs, noteToolConfigs } from '../../lib/sandbox/tool-configs.js';
import { toBytes } from '../../lib/sandbox/beneath.js';
import { makeTree } from '../helpers/sandbox.js';

test('dotenv syntax variants of an assignment are all seen', () => {
  for (const line of [
    'NODE_OPTIONS=--require /tmp/x.js',
    'export NODE_OPTIONS=--require /tmp/x.js',
    'export\tNODE_OPTIONS="--require /tmp/x.js"',
    'NODE_OPTIONS: --require /tmp/x.js',
    '   NODE_OPTIONS   =   --require /tmp/x.js   # comment',
    "NODE_OPTIONS='--require /tmp/x.js'",
    'NODE_OPTIONS=`--require /tmp/x.js`',
    '\uFEFFNODE_OPTIONS=--require /tmp/x.js',
    '"NODE_OPTIONS"=--require /tmp/x.js',
    'X.NODE_OPTIONS=--require /tmp/x.js',
    'FOO=bar NODE_OPTIONS=--require /tmp/x.js',
  ]) {
    assert.equal(execNamesIn(line), ['NODE_OPTIONS'], line);
  }
});

test('names are matched without case, exact names and prefixes alike', () => {
  assert.equal(execNamesIn('bash_env=./evil.sh'), ['bash_env']);
  assert.equal(execNamesIn('Path=/tmp/evil'), ['Path']);
  assert.equal(execNamesIn('ld_preload=/tmp/x.so'), ['ld_preload']);
  assert.equal(execNamesIn('npm_config_script_shell=/tmp/sh'), ['npm_config_script_shell']);
  assert.equal(execNamesIn('GIT_SSH_COMMAND=/tmp/x'), ['GIT_SSH_COMMAND']);
  assert.equal(execNamesIn('gemini_sandbox_proxy_command=/tmp/x'), ['gemini_sandbox_proxy_command']);
  assert.equal(execNamesIn('GEMINI_CLI_SYSTEM_SETTINGS_PATH=/tmp/s.json'), ['GEMINI_CLI_SYSTEM_SETTINGS_PATH']);
  for (const name of ['NODE_OPTIONS', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'PS4', 'PATHEXT', 'COMSPEC', 'HOME', 'XDG_CONFIG_HOME', 'EDITOR', 'LESSOPEN', 'DYLD_INSERT_LIBRARIES', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'DOTNET_STARTUP_HOOKS', 'CORECLR_PROFILER_PATH', 'ELECTRON_RUN_AS_NODE', 'SSH_ASKPASS', 'BROWSER']) {
    assert.ok(isExecEnvName(name) && isExecEnvName(name.toLowerCase()), name);
  }
});

test('everyday keys, and words of the list inside values or longer names, name nothing', () => {
  for (const line of [
    'FOO=bar',
    'DATABASE_URL=postgres://user:pw@localhost:5432/home',
    'GEMINI_API_KEY=abc',
    'OPENAI_API_KEY=sk-123',
    'PORT=3000',
    'NODE_ENV=production',
    'DATA_DIR=/home/me/path/env',
    'APP_HOME=/srv/app',
    'MY_PATH=/srv',
    '# NODE_OPTIONS is not set here',
    'GIT=1',
    '',
  ]) {
    assert.equal(execNamesIn(line), [], line);
  }
});

test('only lines not in the file before count: unchanged ones and harmless additions are kept', () => {
  const before = 'PATH=/opt/bin\nAPI_KEY=1\n';
  assert.equal(plantedExecNames(before, `${before}FOO=bar\n`), []);
  assert.equal(plantedExecNames(before, 'API_KEY=2\nPATH=/opt/bin\n'), []);
  assert.equal(plantedExecNames(before, `${before}NODE_OPTIONS=--require /tmp/x.js\n`), ['NODE_OPTIONS']);
  // A changed line with the same name is new.
  assert.equal(plantedExecNames(before, 'PATH=/tmp/evil\nAPI_KEY=1\n'), ['PATH']);
  // A commented-out line made live is new.
  assert.equal(plantedExecNames('#BASH_ENV=./x.sh\n', 'BASH_ENV=./x.sh\n'), ['BASH_ENV']);
  // No file before: every line counts.
  assert.equal(plantedExecNames(undefined, 'FOO=1\nEDITOR=/tmp/x\n'), ['EDITOR']);
});

test('every line break dotenv honours separates lines', () => {
  for (const brk of ['\n', '\r\n', '\r', '\u2028', '\u2029']) {
    assert.equal(plantedExecNames('FOO=bar', `FOO=bar${brk}NODE_OPTIONS=--require /tmp/x.js`), ['NODE_OPTIONS'], JSON.stringify(brk));
  }
  // An old line glued to a new one is a new line.
  assert.equal(plantedExecNames('FOO=bar\n', 'FOO=bar NODE_OPTIONS=x\n'), ['NODE_OPTIONS']);
});

/** Runs `fn` with a fresh workspace directory, removed afterwards. */
function withWorkspace(fn: (ws: string) => void): void {
  const t = makeTree('zs-env-files-');
  try {
    fn(t.ws);
  } finally {
    t.cleanup();
  }
}

test('after the run: a planted variable is put back or removed, a harmless change and a deletion are kept', () =>
  withWorkspace((ws) => {
    const top = join(ws, '.env');
    const nested = join(ws, 'packages', 'a', '.env');
    const harmless = join(ws, 'packages', 'b', '.env');
    const gone = join(ws, 'packages', 'c', '.env');
    const mine = 'API_KEY=1\r\nPATH=/opt/bin\n';
    mkdirSync(join(ws, 'packages', 'a'), { recursive: true });
    mkdirSync(join(ws, 'packages', 'b'), { recursive: true });
    mkdirSync(join(ws, 'packages', 'c'), { recursive: true });
    writeFileSync(top, mine);
    writeFileSync(harmless, mine);
    writeFileSync(gone, mine);
    // The scan reports the nested `.env` entries (byte strings) before and after the run.
    const guard = noteToolConfigs([ws], [harmless, gone].map(toBytes));
    writeFileSync(top, `${mine}export node_options="--require /tmp/x.js"\n`);
    writeFileSync(nested, 'FOO=1\nBASH_ENV=./evil.sh\n');
    writeFileSync(harmless, `${mine}FOO=bar\n`);
    rmSync(gone);
    const violations = checkToolConfigs(guard, undefined, [nested, harmless].map(toBytes));
    assert.equal(violations.map((v) => v.path).sort(), [top, nested].sort());
    assert.match(violations.find((v) => v.path === top)?.reason ?? '', /node_options/);
    assert.match(violations.find((v) => v.path === nested)?.reason ?? '', /BASH_ENV/);
    assert.is(readFileSync(top, 'utf8'), mine, 'put back byte for byte');
    assert.not.ok(existsSync(nested), 'a new one is removed');
    assert.is(readFileSync(harmless, 'utf8'), `${mine}FOO=bar\n`, 'a harmless change is kept');
    assert.not.ok(existsSync(gone), 'a deletion is kept');
  }));

test('a .env directory (a Python virtual environment) is neither read-only nor removed', () =>
  withWorkspace((ws) => {
    const venv = join(ws, 'packages', 'a', '.env');
    const guard = noteToolConfigs([ws], []);
    mkdirSync(join(venv, 'bin'), { recursive: true });
    writeFileSync(join(venv, 'bin', 'activate'), 'PATH=/x\n');
    assert.equal(checkToolConfigs(guard, undefined, [toBytes(venv)]), []);
    assert.ok(existsSync(join(venv, 'bin', 'activate')));
    const again = noteToolConfigs([ws], [toBytes(venv)]);
    assert.equal(again.readOnly, []);
  }));

test('a .env larger than the bound fails closed: made so, it is put back; if it was so before, a planted name removes it', () =>
  withWorkspace((ws) => {
    const env = join(ws, '.env');
    writeFileSync(env, 'FOO=1\n');
    let guard = noteToolConfigs([ws]);
    writeFileSync(env, `FOO=1\n${'#'.repeat(MAX_ENV_BYTES)}\n`);
    assert.equal(checkToolConfigs(guard).map((v) => v.path), [env]);
    assert.is(readFileSync(env, 'utf8'), 'FOO=1\n');

    const big = `${'#'.repeat(MAX_ENV_BYTES)}\nPATH=/opt/bin\n`;
    writeFileSync(env, big);
    guard = noteToolConfigs([ws]);
    writeFileSync(env, 'FOO=2\n');
    assert.equal(checkToolConfigs(guard), [], 'no such name: kept');
    assert.is(readFileSync(env, 'utf8'), 'FOO=2\n');
    writeFileSync(env, big);
    guard = noteToolConfigs([ws]);
    writeFileSync(env, 'PATH=/opt/bin\n');
    assert.equal(checkToolConfigs(guard).map((v) => v.path), [env], 'its content before is unknown: every line counts');
    assert.not.ok(existsSync(env));
  }));

test.run();
