// SPDX-License-Identifier: MIT
// Cold-start contract: on Linux, loading the package and running a command never loads the
// macOS/Windows backends (lib/sandbox/platform-backends.ts and what it imports).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPO_ROOT } from '../helpers/cli.js';
import { SandboxError } from '../../lib/errors.js';
import { loadPlatformBackends, platformBackendSync } from '../../lib/backend/current.js';
import { startSandboxed } from '../../lib/sandbox/process.js';
import { runWith } from '../../lib/sandbox/run.js';

// A loader hook that records every module URL the process loads into $LOADED_LOG.
const HOOK = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.LOADED_LOG, url + '\\n');
  return next(url, context);
}`;

function loadedModules(script: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'zs-lazy-'));
  const log = join(dir, 'loaded.txt');
  try {
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`;
    const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, LOADED_LOG: log },
      cwd: dir,
    });
    assert.is(result.status, 0, result.stderr);
    return readFileSync(log, 'utf8').trim().split('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the package entry loads the platform dispatch but not the macOS/Windows backends', () => {
  if (process.platform !== 'linux') return;
  const loaded = loadedModules(`await import(${JSON.stringify(`${REPO_ROOT}/dist/lib/index.js`)});`);
  assert.ok(loaded.some((url) => url.endsWith('/dist/lib/backend/current.js')), 'the hook saw the dispatch module');
  for (const name of ['platform-backends.js', 'backend/macos/start.js', 'backend/macos/sandbox-exec.js', 'backend/windows/start.js', 'backend/windows/spec.js']) {
    assert.not.ok(loaded.some((url) => url.endsWith(name)), `${name} was loaded on Linux`);
  }
});

test('the entry loads the backends on demand, synchronously for spawn and by import for run', async () => {
  // Called on a platform the backends do not serve, both paths reach them and are refused there.
  const other = process.platform === 'darwin' || process.platform === 'win32' ? 'skip' : process.platform;
  if (other === 'skip') return;
  try {
    startSandboxed(['/bin/true'], {}, platformBackendSync());
    assert.unreachable('expected a refusal');
  } catch (error) {
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'sandbox_unavailable');
    assert.match((error as SandboxError).message, new RegExp(`no native sandbox backend exists for ${other}`));
  }
  try {
    await runWith(['/bin/true'], {}, (await loadPlatformBackends()).hostBackend(process.platform));
    assert.unreachable('expected a refusal');
  } catch (error) {
    assert.is((error as SandboxError).code, 'sandbox_unavailable');
  }
  const loaded = await loadPlatformBackends();
  assert.type(loaded.hostBackend, 'function');
  assert.is(await loadPlatformBackends(), loaded, 'one load, shared');
});

test.run();
