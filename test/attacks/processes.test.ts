// A sandboxed command cannot see, signal or trace processes outside, cannot read their
// environment, cannot inject input into the caller's terminal (TIOCSTI), cannot change the
// host's hostname or other kernel state, and nested namespaces do not lift any of it.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, py, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('host processes are invisible: /proc lists only the sandbox', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, `ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; test -e /proc/${process.pid} && echo SEES-HOST-PID; cat /proc/${process.pid}/environ 2>&1 | head -c 200; echo`);
    const pids = r.stdout.split('\n')[0]!.trim().split(' ').map(Number);
    assert.ok(pids.length <= 6, `only the sandbox's few processes are listed, got ${r.stdout}`);
    assert.ok(pids.includes(1));
    assert.not.match(r.stdout, /SEES-HOST-PID/);
    assert.not.match(r.stdout, /PATH=/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a host process cannot be signalled or traced from inside', async () => {
  const t = makeTree();
  const victim = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const r = await py(t, [
      'import os, errno, ctypes',
      `pid = ${victim.pid}`,
      'try:',
      '    os.kill(pid, 9); print("SIGNALLED")',
      'except OSError as e:',
      '    print("kill", errno.errorcode[e.errno])',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'rc = libc.ptrace(16, pid, None, None)',  // PTRACE_ATTACH
      'print("ptrace", rc, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))',
      'rc = libc.ptrace(0, 0, None, None)',  // PTRACE_TRACEME
      'print("traceme", rc, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))',
    ].join('\n'));
    assert.match(r.stdout, /kill ESRCH/, r.stdout + r.stderr);
    assert.match(r.stdout, /ptrace -1 E(PERM|SRCH)/);
    assert.match(r.stdout, /traceme -1 EPERM/);
    assert.is(victim.exitCode, null, 'the host process is still running');
    assert.is(victim.signalCode, null);
  } finally {
    victim.kill('SIGKILL');
    t.cleanup();
  }
});

sandboxTest("TIOCSTI cannot inject input, even with the high bits of the request set", async () => {
  const t = makeTree();
  try {
    const r = await py(t, [
      'import fcntl, os, pty, errno',
      'master, slave = pty.openpty()',
      'for req in (0x5412, 0x5412 | (1 << 32), 0x541C):',
      '    try:',
      '        fcntl.ioctl(slave, req, b"x"); print(hex(req), "INJECTED")',
      '    except OSError as e:',
      '        print(hex(req), errno.errorcode[e.errno])',
      '    except OverflowError:',
      '        print(hex(req), "overflow")',
    ].join('\n'));
    assert.match(r.stdout, /0x5412 EPERM/, r.stdout + r.stderr);
    assert.match(r.stdout, /0x541c EPERM/);
    assert.not.match(r.stdout, /INJECTED/);
  } finally {
    t.cleanup();
  }
});

sandboxTest("the host's hostname and kernel settings cannot be changed", async () => {
  const t = makeTree();
  const before = hostname();
  const swappiness = readFileSync('/proc/sys/vm/swappiness', 'utf8');
  try {
    const r = await sh(t, 'hostname evil-host 2>&1; echo 1 > /proc/sys/vm/swappiness; echo 7 > /proc/sys/kernel/hostname; echo done');
    assert.match(r.stdout, /done/);
    assert.is(hostname(), before);
    assert.is(readFileSync('/proc/sys/vm/swappiness', 'utf8'), swappiness);
  } finally {
    t.cleanup();
  }
});

sandboxTest('nested namespaces do not lift anything: mounts, writes and ptrace stay blocked', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, [
      `unshare -r sh -c 'touch /etc/zs-evil && echo WROTE-ETC; mount -t tmpfs none /mnt && echo MOUNTED' 2>&1`,
      `unshare -rm sh -c 'mount -t tmpfs none ${t.outside} && echo MOUNTED-OUTSIDE' 2>&1`,
      `unshare -rn sh -c 'echo net-ok' 2>&1`,
      'echo done',
    ].join('; '));
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /WROTE-ETC|MOUNTED/, r.stdout);
  } finally {
    t.cleanup();
  }
});

test.run();
