// runSandboxed's output is read by the addon itself and small inputs are handed over with the
// launch; the freestanding init searches PATH like execvp and refuses to run unless it is pid 1.
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { nativeBindingPath } from '../../lib/native/load.js';
import { makeTree, rejection, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('inputs at and around the one-page boundary reach the command intact, then EOF', async () => {
  const t = makeTree();
  try {
    for (const size of [0, 1, 4095, 4096, 4097, 70_000]) {
      const input = Buffer.alloc(size, 'z');
      const r = await runSandboxed(['sh', '-c', 'wc -c; cat'], { workspace: t.ws, input });
      assert.is(r.stdout, `${size}\n`, `input of ${size} bytes`);
    }
    const text = await runSandboxed(['cat'], { workspace: t.ws, input: 'héllo\n' });
    assert.is(text.stdout, 'héllo\n');
  } finally {
    t.cleanup();
  }
});

sandboxTest('multi-byte output split across reads decodes whole; both streams stay apart', async () => {
  const t = makeTree();
  try {
    // 3-byte characters over many 64 KiB reads: a character cut by a read boundary must survive.
    const r = await runSandboxed([process.execPath, '-e', 'process.stdout.write("€".repeat(200000)); process.stderr.write("ü".repeat(70000))'], { workspace: t.ws });
    assert.is(r.stdout, '€'.repeat(200000));
    assert.is(r.stderr, 'ü'.repeat(70000));
  } finally {
    t.cleanup();
  }
});

sandboxTest('a background process holding stdout open does not hold the result back', async () => {
  const t = makeTree();
  try {
    const started = performance.now();
    const r = await sh(t, 'sleep 30 & echo started');
    assert.is(r.stdout, 'started\n');
    assert.ok(performance.now() - started < 20_000, 'the result came when the command exited, not when sleep would have');
    const error = await rejection(sh(t, 'yes', { maxBuffer: 100_000, onMaxBuffer: 'kill' }));
    assert.is(error.code, 'max_buffer_exceeded');
    assert.match(error.message, /stdout exceeded maxBuffer/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('an executable script without #! runs through /bin/sh, as execvp does', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.ws, 'plain.sh'), 'echo plain-script "$1"\n');
    chmodSync(join(t.ws, 'plain.sh'), 0o755);
    const direct = await runSandboxed(['./plain.sh', 'arg'], { workspace: t.ws });
    assert.is(direct.stdout, 'plain-script arg\n', direct.stderr);
    const viaPath = await runSandboxed(['plain.sh', 'p'], { workspace: t.ws, env: { ...process.env, PATH: `/nonexistent:${t.ws}:/usr/bin:/bin` } });
    assert.is(viaPath.stdout, 'plain-script p\n', viaPath.stderr);
  } finally {
    t.cleanup();
  }
});

sandboxTest('the init refuses to run as anything but pid 1 (its final kill(-1) would reach too far)', async () => {
  const t = makeTree();
  try {
    const init = join(nativeBindingPath() ?? '', '..', 'zero_sandbox_init');
    assert.ok(existsSync(init), `init helper at ${init}`);
    const marker = join(t.ws, 'ran');
    // Inside a sandbox, so that even a broken guard could only kill the sandbox's own processes.
    const r = await sh(t, `"${init}" /bin/sh -c 'touch ${marker}' 3>&1; echo "exit=$?"`);
    assert.match(r.stdout, /exit=125$/m);
    assert.not.ok(existsSync(marker), 'the command was not started');
  } finally {
    t.cleanup();
  }
});

test.run();
