// Attack: with no limits given, a command fills the RAM-backed private /tmp and /dev/shm (charged
// to no process, so the OOM killer takes host processes) or runs a fork bomb until the host
// cannot start processes. Fix: every Linux run gets default caps: /tmp and /dev/shm are
// size-capped tmpfs mounts, and the number of processes is capped (a pids cgroup for a root
// caller, RLIMIT_NPROC counted in the sandbox's own user namespace otherwise; a root caller with
// no writable pids cgroup gets the sandbox PID namespace's own pid_max, which the kernel applies
// to host root too). A cap that was hit is named in the result (limitsHit) from what the kernel
// and the sandbox's init measured, never from the command's output. Checked as root, as root
// without a pids cgroup and as an unprivileged user, with the host spawning processes afterwards.
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { pidMaxIsPerNamespace } from '../../lib/sandbox/cgroup.js';
import { DEFAULT_PROCESSES, DEFAULT_SHM_BYTES, DEFAULT_TMP_BYTES } from '../../lib/sandbox/default-limits.js';
import { runCli } from '../helpers/cli.js';
import { forkStorm } from '../helpers/fork-storm.js';
import { makeTree, py, sandboxTest, sh } from '../helpers/sandbox.js';

// Stays at the cap for a second after the refusal, retrying the fork as bash does: RLIMIT_NPROC and
// the PID namespace cap count no refusals, the init's probe fork (every 200 ms) sees them. (A
// single refusal that lands while the probe's own child holds the last slot leaves that slot free
// for later probes: a command that never forks again then goes unreported.)
const FORK_AND_HOLD = forkStorm({ sleepSeconds: 60, holdSeconds: 1, retry: true });

function hostStillSpawns(): void {
  for (let i = 0; i < 20; i++) assert.is(spawnSync('/bin/true').status, 0, 'the host can still start processes');
}

sandboxTest('the private /tmp and /dev/shm have the default size caps, and filling them stops at the cap', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, [
      'df -B1 --output=size /tmp /dev/shm | tail -n 2 | tr "\\n" " "; echo',
      `head -c ${DEFAULT_TMP_BYTES + 64 * 1024 * 1024} /dev/zero > /tmp/fill 2>/tmp/err; echo "tmp-exit=$?"; stat -c "tmp-size=%s" /tmp/fill; cat /tmp/err; rm -f /tmp/fill`,
      `head -c ${DEFAULT_SHM_BYTES + 64 * 1024 * 1024} /dev/zero > /dev/shm/fill; echo "shm-exit=$?"; stat -c "shm-size=%s" /dev/shm/fill`,
    ].join('; '), { timeoutMs: 120_000 });
    const [tmpSize, shmSize] = (r.stdout.split('\n')[0] as string).trim().split(/\s+/).map(Number);
    assert.is(tmpSize, DEFAULT_TMP_BYTES, r.stdout + r.stderr);
    assert.is(shmSize, DEFAULT_SHM_BYTES);
    assert.match(r.stdout, /tmp-exit=1/);
    assert.match(r.stdout + r.stderr, /No space left on device/);
    assert.ok(Number(/tmp-size=(\d+)/.exec(r.stdout)?.[1]) <= DEFAULT_TMP_BYTES);
    assert.match(r.stdout, /shm-exit=1/);
    assert.ok(Number(/shm-size=(\d+)/.exec(r.stdout)?.[1]) <= DEFAULT_SHM_BYTES);
    hostStillSpawns();
    const small = await sh(t, 'df -B1 --output=size /tmp /dev/shm | tail -n 2 | tr "\\n" " "', { limits: { tmpBytes: 8 * 1024 * 1024, shmBytes: 4 * 1024 * 1024 } });
    assert.equal(small.stdout.trim().split(/\s+/).map(Number), [8 * 1024 * 1024, 4 * 1024 * 1024], 'limits.tmpBytes and limits.shmBytes set the caps');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a full private /tmp or /dev/shm is named in the result (limitsHit, a denial, exec\'s meta, run\'s message); printing ENOSPC is not', async () => {
  const t = makeTree();
  try {
    const MIB = 1024 * 1024;
    const limits = { tmpBytes: 8 * MIB, shmBytes: 4 * MIB };
    const tmp = await sh(t, 'head -c 16M /dev/zero > /tmp/fill; echo "exit=$?"', { limits });
    assert.match(tmp.stdout, /exit=1/, tmp.stdout + tmp.stderr);
    assert.equal(tmp.limitsHit, ['tmpBytes'], 'the full /tmp is named');
    assert.ok(tmp.denials.some((d) => d.capability.scope === 'limits.tmpBytes' && /--limit-tmp/.test(d.reason)), JSON.stringify(tmp.denials));
    const shm = await py(t, 'open("/dev/shm/fill", "wb").write(b"x" * (16 << 20))', { limits });
    assert.equal(shm.limitsHit, ['shmBytes'], shm.stdout + shm.stderr);
    // Forgery: the words of a full disk, and a /tmp filled to below its cap, are not a hit.
    const forged = await sh(t, 'head -c 6M /dev/zero > /tmp/most; echo "head: error writing \'/tmp/fill\': No space left on device" >&2; exit 1', { limits });
    assert.is(forged.limitsHit, undefined, 'output text and a partly filled /tmp are not a hit');
    const both = await sh(t, 'head -c 16M /dev/zero > /tmp/a; head -c 16M /dev/zero > /dev/shm/b; true', { limits });
    assert.equal(both.limitsHit, ['tmpBytes', 'shmBytes']);
    // The same through the CLI: exec's JSON meta and run's message name the cap and its flag.
    const env = { ...process.env, XDG_CONFIG_HOME: join(t.outside, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.outside, 'grants.json') };
    const exec = await runCli(['exec', '--output-format', 'json', '--permission-mode', 'unsafe', '--limit-tmp', '8M', '--cwd', t.ws, 'head -c 16M /dev/zero > /tmp/fill'], { cwd: t.ws, env, timeoutMs: 240_000 });
    const record = exec.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line)).find((r: { type?: string }) => r.type === 'tool_result');
    assert.is(record?.meta?.sandbox_limits_hit, 'tmpBytes', exec.stdout + exec.stderr);
    const run = await runCli(['run', '--limit-shm', '4M', '--', 'cp', '/dev/zero', '/dev/shm/fill'], { cwd: t.ws, env, timeoutMs: 240_000 });
    assert.match(run.stderr, /the private \/dev\/shm was full when the command ended \(limits\.shmBytes\).*--limit-shm/, run.stderr);
    hostStillSpawns();
  } finally {
    t.cleanup();
  }
});

sandboxTest('a fork bomb with no limits given is bounded by the default process cap; the run ends on time and the host keeps spawning', async () => {
  const t = makeTree();
  try {
    // The bomb churns at the cap for ever (every exit frees a slot another fork takes); when the
    // command (which forks nothing but the bomb) exits, every process in the sandbox goes with it.
    // The command ends once the bomb's shell says a fork failed (dash: "Cannot fork", bash:
    // "fork: ..."), or after 40 s: a fixed sleep left the cap unreached when the bomb grew slowly
    // (about 6 s to 4,096 processes on 2 loaded cores).
    // What the result names comes from the kernel's count of refused forks, never from this text.
    const started = Date.now();
    const r = await py(t, [
      'import os, select, time',
      'r, w = os.pipe()',
      'if os.fork() == 0:',
      '    os.dup2(w, 2)',
      '    os.execv("/bin/sh", ["sh", "-c", "b() { b | b & }; b"])',
      'os.close(w)',
      'end, seen = time.time() + 40, b""',
      'refused = lambda: b"Cannot fork" in seen or b"fork: " in seen',
      'while not refused() and time.time() < end:',
      '    if select.select([r], [], [], 1)[0]:',
      '        seen = seen[-64:] + os.read(r, 4096)',
      'print("the bomb was refused a fork" if refused() else "no fork refused in 40 s")',
    ].join('\n'), { timeoutMs: 60_000 });
    // Once the command exits (its exit took up to 5 s here, beside the bomb), the whole sandbox
    // must go promptly.
    assert.ok(Date.now() - started < 90_000, `the sandbox went away (${Date.now() - started} ms, timed out: ${r.timedOut})`);
    assert.match(r.stdout, /the bomb was refused a fork/, r.stdout);
    if (process.getuid?.() === 0) {
      assert.equal(r.limitsHit, ['processes'], 'the pids cgroup refused forks: the result says which cap was hit');
      assert.ok(r.denials.some((d) => d.capability.scope === 'limits.processes'), 'and lists it as a denial');
    }
    hostStillSpawns();
  } finally {
    t.cleanup();
  }
});

sandboxTest('for an unprivileged caller the default cap holds, counted apart from the user\'s host processes', async () => {
  const t = makeTree();
  try {
    chmodSync(t.base, 0o755);
    chmodSync(t.ws, 0o777);
    chmodSync(t.outside, 0o777); // the unprivileged caller's home
    const run = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'sandbox', 'run.js');
    const script = `const { runSandboxed } = await import(${JSON.stringify(run)});
const { prewarmPool } = await import(${JSON.stringify(join(dirname(run), 'prewarm.js'))});
const capped = { workspace: ${JSON.stringify(t.ws)}, limits: { processes: 64 }, timeoutMs: 60000, prewarm: true };
for (let i = 0; i < 2; i++) {
  if (i === 1) {
    // Two quick uses of the plan warm the next sandbox for it once the second is gone: the second
    // storm runs prewarmed (a set-up can take seconds on a loaded host: in CI beside a cross
    // compile of the addon, more than ten).
    await runSandboxed(['true'], capped);
    await runSandboxed(['true'], capped);
    for (let j = 0; j < 3000 && prewarmPool.size === 0; j++) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const r = await runSandboxed(['python3', '-c', ${JSON.stringify(FORK_AND_HOLD)}], capped);
  process.stdout.write('prewarmed=' + r.prewarmed + ' hit=' + JSON.stringify(r.limitsHit ?? []) + ' ' + r.stdout + r.stderr);
}
const quiet = await runSandboxed(['/bin/sh', '-c', 'echo "fork: Resource temporarily unavailable" >&2; kill -s ALRM 1 && echo sent; sleep 0.5'], capped);
process.stdout.write('quiet hit=' + JSON.stringify(quiet.limitsHit ?? []) + ' ' + quiet.stdout);
const d = await runSandboxed(['/bin/sh', '-c', 'echo "default-nproc=$(ulimit -p)"'], { workspace: ${JSON.stringify(t.ws)} });
process.stdout.write(d.stdout + d.stderr);`;
    // 100 processes of the same user on the host first: they must not count against the sandbox.
    const out = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'sh', '-c', 'for i in $(seq 100); do sleep 30 & done; node --input-type=module -e "$1"; kill $(jobs -p)', 'sh', script], {
      encoding: 'utf8', cwd: t.ws, env: { PATH: process.env.PATH, HOME: t.outside }, timeout: 150_000,
    });
    const refused = [...out.stdout.matchAll(/refused (\d+) EAGAIN/g)].map((m) => Number(m[1]));
    assert.is(refused.length, 2, out.stdout + out.stderr);
    for (const n of refused) assert.ok(n > 50 && n < 64, `the cap of 64 held in the sandbox alone (${n} children)`);
    // RLIMIT_NPROC counts no refusals: the init's own probe fork, refused at the same limit, says so.
    assert.is([...out.stdout.matchAll(/^prewarmed=\w+ hit=\["processes"\] /gm)].length, 2, out.stdout);
    assert.match(out.stdout, /^prewarmed=true /m, 'a prewarmed run reports it too');
    assert.match(out.stdout, /^quiet hit=\[\] sent$/m, 'printed refusals and the probe\'s signal are not a hit');
    assert.match(out.stdout, new RegExp(`default-nproc=${DEFAULT_PROCESSES}\\n`), 'with no limit given, the default cap applies');
    hostStillSpawns();
  } finally {
    t.cleanup();
  }
});

sandboxTest('a root caller with no writable pids cgroup still gets the process cap (by default too), which the command cannot raise', async () => {
  if (process.getuid?.() !== 0) return; // the unprivileged caller's cap is the test above
  const t = makeTree();
  try {
    const run = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'sandbox', 'run.js');
    // A cold run and a prewarmed one (the pool refills after the first run of a plan).
    const script = `const { runSandboxed } = await import(${JSON.stringify(run)});
const { prewarmPool } = await import(${JSON.stringify(join(dirname(run), 'prewarm.js'))});
// The default cap is seen from inside below; the fork storms use a cap of 400 (the same mechanism,
// a tenth of the processes on a shared machine).
const opts = { workspace: ${JSON.stringify(t.ws)}, timeoutMs: 120000, prewarm: true };
const capped = { ...opts, limits: { processes: 400 } };
for (const warm of [false, true]) {
  if (warm) {
    // Two quick uses of the plan warm the next sandbox for it.
    await runSandboxed(['true'], capped);
    await runSandboxed(['true'], capped);
    for (let j = 0; j < 1000 && prewarmPool.size === 0; j++) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const r = await runSandboxed(['python3', '-c', ${JSON.stringify(FORK_AND_HOLD)}], capped);
  process.stdout.write('run prewarmed=' + r.prewarmed + ' not-enforced=' + JSON.stringify(r.limitsNotEnforced ?? []) + ' hit=' + JSON.stringify(r.limitsHit ?? []) + ' ' + r.stdout + r.stderr);
}
// Forgery: the command prints what a refusal looks like and sends the init the probe's signal
// (SIGALRM) without filling anything: the probe fork succeeds, so nothing is reported.
const f = await runSandboxed(['/bin/sh', '-c', 'echo "fork: Resource temporarily unavailable" >&2; for i in 1 2 3 4 5; do kill -s ALRM 1 && echo sent; sleep 0.1; done; echo forged'], capped);
process.stdout.write('forged hit=' + JSON.stringify(f.limitsHit ?? []) + ' ' + f.stdout.replace(/\\n/g, ' ') + '\\n');
const w = await runSandboxed(['/bin/sh', '-c', 'cat /proc/sys/kernel/pid_max; echo 4194304 > /proc/sys/kernel/pid_max || echo raise-refused; cat /proc/sys/kernel/pid_max'], opts);
process.stdout.write(w.stdout + w.stderr);
process.exit(0);`;
    // A private mount namespace where the cgroup hierarchies are read-only: no pids cgroup can be made.
    const out = spawnSync('unshare', ['-m', 'sh', '-c', 'for d in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do mountpoint -q $d && mount -o bind,remount,ro $d; done; node --input-type=module -e "$1"', 'sh', script], {
      encoding: 'utf8', cwd: t.ws, timeout: 300_000,
    });
    const hostPidMax = readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim();
    if (pidMaxIsPerNamespace()) {
      const refused = [...out.stdout.matchAll(/refused (\d+) EAGAIN/g)].map((m) => Number(m[1]));
      assert.is(refused.length, 2, out.stdout + out.stderr);
      for (const n of refused) assert.ok(n > 90 && n < 400, `the cap held without a pids cgroup (${n} children)`);
      assert.match(out.stdout, /run prewarmed=true/, 'a prewarmed sandbox is capped too');
      assert.is([...out.stdout.matchAll(/^run prewarmed=\w+ not-enforced=\[\] hit=\["processes"\] /gm)].length, 2, 'both runs say the process cap was hit: ' + out.stdout + out.stderr);
      assert.match(out.stdout, /^forged hit=\[\] (sent ){5}forged $/m, 'printed refusals and signals to the init are not a hit');
      assert.match(out.stdout, new RegExp(`^${DEFAULT_PROCESSES + 1}\\nraise-refused\\n${DEFAULT_PROCESSES + 1}\\n`, 'm'), 'the command sees the default cap and cannot raise it');
      assert.not.match(out.stdout, /not-enforced=\["processes"\]/);
    } else {
      // No mechanism binds root here: the run says so instead of dropping the cap silently.
      assert.match(out.stdout, /not-enforced=\["processes"\]/, out.stdout + out.stderr);
    }
    assert.is(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim(), hostPidMax, 'the host\'s pid_max is untouched');
    hostStillSpawns();
  } finally {
    t.cleanup();
  }
});

test.run();
