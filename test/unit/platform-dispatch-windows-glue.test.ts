// SPDX-License-Identifier: MIT
// The Windows spawn glue is warning-free (-Wall -Wextra -Werror) under MinGW-w64, is what
// binding.gyp builds on Windows, and the Linux and macOS builds do not include it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1' && process.platform === 'linux';
const root = fileURLToPath(new URL('../../../', import.meta.url));
const cxx = 'x86_64-w64-mingw32-g++-posix';
const present = spawnSync(cxx, ['--version']).status === 0;

test('binding.gyp builds the Windows glue on Windows only, instead of the macOS stub', () => {
  const gyp = JSON.parse(readFileSync(join(root, 'binding.gyp'), 'utf8').split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n')) as {
    targets: Array<{ target_name: string; conditions: Array<[string, { sources?: string[] }]> }>;
  };
  const target = gyp.targets.find((t) => t.target_name === 'zero_sandbox')!;
  const sources = (os: string): string[] => target.conditions.find(([cond]) => cond === `OS=='${os}'`)?.[1].sources ?? [];
  assert.ok(sources('win').includes('native/windows/spawn_glue_windows.cc'));
  assert.not.ok(sources('win').includes('native/macos/spawn_glue_macos.cc'));
  assert.not.ok(sources('linux').includes('native/windows/spawn_glue_windows.cc'));
  assert.not.ok(sources('mac').includes('native/windows/spawn_glue_windows.cc'));
});

if (present || MUST_WORK) {
  test('spawn_glue_windows.cc compiles with -Wall -Wextra -Werror under MinGW-w64', () => {
    assert.ok(present, `${cxx} is not on PATH: apt-get install -y g++-mingw-w64-x86-64`);
    const require = createRequire(import.meta.url);
    const addonApi = (require('node-addon-api') as { include_dir: string }).include_dir;
    const headers = (require('node-api-headers') as { include_dir: string }).include_dir;
    const out = mkdtempSync(join(tmpdir(), 'zs-glue-'));
    try {
      const result = spawnSync(cxx, [
        '-std=c++17', '-O1', '-Wall', '-Wextra', '-Werror', '-fexceptions', '-DNAPI_CPP_EXCEPTIONS',
        '-DNAPI_VERSION=9', '-DNODE_ADDON_API_DISABLE_DEPRECATED', '-DUNICODE', '-D_UNICODE', '-D_WIN32_WINNT=0x0A00', '-DWINVER=0x0A00',
        '-isystem', addonApi, '-isystem', headers, '-I', join(root, 'native'),
        '-c', join(root, 'native/windows/spawn_glue_windows.cc'), '-o', join(out, 'glue.o'),
      ], { encoding: 'utf8' });
      assert.is(result.status, 0, result.stderr);
      assert.is(result.stderr, '', 'no warnings');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
} else {
  process.stdout.write(`platform-dispatch-windows-glue: ${cxx} not on PATH, compile check not run\n`);
}

test.run();
