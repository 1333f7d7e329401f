#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Proves the published artefact works: builds the prebuild, packs the tarball, installs it into an
// empty directory (where npm does not run our install script), imports it and calls probe().
// Prints one JSON line {tarball, files, probe} on success; exits non-zero with the reason otherwise.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'zero-sandbox-smoke-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
// npm's own CLI script under this node: `npm run` names it in npm_execpath. Calling npm.cmd with
// execFileSync fails with EINVAL on Windows (Node >= 20.12.2 refuses .cmd files without a shell).
const npmCli = process.env.npm_execpath;
const npm = (args, cwd) => (npmCli !== undefined && npmCli.endsWith('.js')
  ? run(process.execPath, [npmCli, ...args], cwd)
  : run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, cwd));
// A command that proves it ran sandboxed (and on POSIX that /etc is read-only), in the OS's shell.
const sandboxedCommand = process.platform === 'win32'
  ? "['cmd.exe', '/d', '/c', 'echo sandboxed-%ZERO_SANDBOXED%']"
  : "['/bin/sh', '-c', 'echo sandboxed-$ZERO_SANDBOXED; touch /etc/x 2>/dev/null || echo etc-readonly']";

try {
  npm(['run', 'prebuild', '--silent'], root);
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  const app = join(work, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'smoke-app', version: '1.0.0', type: 'module' }));
  npm(['install', '--no-audit', '--no-fund', tarball], app);
  const script =
    "const m = await import('zero-sandbox');" +
    'const r = await m.probe();' +
    `let ran = null; if (r.canEnforceDefaultPolicy) { const res = await m.runSandboxed(${sandboxedCommand}); ran = res.stdout.trim(); }` +
    'console.log(JSON.stringify({platform: r.platform, backend: r.backend, canEnforceDefaultPolicy: r.canEnforceDefaultPolicy, ran, exports: Object.keys(m).sort()}));';
  const probe = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], app).trim());
  // The installed CLI's script under this node (node_modules/.bin holds a .cmd shim on Windows).
  const cli = join(app, 'node_modules', 'zero-sandbox', 'dist', 'cli', 'main.js');
  const doctor = JSON.parse(run(process.execPath, [cli, 'doctor', '--json'], app));
  const installed = readdirSync(join(app, 'node_modules', 'zero-sandbox'));
  process.stdout.write(`${JSON.stringify({ tarball: packed[0].filename, files, installed, probe, doctorPlatform: doctor.platform })}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
