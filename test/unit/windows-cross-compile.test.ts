// SPDX-License-Identifier: MIT
// The Windows sources compile and link with MinGW-w64 (scripts/check-windows.mjs). Runs when the
// cross compiler is on PATH; with ZERO_SANDBOX_MUST_WORK=1 on Linux (CI) it must be there and pass.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// The cross compiler is installed by the Linux CI legs only.
const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1' && process.platform === 'linux';
const root = fileURLToPath(new URL('../../../', import.meta.url));

function onPath(command: string): boolean {
  const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

const present = onPath('x86_64-w64-mingw32-g++');

if (present || MUST_WORK) {
  test('native/binding + native/windows compile and link into a Windows DLL', () => {
    assert.ok(present, 'x86_64-w64-mingw32-g++ is not on PATH: apt-get install -y g++-mingw-w64-x86-64');
    const result = spawnSync(process.execPath, ['scripts/check-windows.mjs'], { cwd: root, encoding: 'utf8' });
    assert.is(result.status, 0, `check:windows failed:\n${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /compile native\/windows\/windows_backend\.cc/);
    assert.match(result.stdout, /ok: \d+ sources compiled and linked; imports .*advapi32\.dll.*node\.exe/);
    assert.not.match(result.stdout, /userenv\.dll/, 'userenv is looked up at run time, never imported');
  });

  test('a missing cross compiler fails the check and names the install command', () => {
    assert.ok(present);
    const result = spawnSync(process.execPath, ['scripts/check-windows.mjs'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ZERO_SANDBOX_MINGW_CXX: 'x86_64-w64-mingw32-no-such-g++' },
    });
    assert.is.not(result.status, 0);
    assert.match(result.stderr, /not found on PATH; install it with: apt-get install -y g\+\+-mingw-w64-x86-64/);
  });
} else {
  // Nothing registered (a skipped uvu test miscounts in scripts/run-tests.mjs); say why.
  process.stdout.write('windows-cross-compile: x86_64-w64-mingw32-g++ not on PATH, nothing to check\n');
}

test.run();
