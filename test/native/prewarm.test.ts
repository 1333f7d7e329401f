// Prewarmed sandboxes: a burst of commands with one policy reuses sandboxes set up ahead of time.
// Each must behave exactly like a cold one (argv, env, cwd, stdin/stdout, exit codes, limits,
// every restriction), be used only once, and never serve a command whose plan differs.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { prewarmCounts, prewarmPool } from '../../lib/sandbox/prewarm.js';
import { loadNative } from '../../lib/native/load.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

async function untilWarm(): Promise<void> {
  for (let i = 0; i < 200 && prewarmPool.size === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

sandboxTest('a burst of commands is served by prewarmed sandboxes that behave like cold ones', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'sub'));
    writeFileSync(join(t.outside, 'file'), 'original');
    await runSandboxed(['true'], { workspace: t.ws });
    await runSandboxed(['true'], { workspace: t.ws });
    await untilWarm();
    assert.ok(prewarmPool.size >= 1, 'the second use of a policy warms the next sandbox');
    const r = await runSandboxed(['/bin/sh', '-c', `pwd; echo "$GREETING"; cat; echo evil > ${t.outside}/file; ulimit -n; exit 9`], {
      workspace: t.ws,
      cwd: 'sub',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hello-warm' },
      input: 'from-stdin\n',
      limits: { openFiles: 77 },
    });
    assert.ok(r.prewarmed, 'a prewarmed sandbox ran it');
    assert.is(r.exitCode, 9);
    assert.is(r.stdout, `${join(t.ws, 'sub')}\nhello-warm\nfrom-stdin\n77\n`);
    assert.match(r.stderr, /Read-only file system|Permission denied/);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('a prewarmed sandbox keeps the network denied and processes isolated', async () => {
  const t = makeTree();
  try {
    await runSandboxed(['true'], { workspace: t.ws });
    await runSandboxed(['true'], { workspace: t.ws });
    await untilWarm();
    const r = await runSandboxed(['python3', '-c', [
      'import socket, os, errno',
      'try:',
      '    socket.create_connection(("127.0.0.1", 9), timeout=2); print("CONNECTED")',
      'except OSError as e:',
      '    print("net", errno.errorcode.get(e.errno, e.errno))',
      'print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))',
      'try:',
      '    socket.socket(socket.AF_UNIX); print("UNIX")',
      'except OSError as e:',
      '    print("unix", errno.errorcode[e.errno])',
    ].join('\n')], { workspace: t.ws });
    assert.ok(r.prewarmed);
    assert.match(r.stdout, /net ECONNREFUSED/, r.stdout + r.stderr);
    assert.match(r.stdout, /pids \[1, 2\]/);
    assert.match(r.stdout, /unix EPERM/);
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('a command whose plan differs never gets a prewarmed sandbox built for another plan', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'secret'), 'TOPSECRET');
    await runSandboxed(['true'], { workspace: t.ws });
    await runSandboxed(['true'], { workspace: t.ws });
    await untilWarm();
    assert.ok(prewarmPool.size >= 1);
    const r = await runSandboxed(['cat', join(t.outside, 'secret')], { workspace: t.ws, denyRead: [join(t.outside, 'secret')] });
    assert.not.match(r.stdout, /TOPSECRET/);
    assert.not.ok(r.prewarmed, 'the sandbox warmed for the other plan was not used');
    assert.ok(prewarmPool.size >= 1);
    const allow = await runSandboxed(['true'], { workspace: t.ws, network: 'allow' });
    assert.is(allow.network, 'allow');
    assert.not.ok(allow.prewarmed);
    const same = await runSandboxed(['true'], { workspace: t.ws });
    assert.ok(same.prewarmed, 'the original plan still finds its sandbox');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('the next sandbox is set up once the run that noted the use is gone, not beside its command', async () => {
  const t = makeTree();
  try {
    await runSandboxed(['true'], { workspace: t.ws });
    // The second use of the plan: while its command runs, nothing is set up for the plan (a
    // set-up beside it would take the CPU the command, its init and the check after it need).
    const running = runSandboxed(['sleep', '2'], { workspace: t.ws });
    let warmedDuringRun = 0;
    const watch = setInterval(() => (warmedDuringRun = Math.max(warmedDuringRun, prewarmPool.size)), 20);
    const r = await running;
    clearInterval(watch);
    assert.is(r.exitCode, 0);
    assert.is(warmedDuringRun, 0, 'no sandbox was warmed while the command ran');
    await untilWarm();
    assert.ok(prewarmPool.size >= 1, 'the use was noted once the sandbox was gone: the next sandboxes are set up');
    const next = await runSandboxed(['true'], { workspace: t.ws });
    assert.ok(next.prewarmed, 'and serve the next run');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('the next sandbox is being set up when a run resolves, before the caller starts another', async () => {
  const t = makeTree();
  try {
    await runSandboxed(['true'], { workspace: t.ws });
    assert.is(prewarmPool.size + prewarmPool.settingUp, 0, 'one use warms nothing');
    await runSandboxed(['true'], { workspace: t.ws });
    // The set-up begins with the exit's work, so the thread pool works on it while the caller plans
    // its next start (rather than beside that start's command). It is a paced piece: when the
    // exit's check has used up the turn's slice (a loaded host), it takes the next turn, still
    // ahead of any start the caller makes after this one resolved.
    if (prewarmPool.settingUp + prewarmPool.size === 0) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(prewarmPool.settingUp + prewarmPool.size >= 1, 'the second use started the set-up of the next sandboxes');
    await untilWarm();
    const next = await runSandboxed(['true'], { workspace: t.ws });
    assert.ok(next.prewarmed, 'and they serve the next run');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('idle prewarmed sandboxes do not keep the process alive and are gone after clear()', async () => {
  const t = makeTree();
  try {
    await runSandboxed(['true'], { workspace: t.ws });
    await runSandboxed(['true'], { workspace: t.ws });
    await untilWarm();
    const native = loadNative();
    assert.ok(native.activeCount() >= 1);
    prewarmPool.clear();
    for (let i = 0; i < 100 && native.activeCount() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is(native.activeCount(), 0);
    const off = await runSandboxed(['true'], { workspace: t.ws, prewarm: false });
    assert.is(off.exitCode, 0);
    assert.not.ok(off.prewarmed);
    assert.is(prewarmPool.size, 0, 'prewarm: false never warms');
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('uses noted before clear() warm nothing after it (no sandboxes left behind)', async () => {
  const t = makeTree();
  try {
    await runSandboxed(['true'], { workspace: t.ws });
    await runSandboxed(['true'], { workspace: t.ws });
    await untilWarm();
    const native = loadNative();
    // Eight runs are called (each notes its use once its sandbox is gone; the later ones of the
    // burst start on later turns, see start-pacing.ts); clear() comes after the calls and before
    // any of those exits.
    const runs = Promise.all(Array.from({ length: 8 }, () => runSandboxed(['true'], { workspace: t.ws })));
    prewarmPool.clear();
    const results = await runs;
    assert.ok(results.every((r) => r.exitCode === 0));
    for (let i = 0; i < 100 && native.activeCount() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is(native.activeCount(), 0, 'no prewarmed sandbox was started for the cleared pool');
    assert.is(prewarmPool.size, 0);
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

sandboxTest('8 workspaces in turn: the policies beyond the pools rest, the others keep theirs, every run enforced', async () => {
  const trees = Array.from({ length: 8 }, (_, i) => makeTree(`zs-prewarm-turn-${i}-`));
  try {
    for (const t of trees) writeFileSync(join(t.ws, 'secret.env'), 'S\n');
    const round = async (): Promise<void> => {
      for (const [i, t] of trees.entries()) {
        const r = await runSandboxed(['/bin/sh', '-c', `cat secret.env; echo ${i} > out`], { workspace: t.ws, denyRead: [join(t.ws, 'secret.env')] });
        assert.is(r.stdout, '', 'the denied file stays hidden');
        assert.is(readFileSync(join(t.ws, 'out'), 'utf8'), `${i}\n`, 'the write landed');
      }
    };
    for (let r = 0; r < 4; r++) await round();
    const started = prewarmCounts.started;
    const taken = prewarmCounts.taken;
    for (let r = 0; r < 2; r++) await round();
    // With the oldest policy's sandboxes evicted for each new one and no rest, each run warmed
    // three sandboxes no run took: 48 started and none taken over two rounds.
    assert.ok(prewarmCounts.taken - taken >= 6, `prewarmed sandboxes taken: ${prewarmCounts.taken - taken}`);
    assert.ok(prewarmCounts.started - started <= 16, `prewarmed sandboxes started: ${prewarmCounts.started - started}`);
  } finally {
    prewarmPool.clear();
    for (const t of trees) t.cleanup();
  }
});

sandboxTest('a long command (a megabyte of arguments, a large variable) reaches it intact, prewarmed and cold', async () => {
  const t = makeTree();
  try {
    // Twelve different 100 KB arguments (each under the kernel's 128 KiB per string), and a 64 KB
    // variable: more than the launch socket's buffer holds, so the prewarmed launch goes out in
    // several sends, and a shift or a lost piece changes the digest.
    const args = Array.from({ length: 12 }, (_, i) => String.fromCharCode(97 + i).repeat(99_990) + String(i).padStart(10, '0'));
    const big = 'v'.repeat(65_000) + 'END';
    const script = 'import sys, os, hashlib; print(len(sys.argv) - 1, hashlib.sha256("|".join(sys.argv[1:]).encode()).hexdigest(), len(os.environ["BIG"]), os.environ["BIG"][-3:], os.getcwd())';
    const expected = `12 ${createHash('sha256').update(args.join('|')).digest('hex')} 65003 END ${join(t.ws, 'sub')}\n`;
    mkdirSync(join(t.ws, 'sub'));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', BIG: big };
    const command = ['python3', '-c', script, ...args];
    await runSandboxed(['true'], { workspace: t.ws, cwd: 'sub', env });
    await runSandboxed(['true'], { workspace: t.ws, cwd: 'sub', env });
    await untilWarm();
    const warm = await runSandboxed(command, { workspace: t.ws, cwd: 'sub', env });
    assert.ok(warm.prewarmed, 'a prewarmed sandbox ran it');
    assert.is(warm.stderr, '');
    assert.is(warm.stdout, expected);
    const cold = await runSandboxed(command, { workspace: t.ws, cwd: 'sub', env, prewarm: false });
    assert.not.ok(cold.prewarmed);
    assert.is(cold.stdout, expected);
    // The next prewarmed launch on this thread reuses the buffer of the long one: nothing of it
    // may leak into a short command.
    await untilWarm();
    const short = await runSandboxed(['python3', '-c', 'import sys; print(sys.argv[1:])', 'x'], { workspace: t.ws, cwd: 'sub', env: { PATH: env.PATH } });
    assert.ok(short.prewarmed);
    assert.is(short.stdout, "['x']\n");
  } finally {
    prewarmPool.clear();
    t.cleanup();
  }
});

test.run();
