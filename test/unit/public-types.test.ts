// SPDX-License-Identifier: MIT
// The published typings are usable as a Node developer expects: an example program importing
// 'zero-sandbox' (options, answers, events, results) compiles against dist/lib/*.d.ts under --strict
// with NodeNext resolution, and the option mistakes validation rejects are type errors too.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';

test('an example program type-checks against the published .d.ts (strict, NodeNext)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zs-types-'));
  try {
    mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
    // The package as installed (its package.json "exports"/"types" decide what resolves).
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'zero-sandbox'), 'dir');
    symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    writeFileSync(join(dir, 'consumer.ts'), readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'types', 'consumer.ts')));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022'], types: ['node'], noEmit: true, skipLibCheck: false },
      files: ['consumer.ts'],
    }));
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', cwd: dir });
    assert.is(result.status, 0, `${result.stdout}${result.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
