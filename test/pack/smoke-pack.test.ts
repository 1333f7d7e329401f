// The packed tarball installs into an empty directory, where npm 11 does not run our install
// script, with only node, npm and sh on PATH (no compiler), and works there from its bundled prebuild:
// import('zero-sandbox'), probe(), and `analyze` with the WebAssembly shell parser it ships.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';
import { MUST_WORK } from '../helpers/probe.js';

test('npm pack → install into an empty dir → import and probe()', () => {
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
    doctorPlatform: string;
    dependencies: string[];
    compilers: string[];
    analysis: { categories: string[]; programs: string[] };
  };
  if (process.platform !== 'win32') assert.equal(result.compilers, [], 'no compiler, make or python may be reachable during the install');
  assert.ok(result.files.includes('dist/lib/bash/tree-sitter-bash.wasm'), 'the bash grammar ships');
  assert.ok(result.dependencies.includes('web-tree-sitter'));
  assert.not.ok(result.dependencies.includes('tree-sitter') || result.dependencies.includes('tree-sitter-bash'), 'no native parser is installed');
  // Parsed for real (a for loop is beyond the fast parser): network, not unparseable.
  assert.equal(result.analysis.categories, ['network', 'shell']);
  assert.equal(result.analysis.programs, ['curl']);
  assert.ok(result.files.some((f) => f.startsWith('prebuilds/') && f.endsWith('.node')), 'the tarball carries a prebuild');
  assert.ok(result.files.includes('dist/lib/index.js'));
  assert.not.ok(result.files.some((f) => f.startsWith('dist/test/')), 'tests are not published');
  assert.is(result.probe.platform, process.platform);
  assert.ok(result.probe.exports.includes('probe'));
  assert.ok(result.probe.exports.includes('SandboxError'));
  assert.is(result.doctorPlatform, process.platform);
  if (process.platform === 'linux') assert.ok(result.files.some((f) => f.endsWith('/zero_sandbox_init')), 'the init helper ships');
  if (MUST_WORK && process.platform === 'linux') {
    assert.ok(result.probe.canEnforceDefaultPolicy);
    assert.is(result.probe.ran, 'sandboxed-1\netc-readonly', 'a real sandboxed command ran from the installed package');
  }
});

test.run();
