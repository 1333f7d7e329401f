#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Proves the published artefact works: builds the prebuild, packs the tarball, installs it into an
// empty directory (where npm does not run our install script), imports it and calls probe().
// Prints one JSON line {tarball, files, probe} on success; exits non-zero with the reason otherwise.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const work = mkdtempSync(join(tmpdir(), 'zero-sandbox-smoke-'));
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

try {
  run(npm, ['run', 'prebuild', '--silent'], root);
  const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', work], root));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  const app = join(work, 'app');
  run('mkdir', ['-p', app], work);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'smoke-app', version: '1.0.0', type: 'module' }));
  run(npm, ['install', '--no-audit', '--no-fund', tarball], app);
  const script =
    "const m = await import('zero-sandbox');" +
    'const r = await m.probe();' +
    "let ran = null; if (r.canEnforceDefaultPolicy) { const res = await m.runSandboxed(['/bin/sh', '-c', 'echo sandboxed-$ZERO_SANDBOXED; touch /etc/x 2>/dev/null || echo etc-readonly']); ran = res.stdout.trim(); }" +
    'console.log(JSON.stringify({platform: r.platform, backend: r.backend, canEnforceDefaultPolicy: r.canEnforceDefaultPolicy, ran, exports: Object.keys(m).sort()}));';
  const probe = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], app).trim());
  const doctor = JSON.parse(run(join(app, 'node_modules', '.bin', 'zero-sandbox'), ['doctor', '--json'], app));
  const installed = readdirSync(join(app, 'node_modules', 'zero-sandbox'));
  process.stdout.write(`${JSON.stringify({ tarball: packed[0].filename, files, installed, probe, doctorPlatform: doctor.platform })}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
