// `zero-sandbox run` and `exec` refuse a workspace, --allow-write or --add-dir directory that would hand the
// host over (the filesystem root, the home directory, /dev, the shared /tmp itself, zero-sandbox's
// own package): exit 2 and a message naming the flag, the path and why; nothing runs.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { TREE_BASE } from '../helpers/sandbox.js';

const HOME_REASON = 'is your home directory: the command could change your shell startup files, git config, SSH keys and login programs';

test('run: --workspace / and the home directory exit 2 naming the path and why', async () => {
  const root = await runCli(['run', '--workspace', '/', '--', 'true']);
  assert.is(root.code, 2);
  assert.is(root.stderr, 'zero-sandbox run: workspace / is the root of a file system: the command could change any file on it [invalid_argument]\n');
  const home = await runCli(['run', '--workspace', homedir(), '--', 'true']);
  assert.is(home.code, 2);
  assert.is(home.stderr, `zero-sandbox run: workspace ${homedir()} ${HOME_REASON} [invalid_argument]\n`);
});

test('run: --allow-write /dev, /etc/ssh, /tmp and the package itself exit 2; nothing ran', async () => {
  const ws = mkdtempSync(join(TREE_BASE, 'zs-handover-'));
  try {
    const cases: Array<[string, string]> = [
      ['/dev', 'is /dev, system state the host runs from'],
      ['/etc/ssh', 'is inside /etc, system state the host runs from'],
      ['/var/tmp', 'is /var/tmp, shared by every program and user of the host; use a subdirectory'],
    ];
    for (const [path, reason] of cases) {
      const r = await runCli(['run', '--workspace', ws, '--allow-write', path, '--', 'touch', 'ran']);
      assert.is(r.code, 2, path);
      assert.is(r.stderr, `zero-sandbox run: allowWrite ${path} ${reason} [invalid_argument]\n`);
    }
    const pkg = await runCli(['run', '--workspace', ws, '--allow-write', REPO_ROOT, '--', 'touch', 'ran']);
    assert.is(pkg.code, 2);
    assert.match(pkg.stderr, `allowWrite ${REPO_ROOT} is zero-sandbox's own package directory`);
    assert.not.ok(existsSync(join(ws, 'ran')));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('run and exec with structured output refuse the home workspace with exit 2', async () => {
  const run = await runCli(['run', '--workspace', homedir(), '--output-format', 'json', '--', 'true']);
  assert.is(run.code, 2);
  assert.match(run.stdout + run.stderr, `${homedir()} ${HOME_REASON}`);
  const input = `${JSON.stringify({ schemaVersion: 2, type: 'prompt', content: 'true' })}\n`;
  const exec = await runCli(['exec', '--input-format', 'stream-json', '--workspace', '/', '--output-format', 'stream-json'], { input });
  assert.is(exec.code, 2);
  assert.match(exec.stdout, '--workspace / is the root of a file system');
});

test('exec: --add-dir through a symlink or onto /etc exits 2 naming the flag; nothing ran', async () => {
  const base = mkdtempSync(join(TREE_BASE, 'zs-handover-'));
  try {
    const ws = join(base, 'ws');
    mkdirSync(ws);
    symlinkSync(base, join(ws, 'link'));
    const input = `${JSON.stringify({ schemaVersion: 2, type: 'prompt', content: 'touch ran' })}\n`;
    const etc = await runCli(['exec', '--input-format', 'stream-json', '--add-dir', '/etc', '-o', 'stream-json'], { input, cwd: ws });
    assert.is(etc.code, 2);
    assert.match(etc.stdout, '"message":"--add-dir /etc is /etc, system state the host runs from"');
    const link = await runCli(['exec', '--input-format', 'stream-json', '--add-dir', 'link', '-o', 'stream-json'], { input, cwd: ws });
    assert.is(link.code, 2);
    assert.match(link.stdout, `"message":"--add-dir link reaches ${realpathSync(base)} through a symlink`);
    assert.not.ok(existsSync(join(ws, 'ran')));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test.run();
