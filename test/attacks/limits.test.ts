// Resource limits are enforced by the kernel inside the sandbox: CPU seconds, memory, file size,
// open files; a process limit that cannot be enforced for a root caller refuses instead.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { createPidsLimit, findPidsCgroupParent } from '../../lib/sandbox/cgroup.js';
import { forkStorm, stormOutcome } from '../helpers/fork-storm.js';
import { makeTree, py, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('a CPU-bound loop is stopped by limits.cpuSeconds', async () => {
  const t = makeTree();
  try {
    const started = Date.now();
    const r = await py(t, 'while True: pass', { limits: { cpuSeconds: 1 }, timeoutMs: 20_000 });
    assert.not.ok(r.timedOut, 'the CPU limit, not the timeout, stopped it');
    assert.ok(r.signal === 'SIGXCPU' || r.signal === 'SIGKILL', `signal ${r.signal}`);
    assert.ok(Date.now() - started < 10_000);
  } finally {
    t.cleanup();
  }
});

sandboxTest('limits.memoryBytes stops a runaway allocation', async () => {
  const t = makeTree();
  try {
    const r = await py(t, ['try:', '    b = bytearray(512 * 1024 * 1024); print("ALLOCATED")', 'except MemoryError:', '    print("MemoryError")'].join('\n'), {
      limits: { memoryBytes: 128 * 1024 * 1024 },
    });
    assert.not.match(r.stdout, /ALLOCATED/);
    assert.match(r.stdout, /MemoryError/, r.stderr);
  } finally {
    t.cleanup();
  }
});

sandboxTest('limits.fileSizeBytes caps the size of a file the command writes', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, 'head -c 100000 /dev/zero > big; echo "exit=$?"; wc -c < big', { limits: { fileSizeBytes: 4096 } });
    assert.match(r.stdout, /exit=(153|1)/, r.stdout + r.stderr);
    assert.match(r.stdout, /\n4096\n$/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('limits.openFiles caps the descriptors the command can open', async () => {
  const t = makeTree();
  try {
    const r = await py(t, ['import os, errno', 'fds = []', 'try:', '    while True: fds.append(os.open("/dev/null", os.O_RDONLY))', 'except OSError as e:', '    print(len(fds), errno.errorcode[e.errno])'].join('\n'), {
      limits: { openFiles: 32 },
    });
    const [count, code] = r.stdout.trim().split(' ');
    assert.is(code, 'EMFILE', r.stdout + r.stderr);
    assert.ok(Number(count) < 32);
  } finally {
    t.cleanup();
  }
});

sandboxTest('limits.processes stops a fork storm, for a root caller too, and leaves no process in its cgroup', async () => {
  const t = makeTree();
  try {
    const parent = findPidsCgroupParent();
    // Only this process's cgroups (named after its pid): other processes on the machine may be
    // running sandboxes of their own under the same parent.
    const ours = `zero-sandbox-${process.pid}-`;
    const r = await py(t, forkStorm({ sleepSeconds: 3, upTo: 64 }), { limits: { processes: 16 }, timeoutMs: 30_000 });
    const { started, refused } = stormOutcome(r.stdout);
    assert.is(refused, 'EAGAIN', r.stdout + r.stderr);
    assert.ok(started > 0 && started < 16, `at most the limit runs (${started} children)`);
    if (parent !== undefined) {
      // The run's cgroup is empty once it ends; it is kept for the next run and removed at exit.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const left = readdirSync(parent).filter((name) => name.startsWith(ours));
      assert.ok(left.length > 0, 'the run had a cgroup of its own');
      for (const name of left) assert.is(readFileSync(join(parent, name, 'pids.current'), 'utf8').trim(), '0', `${name} is empty`);
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('without a writable pids cgroup, a process limit for root refuses instead of running unlimited', async () => {
  assert.throws(() => createPidsLimit(16, '/nonexistent-cgroup-parent'), (error: unknown) => (error as { code?: string }).code === 'sandbox_unavailable' && /root caller/.test((error as Error).message));
});

test.run();
