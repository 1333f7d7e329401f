// Resource limits are enforced by the kernel inside the sandbox: CPU seconds, memory, file size,
// open files; a process limit that cannot be enforced for a root caller refuses instead.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, py, rejection, sandboxTest, sh } from '../helpers/sandbox.js';

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

sandboxTest('limits.processes refuses for a root caller instead of running without the limit', async () => {
  const t = makeTree();
  try {
    if (process.getuid?.() === 0) {
      const error = await rejection(sh(t, 'touch ran', { limits: { processes: 16 } }));
      assert.is(error.code, 'sandbox_unavailable');
      assert.is(error.layer, 'limits');
      assert.match(error.message, /root caller/);
    } else {
      const r = await sh(t, 'for i in $(seq 1 64); do sleep 2 & done 2>&1 | head -1; echo done', { limits: { processes: 16 }, timeoutMs: 20_000 });
      assert.match(r.stdout, /Resource temporarily unavailable|fork|Cannot/i, r.stdout);
    }
  } finally {
    t.cleanup();
  }
});

test.run();
