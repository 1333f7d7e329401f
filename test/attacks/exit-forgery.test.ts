// The attack: the sandbox's pid 1 (zero-sandbox-init) used to tell the host "the command exited"
// over a pipe (its fd 3) that the host trusted. A command could open that pipe through
// /proc/1/fd/3 or take it with pidfd_getfd and write the record itself: the run then ended while
// the command kept running (runSandboxed resolved, --timeout exited 0 instead of 124, kill() was a
// no-op, and the protected-path cleanup ran while the command could still plant paths).
// The fix: the exit is decided by the kernel alone. The host polls a pidfd on the init and reaps
// it with waitid; a pid namespace's init is reapable only once every other process in it is dead.
// The init's exit status is the command's; what the pipe holds is read only after the reap and
// believed only where it agrees. The init is also undumpable, so nothing inside can open, take or
// trace its descriptors. Each test runs the attack in a real sandbox, then checks the host: the
// command was killed, the timeout reported, no process of the sandbox survived.
import { constants, existsSync, openSync, closeSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { spawnSandboxed, type SandboxExit } from '../../lib/sandbox/process.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { runCli } from '../helpers/cli.js';
import { makeTree, py, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';

/** The init's "the command exited with wait status 0" record: {type 2, status 0}, native-endian. */
const FORGED_EXIT = '\\002\\000\\000\\000\\000\\000\\000\\000';

/** A unique `sleep` argument, so that survivors of this file's sandboxes can be found with ps. */
let markers = 0;
function marker(): string {
  markers += 1;
  return `${4000 + (process.pid % 1000)}.${7100 + markers}`;
}

function survivors(mark: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(mark));
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitForFile(path: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await sleep(20);
  }
}

/** The shell attack: write an "exited 0" record into pid 1's report pipe through /proc/1/fd/3. */
function forgeThroughProc(verdict: string): string {
  return `if printf '${FORGED_EXIT}' 2>/dev/null > /proc/1/fd/3; then echo FORGED; else echo REFUSED; fi > ${verdict}`;
}

/** The Python attack: take pid 1's fd 3 with pidfd_open + pidfd_getfd (434, 438 on x86_64 and aarch64) and write the record. */
const FORGE_THROUGH_PIDFD_GETFD = [
  'import ctypes, errno, os, struct',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'pidfd = libc.syscall(434, 1, 0)',
  'fd = libc.syscall(438, pidfd, 3, 0) if pidfd >= 0 else -1',
  'err = ctypes.get_errno()',
  'if fd >= 0:',
  '    os.write(fd, struct.pack("ii", 2, 0)); print("STOLEN", flush=True)',
  'else:',
  '    print("REFUSED", "pidfd" if pidfd < 0 else "getfd", errno.errorcode.get(err, err), flush=True)',
].join('\n');

/**
 * Simulates a forger that got through anyway: the host (owner of the sandbox's user namespace, so
 * allowed to open an undumpable process's descriptors) writes `bytes` into the init's report pipe.
 */
function injectIntoReportPipe(initPid: number, bytes: Buffer): number {
  // Non-blocking: reopened through /proc, the pipe gets a file description of its own.
  const fd = openSync(`/proc/${initPid}/fd/3`, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    let written = 0;
    while (written < bytes.length) {
      try {
        written += writeSync(fd, bytes, written);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break; // the pipe is full
        throw error;
      }
    }
    return written;
  } finally {
    closeSync(fd);
  }
}

function record(type: number, value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeInt32LE(type, 0);
  buffer.writeInt32LE(value, 4);
  return buffer;
}

async function assertGone(mark: string, initPid: number): Promise<void> {
  assert.equal(survivors(mark), [], 'no process of the sandbox survives');
  assert.not.ok(existsSync(`/proc/${initPid}`), 'the sandbox init is reaped');
}

sandboxTest('attack: a forged exit record through /proc/1/fd cannot end the run early', async () => {
  const t = makeTree();
  const mark = marker();
  try {
    const started = Date.now();
    const r = await sh(t, `exec >/dev/null 2>&1; ${forgeThroughProc('verdict')}; sleep ${mark}`, { timeoutMs: 1500 });
    const elapsed = Date.now() - started;
    assert.is(readFileSync(join(t.ws, 'verdict'), 'utf8'), 'REFUSED\n', 'the init\'s fd 3 cannot be opened from inside');
    assert.ok(r.timedOut, 'the run lasted until the timeout');
    assert.is(r.signal, 'SIGKILL');
    assert.is(r.exitCode, null);
    assert.ok(elapsed >= 1400, `the run ended after ${elapsed} ms, before its timeout`);
    assert.equal(survivors(mark), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: pidfd_getfd of init\'s report pipe is refused', async () => {
  const t = makeTree();
  try {
    const r = await py(t, FORGE_THROUGH_PIDFD_GETFD);
    assert.is(r.stdout, 'REFUSED getfd EPERM\n', r.stderr);
    assert.is(r.exitCode, 0);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: init\'s descriptors, memory and environment cannot be opened or traced through /proc/1', async () => {
  const t = makeTree();
  try {
    const r = await py(t, [
      'import ctypes, errno, os',
      'for path in ["/proc/1/fd/3", "/proc/1/fd/0", "/proc/1/fdinfo/3", "/proc/1/mem", "/proc/1/environ", "/proc/1/root/"]:',
      '    try:',
      '        os.close(os.open(path, os.O_RDONLY)); print(path, "OPENED")',
      '    except OSError as e:',
      '        print(path, errno.errorcode[e.errno])',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'rc = libc.ptrace(16, 1, None, None)',  // PTRACE_ATTACH
      'print("ptrace", rc, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))',
    ].join('\n'));
    assert.not.match(r.stdout, /OPENED/, r.stdout);
    for (const path of ['/proc/1/fd/3', '/proc/1/fd/0', '/proc/1/fdinfo/3', '/proc/1/mem', '/proc/1/environ', '/proc/1/root/']) {
      assert.match(r.stdout, new RegExp(`^${path} (EACCES|EPERM)$`, 'm'), r.stdout + r.stderr);
    }
    assert.match(r.stdout, /^ptrace -1 EPERM$/m);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: timeout kills a command that forged its exit (pidfd_getfd and /proc routes)', async () => {
  const t = makeTree();
  const mark = marker();
  try {
    const script = `python3 -c '${FORGE_THROUGH_PIDFD_GETFD.replaceAll("'", "'\\''")}' > getfd; ${forgeThroughProc('verdict')}; sleep ${mark}`;
    const started = Date.now();
    const r = await sh(t, script, { timeoutMs: 1500 });
    assert.ok(Date.now() - started >= 1400, 'the run lasted until its timeout');
    assert.is(readFileSync(join(t.ws, 'getfd'), 'utf8'), 'REFUSED getfd EPERM\n');
    assert.ok(r.timedOut);
    assert.is(r.signal, 'SIGKILL');
    assert.equal(survivors(mark), []);
  } finally {
    t.cleanup();
  }
});

/** Prints each open descriptor of the process (the listing's own is closed again by then). */
const LIST_FDS = 'import os\nfor fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):\n    try: print(fd, os.readlink("/proc/self/fd/%d" % fd))\n    except OSError: pass';

/** Starts `script` in a sandbox that writes `ready` into the workspace when it runs. */
async function startReady(t: Tree, script: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}) {
  const child = spawnSandboxed(['/bin/sh', '-c', `touch ready; ${script}`], { workspace: t.ws, stdio: ['ignore', 'ignore', 'ignore'], ...options });
  let exit: SandboxExit | undefined;
  void child.exited.then((e) => (exit = e));
  await waitForFile(join(t.ws, 'ready'));
  return { child, exited: () => exit };
}

sandboxTest('attack: even a forged record that reaches the report pipe does not end the run nor stop its timeout', async () => {
  const t = makeTree();
  const mark = marker();
  try {
    const started = Date.now();
    const { child, exited } = await startReady(t, `sleep ${mark}`, { timeoutMs: 2000 });
    injectIntoReportPipe(child.pid, Buffer.concat([record(2, 0), record(1, 2), record(3, 0), record(99, -1), Buffer.from([1, 2, 3])]));
    await sleep(500);
    assert.is(exited(), undefined, 'the forged record did not end the run');
    const exit = await child.exited;
    assert.ok(Date.now() - started >= 1900, 'the run lasted until its timeout');
    assert.ok(exit.timedOut);
    assert.is(exit.signal, 'SIGKILL');
    assert.is(exit.exitCode, null);
    assert.is(exit.execError, undefined, 'a forged exec errno is not believed');
    await assertGone(mark, child.pid);
  } finally {
    t.cleanup();
  }
});

/**
 * The command tries the /proc route, then a forged record is put in the pipe from outside (see
 * injectIntoReportPipe); the run must still be going until `stop` kills it, and then be all gone.
 */
async function forgeThenStop(stop: (child: ReturnType<typeof spawnSandboxed>, controller: AbortController) => void): Promise<SandboxExit> {
  const t = makeTree();
  const mark = marker();
  try {
    const controller = new AbortController();
    const { child, exited } = await startReady(t, `${forgeThroughProc('verdict')}; touch forged; sleep ${mark}`, { signal: controller.signal });
    await waitForFile(join(t.ws, 'forged'));
    assert.is(readFileSync(join(t.ws, 'verdict'), 'utf8'), 'REFUSED\n');
    injectIntoReportPipe(child.pid, record(2, 0));
    await sleep(300);
    assert.is(exited(), undefined, 'the forged record did not end the run');
    stop(child, controller);
    const exit = await child.exited;
    assert.is(exit.signal, 'SIGKILL');
    assert.is(exit.exitCode, null);
    await assertGone(mark, child.pid);
    return exit;
  } finally {
    t.cleanup();
  }
}

sandboxTest('attack: kill() kills a command that forged its exit', async () => {
  await forgeThenStop((child) => assert.ok(child.kill('SIGKILL'), 'kill() still reaches the sandbox'));
});

sandboxTest('attack: an AbortSignal kills a command that forged its exit', async () => {
  const exit = await forgeThenStop((_child, controller) => controller.abort());
  assert.ok(exit.aborted);
});

sandboxTest('attack: runSandboxed does not resolve while a command that forged its exit keeps writing', async () => {
  const t = makeTree();
  try {
    const log = join(t.ws, 'log');
    const r = await sh(t, `exec >/dev/null 2>&1; ${forgeThroughProc('verdict')}; for i in 1 2 3 4 5 6 7 8; do echo $i >> log; sleep 0.15; done; echo done >> log; exit 3`);
    assert.is(r.exitCode, 3, 'the command\'s own exit code, from the kernel');
    const size = statSync(log).size;
    assert.match(readFileSync(log, 'utf8'), /8\ndone\n$/, 'the command had finished when the run resolved');
    await sleep(400);
    assert.is(statSync(log).size, size, 'nothing writes after the run resolved');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: protected-path cleanup runs only once a command that forged its exit is gone', async () => {
  const t = makeTree();
  const mark = marker();
  try {
    const r = await sh(t, `exec >/dev/null 2>&1; ${forgeThroughProc('verdict')}; sleep 0.4; mkdir -p .zero/late && touch .zero/late/planted; sleep ${mark}`, { timeoutMs: 1500 });
    assert.ok(r.timedOut);
    assert.not.ok(existsSync(join(t.ws, '.zero')), 'the protected path planted after the forged exit was removed');
    assert.ok(r.protectedPathViolations.some((path) => path.includes('.zero')), JSON.stringify(r.protectedPathViolations));
    assert.equal(survivors(mark), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a report pipe filled with forged records neither stalls the run nor decides its status', async () => {
  const t = makeTree();
  try {
    const { child } = await startReady(t, 'while [ ! -e go ]; do sleep 0.05; done; exit 3');
    // "Killed by SIGKILL" records until the pipe is full: the init's own record then cannot be
    // written, and what the pipe says disagrees with the init's exit code (3).
    const flood = Buffer.concat(Array.from({ length: 16384 }, () => record(2, 9)));
    assert.ok(injectIntoReportPipe(child.pid, flood) >= 4096);
    writeFileSync(join(t.ws, 'go'), '');
    const exit = await child.exited;
    assert.is(exit.exitCode, 3);
    assert.is(exit.signal, null);
    assert.not.ok(existsSync(`/proc/${child.pid}`));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a prewarmed sandbox cannot forge its exit either, and its command holds no supervisor descriptor', async () => {
  const t = makeTree();
  try {
    let warm;
    for (let attempt = 0; attempt < 8 && warm === undefined; attempt++) {
      // A burst of identical plans fills the prewarm pool for the next call.
      await runSandboxed(['/bin/true'], { workspace: t.ws });
      await runSandboxed(['/bin/true'], { workspace: t.ws });
      await sleep(300);
      const mark = marker();
      const started = Date.now();
      const r = await sh(t, `python3 -c '${LIST_FDS}' > fds 2>&1; ${forgeThroughProc('verdict')}; sleep ${mark}`, { timeoutMs: 1500 });
      if (!r.prewarmed) continue;
      warm = r;
      assert.ok(Date.now() - started >= 1400);
      assert.ok(r.timedOut);
      assert.is(r.signal, 'SIGKILL');
      assert.is(readFileSync(join(t.ws, 'verdict'), 'utf8'), 'REFUSED\n');
      // The command got only its three standard streams: no report pipe, no launch socket.
      const fds = readFileSync(join(t.ws, 'fds'), 'utf8');
      assert.equal(fds.trim().split('\n').map((line) => line.split(' ')[0]), ['0', '1', '2'], fds);
      assert.not.match(fds, /socket:/);
      assert.equal(survivors(mark), []);
    }
    assert.ok(warm !== undefined, 'a prewarmed sandbox ran the attack');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: zero-sandbox run --timeout kills a command that forged its exit and exits 124', async () => {
  const t = makeTree();
  const mark = marker();
  try {
    const started = Date.now();
    const r = await runCli(['run', '--workspace', t.ws, '--timeout', '1.5', '--', '/bin/sh', '-c', `exec >/dev/null 2>&1; ${forgeThroughProc('verdict')}; sleep ${mark}`], { cwd: t.ws });
    assert.is(r.code, 124, r.stderr);
    assert.match(r.stderr, /timed out/);
    assert.ok(Date.now() - started >= 1400);
    assert.is(readFileSync(join(t.ws, 'verdict'), 'utf8'), 'REFUSED\n');
    assert.equal(survivors(mark), []);
  } finally {
    t.cleanup();
  }
});

test.run();
