// The packed tarball installs into an empty directory, where npm 11 does not run our install
// script, with only node, npm and sh on PATH (no compiler), and works there from its bundled prebuild:
// import('zero-sandbox'), probe(), a sandboxed command, `analyze` with the WebAssembly shell parser
// it ships, `run`, and the CLI even with a V8 code cache V8 must reject. It ships only what runs: no
// source maps (their TypeScript sources are not shipped), one copy of the CLI, a LICENSE.
// Without its prebuilds (a platform it ships none for) it still installs with no compiler: the
// analyzer works and every sandboxed run is refused. Packing without a fresh prebuild for this
// platform is refused.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';
import { MUST_WORK } from '../helpers/probe.js';

test('npm pack → install into an empty dir with no compiler → import, probe(), sandboxed run, CLI', () => {
  const out = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'smoke-pack.mjs')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 480_000,
  });
  assert.is(out.status, 0, out.stderr);
  const lastLine = out.stdout.trim().split('\n').pop() ?? '';
  const result = JSON.parse(lastLine) as {
    files: string[];
    installed: string[];
    probe: { platform: string; canEnforceDefaultPolicy: boolean; exports: string[]; ran: string | null };
    cliRun: string | null;
    doctorPlatform: string;
    dependencies: string[];
    compilers: string[];
    analysis: { categories: string[]; programs: string[] };
    license: string;
    versionWithBadCache: string;
    withoutPrebuild: null | {
      installStatus: number | null;
      installSaid: string[];
      destructive: boolean | null;
      runStatus: number | null;
      runSaid: string;
      doctorStatus: number | null;
      doctorMissing: string[] | null;
      doctorAnalyzer: boolean | null;
      api: string;
    };
  };
  if (process.platform !== 'win32') assert.equal(result.compilers, [], 'no compiler, make or python may be reachable during the install');
  assert.ok(result.files.includes('dist/lib/bash/tree-sitter-bash.wasm'), 'the bash grammar ships');
  assert.ok(result.dependencies.includes('web-tree-sitter'));
  assert.not.ok(result.dependencies.includes('tree-sitter') || result.dependencies.includes('tree-sitter-bash'), 'no native parser is installed');
  // Parsed for real (a for loop is beyond the fast parser): network, not unparseable.
  assert.equal(result.analysis.categories, ['network', 'shell']);
  assert.equal(result.analysis.programs, ['curl']);
  assert.equal(result.files.filter((f) => f.endsWith('.map')), [], 'no source maps (their sources are not shipped)');
  assert.equal(result.files.filter((f) => f.startsWith('dist/lib/cli/')), [], 'one copy of the CLI: the bundle');
  assert.ok(result.files.includes('LICENSE'));
  assert.ok(result.installed.includes('LICENSE'));
  assert.is(result.license, 'MIT');
  assert.match(result.versionWithBadCache, /^zero-sandbox \d+\.\d+\.\d+/);
  assert.ok(result.files.some((f) => f.startsWith('prebuilds/') && f.endsWith('.node')), 'the tarball carries a prebuild');
  assert.ok(result.files.includes('dist/lib/index.js'));
  assert.not.ok(result.files.some((f) => f.startsWith('dist/test/')), 'tests are not published');
  assert.is(result.probe.platform, process.platform);
  assert.ok(result.probe.exports.includes('probe'));
  assert.ok(result.probe.exports.includes('SandboxError'));
  assert.is(result.doctorPlatform, process.platform);
  if (process.platform === 'linux') assert.ok(result.files.some((f) => f.endsWith('/zero_sandbox_init')), 'the init helper ships');
  if (process.platform !== 'win32') {
    // Without a prebuild for the platform and with no compiler, the install script's build fails
    // and the install still succeeds; nothing runs unsandboxed.
    const np = result.withoutPrebuild!;
    assert.is(np.installStatus, 0, JSON.stringify(np));
    assert.ok(np.installSaid.some((line) => line.includes('no prebuilt addon')), 'the install says what is missing');
    assert.is(np.destructive, true, 'the analyzer works without the addon');
    assert.is(np.runStatus, 125, np.runSaid);
    assert.match(np.runSaid, /native_unavailable/);
    assert.not.match(np.runSaid, /^ran$/m, 'the command did not run');
    assert.is(np.doctorStatus, 1);
    assert.equal(np.doctorMissing, ['addon']);
    assert.is(np.doctorAnalyzer, true);
    assert.is(np.api, 'native_unavailable', 'runSandboxed refuses');
  }
  if (MUST_WORK && process.platform === 'linux') {
    assert.ok(result.probe.canEnforceDefaultPolicy);
    assert.is(result.probe.ran, 'sandboxed-1\netc-readonly', 'a real sandboxed command ran from the installed package');
    assert.is(result.cliRun, 'cli-1', 'the installed CLI ran a sandboxed command');
  }
});

/** A checkout with native sources and the prepack check, and nothing else. */
function fakeCheckout(): string {
  const fake = mkdtempSync(join(tmpdir(), 'zs-prepack-'));
  mkdirSync(join(fake, 'scripts'));
  mkdirSync(join(fake, 'native'));
  writeFileSync(join(fake, 'native', 'a.cc'), '');
  writeFileSync(join(fake, 'binding.gyp'), '{}');
  copyFileSync(join(REPO_ROOT, 'scripts', 'check-prebuild.mjs'), join(fake, 'scripts', 'check-prebuild.mjs'));
  return fake;
}
const prepack = (dir: string) => spawnSync(process.execPath, [join(dir, 'scripts', 'check-prebuild.mjs')], { encoding: 'utf8' });

test('npm pack refuses (prepack) without a prebuild for this platform', () => {
  const fake = fakeCheckout();
  try {
    const out = prepack(fake);
    assert.is(out.status, 1);
    assert.match(out.stderr, 'no prebuilt addon');
    assert.match(out.stderr, 'npm run prebuild');
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});

test('npm pack refuses (prepack) a prebuild older than the native sources, and accepts a fresh one', () => {
  const fake = fakeCheckout();
  try {
    const target = join(fake, 'prebuilds', `${process.platform}-${process.arch}`);
    mkdirSync(target, { recursive: true });
    const built = [join(target, 'zero-sandbox.node'), ...(process.platform === 'linux' ? [join(target, 'zero_sandbox_init')] : [])];
    for (const file of built) writeFileSync(file, '');
    const past = new Date(Date.now() - 3_600_000);
    for (const file of built) utimesSync(file, past, past);
    const stale = prepack(fake);
    assert.is(stale.status, 1);
    assert.match(stale.stderr, 'older than the native sources');
    const future = new Date(Date.now() + 3_600_000);
    for (const file of built) utimesSync(file, future, future);
    const fresh = prepack(fake);
    assert.is(fresh.status, 0, fresh.stderr);
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});

test.run();
