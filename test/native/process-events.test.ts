// SPDX-License-Identifier: MIT
// The process API behaves like child_process: `spawn` once the process exists, `exit` when the
// sandbox is gone, `close` (and `exited`) only once stdout and stderr have delivered everything;
// kill() sends SIGTERM and then SIGKILL after a grace period; stdin is closed once the sandbox is
// gone; runSandboxed keeps partial output on abort and says on stderr why a command could not be
// executed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { prewarmPool } from '../../lib/sandbox/prewarm.js';
import { spawnSandboxed, type SandboxExit } from '../../lib/sandbox/process.js';
import { openDescriptors } from '../helpers/fds.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

function collect(stream: NodeJS.ReadableStream | null): { text: () => string } {
  let text = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => void (text += chunk));
  return { text: () => text };
}

sandboxTest('exited resolves only after stdout and stderr are drained; exit comes before close', async () => {
  const t = makeTree();
  try {
    for (let i = 0; i < 3; i++) {
      const child = spawnSandboxed('echo out; echo err >&2', { workspace: t.ws, prewarm: false });
      const order: string[] = [];
      child.on('spawn', () => order.push(child.pid > 0 ? 'spawn' : 'spawn without pid'));
      child.on('exit', (exit: SandboxExit) => order.push(`exit ${exit.exitCode}`));
      child.on('close', (exit: SandboxExit) => order.push(`close ${exit.exitCode}`));
      const out = collect(child.stdout);
      const err = collect(child.stderr);
      const exit = await child.exited;
      assert.is(out.text(), 'out\n', `run ${i}`);
      assert.is(err.text(), 'err\n', `run ${i}`);
      assert.is(exit.exitCode, 0);
      assert.equal(order, ['spawn', 'exit 0', 'close 0']);
      assert.is(child.exit, exit);
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('streams nobody reads do not keep exited from resolving', async () => {
  const t = makeTree();
  try {
    const child = spawnSandboxed('head -c 300000 /dev/zero; echo done >&2', { workspace: t.ws, prewarm: false, timeoutMs: 20_000 });
    child.stdout?.resume(); // a pipe must be read for a large output to be written at all
    const exit = await child.exited;
    assert.is(exit.exitCode, 0);
    assert.is(exit.timedOut, false);
  } finally {
    t.cleanup();
  }
});

/** Pipes this process holds open. */
function openPipes(): number {
  return [...openDescriptors().values()].filter((target) => target.startsWith('pipe:')).length;
}

sandboxTest('a stdin nobody ends is closed once the sandbox is gone, as child_process does: no pipe is left per run', async () => {
  const t = makeTree();
  try {
    // The first runs open what the process keeps (its exit watcher's and threads' pipes). The
    // prewarm pool's sandboxes hold pipes of their own, and go asynchronously once it is emptied
    // (a refill started before the clear too): the fewest held over half a second after that.
    for (let i = 0; i < 2; i++) await spawnSandboxed(['/bin/true'], { workspace: t.ws }).exited;
    prewarmPool.clear();
    let before = openPipes();
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      before = Math.min(before, openPipes());
    }
    for (const [i, options] of [{ prewarm: false }, { prewarm: true }, { prewarm: true }, { prewarm: false }].entries()) {
      const child = spawnSandboxed(['/bin/sleep', '5'], { workspace: t.ws, ...options });
      setTimeout(() => child.kill('SIGKILL'), 100);
      const exit = await child.exited;
      assert.is(exit.signal, 'SIGKILL', `run ${i}`);
      assert.ok(child.stdin?.destroyed, `run ${i}: stdin closed after the exit`);
    }
    for (let i = 0; i < 4; i++) await spawnSandboxed(['/bin/true'], { workspace: t.ws }).exited;
    // Again once the pool's sandboxes are gone, waited for a bounded time (later on a loaded
    // machine). A pipe left per run never goes.
    prewarmPool.clear();
    const deadline = Date.now() + 5_000;
    let held = openPipes();
    while (held > before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      held = openPipes();
    }
    assert.ok(held <= before, `pipes held: ${held}, ${before} before the runs`);
  } finally {
    t.cleanup();
  }
});

sandboxTest('kill() sends SIGTERM by default; a command ignoring it is killed after the grace period', async () => {
  const t = makeTree();
  try {
    const polite = spawnSandboxed(['sleep', '30'], { workspace: t.ws, stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(polite.kill());
    assert.is((await polite.exited).signal, 'SIGTERM');
    const stubborn = spawnSandboxed('trap "" TERM; echo ready; sleep 30', { workspace: t.ws, stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((resolve) => stubborn.stdout?.once('data', () => resolve()));
    const started = Date.now();
    stubborn.kill('SIGTERM', { graceMs: 300 });
    const exit = await stubborn.exited;
    assert.is(exit.signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 250, 'SIGKILL came after the grace period');
    assert.is(stubborn.kill(), false, 'kill after the sandbox is gone');
  } finally {
    t.cleanup();
  }
});

sandboxTest('runSandboxed: abort resolves with the partial output and the reason; exec failures say why on stderr', async () => {
  const t = makeTree();
  try {
    const controller = new AbortController();
    const running = runSandboxed('echo partial; sleep 30', { workspace: t.ws, signal: controller.signal });
    setTimeout(() => controller.abort('enough'), 700);
    const result = await running;
    assert.is(result.aborted, true);
    assert.is(result.timedOut, false);
    assert.is(result.abortReason, 'enough');
    assert.is(result.stdout, 'partial\n');
    const missing = await runSandboxed(['no-such-cmd-zs'], { workspace: t.ws });
    assert.is(missing.exitCode, 127);
    assert.is(missing.execError?.code, 'ENOENT');
    assert.is(missing.stderr, 'no-such-cmd-zs: command not found\n');
    assert.is(missing.aborted, false);
  } finally {
    t.cleanup();
  }
});

test.run();
