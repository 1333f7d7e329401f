// SPDX-License-Identifier: MIT
// native/macos/ is plain POSIX C++ apart from the sandbox calls it looks up at run time, so it must
// pass a strict syntax check with the host compiler on any Unix (it cannot be linked off macOS).
// Its spawn glue includes the Node-API headers, which come from the installed packages.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1';
const cxx = process.env.CXX ?? 'g++';
const present = process.platform !== 'win32' && spawnSync(cxx, ['--version']).status === 0;

if (present || (MUST_WORK && process.platform !== 'win32')) {
  test('native/macos/*.cc passes g++ -fsyntax-only -Wall -Wextra -Werror', () => {
    assert.ok(present, `${cxx} is not on PATH`);
    const sources = readdirSync(join(root, 'native', 'macos')).filter((n) => n.endsWith('.cc'));
    assert.ok(sources.length > 0);
    const require = createRequire(import.meta.url);
    const addonApi = (require('node-addon-api') as { include_dir: string }).include_dir;
    const headers = (require('node-api-headers') as { include_dir: string }).include_dir;
    for (const name of sources) {
      // Third-party headers are system headers: their warnings are not ours to fail on.
      const result = spawnSync(cxx, ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-fsyntax-only', '-DNAPI_VERSION=9',
        '-DNODE_ADDON_API_DISABLE_DEPRECATED', '-DNAPI_CPP_EXCEPTIONS', '-isystem', addonApi, '-isystem', headers,
        '-I', join(root, 'native'), join(root, 'native', 'macos', name)], { encoding: 'utf8' });
      assert.is(result.status, 0, `${name}:\n${result.stderr}`);
    }
  });

  test('the syntax check is not vacuous: a broken source fails it', () => {
    const result = spawnSync(cxx, ['-std=c++17', '-fsyntax-only', '-x', 'c++', '-'], { input: 'int main() { return undeclared; }\n', encoding: 'utf8' });
    assert.is.not(result.status, 0);
  });
} else {
  process.stdout.write(`sbpl-macos-native: ${cxx} not available, nothing to check\n`);
}

test.run();
