// Nothing outlives the call: background children are killed when the command exits, when it
// times out, and when the caller aborts. Each test looks for survivors on the host afterwards.
import { execFileSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

function survivors(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker));
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 200));
}

sandboxTest('background children die when the command exits', async () => {
  const t = makeTree();
  const marker = `${(process.pid % 1000) + 1000}.4242`;
  try {
    const r = await sh(t, `sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & setsid sleep ${marker} & echo started`);
    assert.is(r.exitCode, 0);
    assert.match(r.stdout, /started/);
    await settle();
    assert.equal(survivors(marker), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a timeout kills the whole sandbox', async () => {
  const t = makeTree();
  const marker = `${(process.pid % 1000) + 2000}.4243`;
  try {
    const started = Date.now();
    const r = await sh(t, `sleep ${marker} & sleep ${marker}`, { timeoutMs: 300 });
    assert.ok(r.timedOut);
    assert.is(r.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 5000);
    await settle();
    assert.equal(survivors(marker), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('an abort kills the whole sandbox and resolves like a timeout: aborted, with its reason', async () => {
  const t = makeTree();
  const marker = `${(process.pid % 1000) + 3000}.4244`;
  try {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 300);
    const result = await sh(t, `sleep ${marker} & sleep ${marker}`, { signal: controller.signal });
    assert.is(result.aborted, true);
    assert.is(result.signal, 'SIGKILL');
    assert.is((result.abortReason as Error).message, 'caller gave up');
    await settle();
    assert.equal(survivors(marker), []);
  } finally {
    t.cleanup();
  }
});

test.run();
