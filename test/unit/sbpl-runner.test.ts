// SPDX-License-Identifier: MIT
// The seatbelt starter under the shared lifecycle (argv, stdio, exit, timeout, abort, kill of the
// whole group, output cap), checked everywhere with a stand-in for sandbox-exec; on macOS also
// against the real seatbelt.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { buildSandboxExecArgs, sandboxExecSetupFailure } from '../../lib/backend/macos/sandbox-exec.js';
import { macosStarter, type MacosStartDeps } from '../../lib/backend/macos/start.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { SandboxedProcess, startSandboxed } from '../../lib/sandbox/process.js';
import { runWith, type RunResult } from '../../lib/sandbox/run.js';
import { planBackend, runOnPlatform } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { checkSeatbeltProfile } from '../../lib/backend/macos/profile-check.js';
import { alive } from '../helpers/alive.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-sbpl-runner-')));
const ws = join(base, 'ws');
const tmp = join(base, 'tmp');
mkdirSync(ws);
mkdirSync(tmp);
// Stand-in for sandbox-exec: records its arguments, then runs what follows "--", as the real one
// does after applying the profile.
const fake = join(base, 'fake-sandbox-exec');
writeFileSync(fake, '#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_ARGS"\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n');
chmodSync(fake, 0o755);
const argsFile = join(base, 'args.txt');

function plan(argv: string[], overrides: Partial<SandboxPlan> = {}): SandboxPlan {
  return posixPlan(ws, { argv, env: { PATH: '/usr/bin:/bin', FAKE_ARGS: argsFile, TMPDIR: tmp }, ...overrides });
}

const fakeOptions = { sandboxExecPath: fake } as const;

/**
 * The starter's dependencies: the stand-in sandboxes nothing, so no process ever runs under the
 * run's profile; off macOS (no addon listing there) the listing says so, on macOS it is the real one.
 */
function starterDeps(sandboxExecPath: string | undefined): MacosStartDeps {
  if (sandboxExecPath === undefined) return {};
  return process.platform === 'darwin' ? { sandboxExecPath } : { sandboxExecPath, runMembers: () => ({ members: [], undecided: 0 }) };
}

/** runSandboxed's path for a fixed plan on the macOS starter. */
function runSeatbelt(p: SandboxPlan, options: RunOptions & { sandboxExecPath?: string }): Promise<RunResult> {
  const { sandboxExecPath, ...run } = options;
  return runWith(p.argv, run, planBackend(p, tmp, 'macos-seatbelt', macosStarter(starterDeps(sandboxExecPath))));
}

/** spawnSandboxed's path for a fixed plan on the macOS starter. */
function spawnSeatbelt(p: SandboxPlan, options: { sandboxExecPath?: string }): SandboxedProcess {
  return startSandboxed(p.argv, { stdio: 'pipe' }, planBackend(p, tmp, 'macos-seatbelt', macosStarter(starterDeps(options.sandboxExecPath))));
}

/** The fields of a result the runner decides. */
const core = (r: RunResult) => ({ exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut });

// The stand-in is a POSIX shell script: these contract tests run on Linux and macOS.
const posix = process.platform !== 'win32';
const contract = (name: string, fn: () => void | Promise<void>): void => {
  if (posix) test(name, fn);
};

async function rejection(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, SandboxError);
    return error as SandboxError;
  }
  throw new Error('expected a rejection');
}

contract('arguments: -p profile, one -D per parameter, --, then argv unchanged (behind the launcher for runs)', () => {
  const args = buildSandboxExecArgs(plan(['/bin/echo', '-D', '--', 'x y']), { tmpDir: tmp });
  assert.is(args[0], '-p');
  assert.ok(args[1]!.startsWith('(version 1)'));
  const dashDash = args.indexOf('--');
  assert.equal(args.slice(dashDash + 1), ['/bin/echo', '-D', '--', 'x y']);
  const launched = buildSandboxExecArgs(plan(['/bin/echo', '-D', '--', 'x y']), { tmpDir: tmp }, true);
  const tail = launched.slice(launched.indexOf('--') + 1);
  assert.equal(tail.slice(0, 2), ['/bin/sh', '-c']);
  assert.equal(tail.slice(4), ['/bin/echo', '-D', '--', 'x y'], 'the launcher execs argv unchanged');
  const defines = args.slice(2, dashDash);
  assert.ok(defines.length % 2 === 0);
  for (let i = 0; i < defines.length; i += 2) assert.is(defines[i], '-D');
  assert.ok(defines.includes(`WRITE_ROOT_0=${ws}`));
  assert.ok(defines.includes(`TMPDIR_0=${tmp}`));
  assert.ok(defines.includes(`PROTECTED_0=${ws}/.git/hooks`));
});

contract('stdout, stderr, exit code and stdin through the runner', async () => {
  const result = await runSeatbelt(plan(['/bin/sh', '-c', 'read line; echo "out:$line"; echo err >&2; exit 3']), {
    ...fakeOptions,
    input: 'hello\n',
  });
  assert.equal(core(result), { exitCode: 3, signal: null, stdout: 'out:hello\n', stderr: 'err\n', timedOut: false });
  assert.is(result.backend, 'macos-seatbelt');
  const recorded = readFileSync(argsFile, 'utf8').split('\n');
  assert.is(recorded[0], '-p');
  assert.ok(recorded.includes(`WRITE_ROOT_0=${ws}`));
});

contract('timeout kills the command and reports timedOut', async () => {
  const started = Date.now();
  const result = await runSeatbelt(plan(['/bin/sleep', '30']), { ...fakeOptions, timeoutMs: 200 });
  assert.is(result.timedOut, true);
  assert.is(result.signal, 'SIGKILL');
  assert.is(result.exitCode, null);
  assert.ok(Date.now() - started < 10_000);
});

contract('nothing outlives the call: background processes of the command are killed at exit', async () => {
  const result = await runSeatbelt(plan(['/bin/sh', '-c', 'sleep 60 >/dev/null 2>&1 & echo $!']), fakeOptions);
  const pid = Number(result.stdout.trim());
  assert.ok(pid > 0);
  for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  assert.not.ok(alive(pid), `background pid ${pid} survived`);
});

contract('kill() ends the whole group; abort resolves like a timeout, with partial output and the reason (as on Linux)', async () => {
  const run = spawnSeatbelt(plan(['/bin/sh', '-c', 'sleep 60 & sleep 60']), fakeOptions);
  assert.instance(run, SandboxedProcess);
  setTimeout(() => run.kill('SIGKILL'), 100);
  const result = await run.exited;
  assert.is(result.signal, 'SIGKILL');
  const controller = new AbortController();
  const pending = runSeatbelt(plan(['/bin/sh', '-c', 'echo partial; exec sleep 30']), { ...fakeOptions, signal: controller.signal });
  setTimeout(() => controller.abort(new Error('stop')), 300);
  const aborted = await pending;
  assert.is(aborted.aborted, true);
  assert.is((aborted.abortReason as Error).message, 'stop');
  assert.is(aborted.stdout, 'partial\n');
  assert.is(aborted.signal, 'SIGKILL');
  const already = new AbortController();
  already.abort();
  const early = await runSeatbelt(plan(['/bin/sh', '-c', 'sleep 30']), { ...fakeOptions, signal: already.signal });
  assert.is(early.aborted, true);
  assert.is(early.timedOut, false);
});

contract('a process that left the group (new session) holding stdout does not hang the run past the exit', async () => {
  // The grandchild starts a new session (detached) with our stdout; it outlives the command.
  const script = "const c = require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: ['ignore', 1, 2] }); c.unref(); console.log(c.pid);";
  const result = await runSeatbelt(plan([process.execPath, '-e', script]), fakeOptions);
  const pid = Number(result.stdout.trim());
  try {
    assert.ok(pid > 0, result.stdout);
    assert.is(result.exitCode, 0);
    // The run settled while the escaped process still held the pipe.
    assert.ok(alive(pid), 'the escaped process was already gone: the check proves nothing');
  } finally {
    if (pid > 0) process.kill(pid, 'SIGKILL');
  }
});

contract("sandbox-exec's own failure (a profile that does not compile) is a setup error, not the command's exit", async () => {
  const broken = join(base, 'broken-sandbox-exec');
  writeFileSync(broken, '#!/bin/sh\necho "sandbox-exec: unbound variable: TMPDIR_0" >&2\nexit 65\n');
  chmodSync(broken, 0o755);
  const error = await rejection(runSeatbelt(plan(['/bin/true']), { ...fakeOptions, sandboxExecPath: broken }));
  assert.is(error.code, 'spawn_failed');
  assert.is(error.layer, 'seatbelt');
  assert.match(error.message, /nothing ran \(exit 65\): unbound variable: TMPDIR_0/);
  // The command's own failures stay its exit status, including a failed exec of the program.
  const own = await runSeatbelt(plan(['/bin/sh', '-c', 'echo "not sandbox-exec" >&2; exit 65']), fakeOptions);
  assert.is(own.exitCode, 65);
  const missing = await runSeatbelt(plan(['no-such-program-zs']), fakeOptions);
  assert.is(missing.exitCode, 127, missing.stderr);
  assert.is(sandboxExecSetupFailure(71, 'sandbox-exec: sandbox_apply: Operation not permitted\n', false), 'sandbox_apply: Operation not permitted');
  assert.is(sandboxExecSetupFailure(71, 'sandbox-exec: sandbox_apply: Operation not permitted\n', true), undefined);
  assert.is(sandboxExecSetupFailure(0, 'sandbox-exec: whatever\n', false), undefined);
  assert.is(sandboxExecSetupFailure(65, '', false), 'no reason given');
});

contract('a command that prints what sandbox-exec prints when it fails, and exits as it does, is still the command', async () => {
  // It ran under the profile (the launcher's byte arrived): its output and status decide nothing.
  const forged = await runSeatbelt(plan(['/bin/sh', '-c', 'echo "sandbox-exec: sandbox_apply: Operation not permitted" >&2; exit 65']), fakeOptions);
  assert.is(forged.exitCode, 65);
  assert.match(forged.stderr, /^sandbox-exec: sandbox_apply/);
  // Even writing to the launcher's descriptor number is nothing: it is closed before the command.
  const late = await runSeatbelt(plan(['/bin/sh', '-c', 'printf x >&3 2>/dev/null && echo wrote; exit 65']), fakeOptions);
  assert.is(late.exitCode, 65);
  assert.is(late.stdout, '', 'descriptor 3 is closed in the command');
});

contract('a launch that never reaches the launcher runs nothing and says so', async () => {
  // A sandbox-exec that execs without the launcher's pipe: the launcher cannot write its byte, so
  // it does not start the command, and the run is a setup failure, not the command's exit.
  const closing = join(base, 'closing-sandbox-exec');
  writeFileSync(closing, '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec 3>&-\nexec "$@"\n');
  chmodSync(closing, 0o755);
  const flag = join(ws, 'ran-anyway');
  const error = await rejection(runSeatbelt(plan(['/bin/sh', '-c', `touch ${flag}`]), { ...fakeOptions, sandboxExecPath: closing }));
  assert.is(error.code, 'spawn_failed');
  assert.not.ok(existsSync(flag), 'the command did not run');
});

contract('the probe check runs the real profile (both network modes) and reports a sandbox-exec that rejects it', () => {
  const recorded = join(base, 'profile-check-args.txt');
  const recording = join(base, 'recording-sandbox-exec');
  writeFileSync(recording, `#!/bin/sh\nprintf "%s\\n" "$@" >> "${recorded}"\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`);
  chmodSync(recording, 0o755);
  rmSync(recorded, { force: true });
  const good = checkSeatbeltProfile(recording, {});
  assert.equal(good, { attempted: true, ok: true, errno: 0, value: 0 });
  const args = readFileSync(recorded, 'utf8');
  assert.is(args.split('\n').filter((line) => line === '(version 1)').length, 2, 'both profiles were given');
  // The profile checked is the one runs use: deny rules carry the denial-log tag.
  assert.match(args, /\(deny network\* \(with message "zsdeny[0-9a-f]{24}"\)\)/);
  assert.match(args, /\(deny default \(with message "zsdeny[0-9a-f]{24}"\)\)/);
  assert.match(args, /\(allow network\*\)/);
  const rejecting = join(base, 'rejecting-sandbox-exec');
  writeFileSync(rejecting, '#!/bin/sh\necho "sandbox-exec: unknown operation: system-socket" >&2\nexit 65\n');
  chmodSync(rejecting, 0o755);
  const bad = checkSeatbeltProfile(rejecting, {});
  assert.is(bad.ok, false);
  assert.is(bad.errno, 65);
  assert.match(bad.syscall ?? '', /network deny profile: sandbox-exec: unknown operation: system-socket/);
});

contract('maxBuffer keeps head and tail with the marker (as on Linux); onMaxBuffer kill, a missing sandbox-exec, resource limits and another platform fail with their codes', async () => {
  const big = await runSeatbelt(plan(['/bin/sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" a; printf END']), { ...fakeOptions, maxBuffer: 1000 });
  assert.is(big.truncated, true);
  assert.is(big.outputBytes.stdout, 100003);
  assert.ok(big.stdout.startsWith('a'.repeat(500) + '\n[zero] output truncated: 99003 bytes omitted'), big.stdout.slice(0, 600));
  assert.ok(big.stdout.endsWith('a'.repeat(497) + 'END'), big.stdout.slice(-600));
  assert.ok(big.denials.some((d) => d.capability.scope === 'maxBuffer.stdout'), JSON.stringify(big.denials));
  const killed = await rejection(runSeatbelt(plan(['/bin/sh', '-c', 'head -c 100000 /dev/zero']), { ...fakeOptions, maxBuffer: 1000, onMaxBuffer: 'kill' }));
  assert.is(killed.code, 'max_buffer_exceeded');
  const missing = await rejection(runSeatbelt(plan(['/bin/true']), { ...fakeOptions, sandboxExecPath: join(base, 'nope') }));
  assert.is(missing.code, 'spawn_failed');
  assert.match(missing.message, /nope/);
  const limited = await rejection(runSeatbelt(plan(['/bin/true'], { limits: { cpuSeconds: 5, openFiles: 64 } }), fakeOptions));
  assert.is(limited.code, 'sandbox_unavailable');
  assert.match(limited.message, /cannot enforce the limits cpuSeconds, openFiles/);
  const linux = await rejection(runOnPlatform(['/bin/true'], {}, { platform: 'linux', probe: () => { throw new Error('not probed'); } }));
  assert.is(linux.code, 'sandbox_unavailable');
  assert.match(linux.message, /no native sandbox backend exists for linux/);
});

// ---- The real seatbelt (macOS only) ----------------------------------------------------------

const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1';
const onMac = process.platform === 'darwin' && (MUST_WORK || existsSync('/usr/bin/sandbox-exec'));
// Registered only on macOS (a skipped uvu test miscounts in scripts/run-tests.mjs).
const real = (name: string, fn: () => Promise<void>): void => {
  if (onMac) test(name, fn);
};

function sh(script: string, overrides: Partial<SandboxPlan> = {}): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return runSeatbelt(plan(['/bin/sh', '-c', script], overrides), { timeoutMs: 20_000 });
}

real('macOS: the workspace and private temp are writable, the shared /tmp and a sibling directory are not', async () => {
  const ok = await sh(`echo hi > "${ws}/a.txt" && echo t > "${tmp}/b.txt" && cat "${ws}/a.txt"`);
  assert.is(ok.exitCode, 0, ok.stderr);
  const outside = await sh(`echo x > /tmp/zs-escape-$$`);
  assert.is.not(outside.exitCode, 0);
  const sibling = await sh(`echo x > "${base}/escape.txt"`);
  assert.is.not(sibling.exitCode, 0);
  assert.not.ok(existsSync(join(base, 'escape.txt')));
});

real('macOS: a deny-read file cannot be read, nor renamed away through its parent', async () => {
  mkdirSync(join(ws, 'secrets'), { recursive: true });
  writeFileSync(join(ws, 'secrets', 'key'), 'TOPSECRET');
  const overrides = { denyRead: [join(ws, 'secrets', 'key')] };
  const read = await sh(`cat "${ws}/secrets/key"`, overrides);
  assert.is.not(read.exitCode, 0);
  assert.not.ok(read.stdout.includes('TOPSECRET'));
  const moved = await sh(`mv "${ws}/secrets" "${ws}/moved" && cat "${ws}/moved/key"`, overrides);
  assert.not.ok(moved.stdout.includes('TOPSECRET'));
  assert.ok(existsSync(join(ws, 'secrets', 'key')));
});

real('macOS: .git/hooks stays read-only and .zero cannot be created', async () => {
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  const hook = await sh(`echo evil > "${ws}/.git/hooks/pre-commit"`);
  assert.is.not(hook.exitCode, 0);
  assert.not.ok(existsSync(join(ws, '.git', 'hooks', 'pre-commit')));
  const zero = await sh(`mkdir "${ws}/.zero"`);
  assert.is.not(zero.exitCode, 0);
  assert.not.ok(existsSync(join(ws, '.zero')));
});

real('macOS: network deny blocks a connection to a host loopback listener', async () => {
  const server = createServer((socket) => socket.end('HOST-SECRET'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    const probe = await sh(`/usr/bin/nc -w 2 127.0.0.1 ${port} </dev/null`);
    assert.not.ok(probe.stdout.includes('HOST-SECRET'));
  } finally {
    server.close();
  }
});

test.after(() => {
  rmSync(base, { recursive: true, force: true });
});

test.run();
