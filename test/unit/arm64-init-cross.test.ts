// SPDX-License-Identifier: MIT
// The freestanding init helper builds for aarch64 and runs there (scripts/check-arm64-init.mjs,
// under qemu-user). Runs when the cross compiler and qemu are on PATH; with ZERO_SANDBOX_MUST_WORK=1
// on Linux (CI) they must be there and the check must pass.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1' && process.platform === 'linux' && process.arch === 'x64';
const root = fileURLToPath(new URL('../../../', import.meta.url));

function onPath(command: string): boolean {
  const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

const present = onPath('aarch64-linux-gnu-g++') && onPath('qemu-aarch64-static');

if (present || MUST_WORK) {
  test('the aarch64 init links without a C library and runs commands as pid 1 under qemu', () => {
    assert.ok(present, 'aarch64-linux-gnu-g++ or qemu-aarch64-static missing: apt-get install -y g++-aarch64-linux-gnu qemu-user-static');
    const result = spawnSync(process.execPath, ['scripts/check-arm64-init.mjs'], { cwd: root, encoding: 'utf8' });
    assert.is(result.status, 0, `check:arm64-init failed:\n${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /ok: aarch64 init links freestanding and runs commands under qemu/);
  });

  test('a missing cross compiler fails the check and names the install command', () => {
    assert.ok(present);
    const result = spawnSync(process.execPath, ['scripts/check-arm64-init.mjs'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ZERO_SANDBOX_ARM64_CXX: 'aarch64-no-such-g++' },
    });
    assert.is.not(result.status, 0);
    assert.match(result.stderr, /not found on PATH; install it with: apt-get install -y g\+\+-aarch64-linux-gnu qemu-user-static/);
  });
} else {
  // Nothing registered (a skipped uvu test miscounts in scripts/run-tests.mjs); say why.
  process.stdout.write('arm64-init-cross: aarch64-linux-gnu-g++ or qemu-aarch64-static not on PATH, nothing to check\n');
}

test.run();
