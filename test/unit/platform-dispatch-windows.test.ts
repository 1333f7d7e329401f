// SPDX-License-Identifier: MIT
// The Windows dispatch, on any OS: the spec handed to the native spawn (binding injected), the
// stdio pipes with their nonce check (Unix sockets stand in for named pipes), exit, kill, timeout,
// and the fail-closed refusal.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { rejection } from '../helpers/sandbox.js';
import { drive, SEEDED_CONFIG, seedRepository, planBackend, runOnPlatform, spawnOnPlatform } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import type { NativeExit } from '../../lib/native/types.js';
import { buildProbeReport } from '../../lib/probe.js';
import { buildPlatformArgv, buildWindowsSourceEnv, type PlatformDeps } from '../../lib/sandbox/platform-backends.js';
import { buildWindowsSpawnSpec, resolveWindowsProgram, type WindowsSpawnSpec } from '../../lib/backend/windows/launch-spec.js';
import { windowsStarter } from '../../lib/backend/windows/start.js';
import type { InternalSpawnOptions } from '../../lib/sandbox/contract.js';
import { SandboxedProcess, startSandboxed } from '../../lib/sandbox/process.js';
import { runWith } from '../../lib/sandbox/run.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-dispatch-win-')));
const WS = 'C:\\Users\\dev\\project';
const TMP = 'C:\\Users\\dev\\AppData\\Local\\Temp\\zero-sandbox-abc';
const CMD = 'C:\\Windows\\System32\\cmd.exe';

function winPlan(overrides: Partial<SandboxPlan> = {}): SandboxPlan {
  return posixPlan(WS, {
    argv: [CMD, '/d', '/s', '/c', 'echo hi'],
    env: { PATH: 'C:\\Windows\\System32', ZERO_SANDBOXED: '1', APPDATA: 'C:\\Users\\dev\\AppData\\Roaming' },
    writeRoots: [{ root: WS, readOnlySubpaths: [`${WS}\\.git\\hooks`, `${WS}\\.git\\config`], protectedNames: ['.zero', '.agents'] }],
    ...overrides,
  });
}

const fact = (ok: boolean) => ({ attempted: true, ok, errno: ok ? 0 : 5, value: 0 });
function winProbe(ok: boolean) {
  const facts = { appContainerProfile: fact(ok), securityCapabilities: fact(true), jobObject: fact(true), appContainerSpawn: fact(true), firewallService: fact(true) };
  return buildProbeReport({ platform: 'win32', arch: 'x64', release: '10.0.22631', uid: -1, facts }, {});
}

/** A stand-in for the addon: records the spec, plays the command over the pipes, reports exits. */
class FakeBinding {
  specs: WindowsSpawnSpec[] = [];
  kills: Array<[number, number]> = [];
  onExit: ((exit: NativeExit) => void) | undefined;
  /** What the stand-in command does with its connected stdio sockets. */
  constructor(readonly play: (sockets: Array<Socket | undefined>, exit: (raw: NativeExit) => void) => void, readonly intrude = false) {}

  spawn(spec: object, onExit: (exit: NativeExit) => void): { pid: number } {
    const s = spec as WindowsSpawnSpec;
    this.specs.push(s);
    this.onExit = onExit;
    // An intruder that reaches the pipe first, with a wrong nonce, must not become the stream.
    for (const entry of s.stdio) {
      if (this.intrude && typeof entry === 'object') connect(entry.pipe).on('error', () => {}).end('0'.repeat(32) + 'INTRUDER');
    }
    setTimeout(() => {
      const sockets = s.stdio.map((entry) => {
        if (typeof entry !== 'object') return undefined;
        const socket = connect(entry.pipe);
        socket.write(entry.nonce);
        return socket;
      });
      setTimeout(() => this.play(sockets, onExit), 20);
    }, this.intrude ? 30 : 0);
    return { pid: 4242 };
  }

  kill(pid: number, signal: number): boolean {
    this.kills.push([pid, signal]);
    setImmediate(() => this.onExit?.({ exitCode: null, signal: 9, execErrno: 0, commandExited: false }));
    return true;
  }
}

let pipeCount = 0;
/** A listening address: a named pipe on Windows (where node:net cannot listen on a file path), a Unix socket elsewhere. */
function pipeAt(name: string): string {
  return process.platform === 'win32' ? `\\\\.\\pipe\\zs-dispatch-win-${process.pid}-${name}` : join(base, `${name}.sock`);
}
function deps(binding: FakeBinding, ok = true): PlatformDeps {
  return { platform: 'win32', probe: () => winProbe(ok), binding, pipeAddress: () => pipeAt(`pipe-${pipeCount++}`) };
}

/** The Windows starter under the shared lifecycle, for a fixed plan. */
function winBackend(plan: SandboxPlan, tmpDir: string, d: PlatformDeps) {
  return planBackend(plan, tmpDir, 'windows-appcontainer', windowsStarter({ ...(d.binding === undefined ? {} : { binding: d.binding }), ...(d.pipeAddress === undefined ? {} : { pipeAddress: d.pipeAddress }) }));
}

/** spawnSandboxed's path for a fixed plan on the Windows starter. */
function startWindows(plan: SandboxPlan, options: InternalSpawnOptions, tmpDir: string, d: PlatformDeps): SandboxedProcess {
  return startSandboxed(plan.argv, options, winBackend(plan, tmpDir, d));
}

const exited = (code: number) => ({ exitCode: code, signal: null, execErrno: 0, commandExited: true });

/** Echoes stdin to stdout with a prefix, writes stderr, then exits with 7. */
const echo = (sockets: Array<Socket | undefined>, exit: (raw: NativeExit) => void): void => {
  const [stdin, stdout, stderr] = sockets;
  let input = '';
  stdin!.on('data', (c: Buffer) => (input += c.toString()));
  stdin!.on('end', () => {
    stdout!.end(`out:${input}`);
    stderr!.end('err');
    setTimeout(() => exit(exited(7)), 20);
  });
};

test('environment: one spelling per name, PATH and the temp variables upper-cased', () => {
  assert.equal(buildWindowsSourceEnv({ Path: 'C:\\bin', PATH: 'dup', Temp: 'C:\\t', SystemRoot: 'C:\\Windows' }), { PATH: 'C:\\bin', TEMP: 'C:\\t', SystemRoot: 'C:\\Windows' });
});

test('argv: a shell string runs under cmd.exe /d /s /c on Windows, /bin/sh -c elsewhere', () => {
  assert.equal(buildPlatformArgv('dir /b', 'win32', { ComSpec: 'D:\\Win\\cmd.exe' }), ['D:\\Win\\cmd.exe', '/d', '/s', '/c', 'dir /b']);
  assert.equal(buildPlatformArgv('dir', 'win32', { SystemRoot: 'E:\\W' }), ['E:\\W\\System32\\cmd.exe', '/d', '/s', '/c', 'dir']);
  assert.equal(buildPlatformArgv('ls', 'darwin', {}), ['/bin/sh', '-c', 'ls']);
  assert.equal(buildPlatformArgv(['git', 'status'], 'win32', {}), ['git', 'status']);
});

test('program resolution: PATH and PATHEXT, absolute PATH entries only, clear error', () => {
  const files = new Set(['C:\\Tools\\git.exe', 'C:\\Tools\\npm.cmd', 'C:\\Users\\dev\\project\\build.bat']);
  const isFile = (p: string): boolean => files.has(p);
  const env = { PATH: '.;C:\\Windows\\System32;C:\\Tools', PATHEXT: '.COM;.EXE;.BAT;.CMD' };
  assert.is(resolveWindowsProgram('git', env, WS, isFile), 'C:\\Tools\\git.exe');
  assert.is(resolveWindowsProgram('npm', env, WS, isFile), 'C:\\Tools\\npm.cmd');
  assert.is(resolveWindowsProgram('git.exe', env, WS, isFile), 'C:\\Tools\\git.exe');
  assert.is(resolveWindowsProgram('.\\build.bat', env, WS, isFile), 'C:\\Users\\dev\\project\\build.bat');
  assert.is(resolveWindowsProgram('D:\\x\\..\\y.exe', env, WS, isFile), 'D:\\y.exe');
  // "." in PATH is not searched: a planted build.bat in the workspace is not picked up by name.
  const error = (() => {
    try {
      resolveWindowsProgram('build', env, WS, isFile);
    } catch (e) {
      return e as SandboxError;
    }
    throw new Error('expected exec_failed');
  })();
  assert.is(error.code, 'exec_failed');
  assert.match(error.message, /build was not found/);
});

test('spec: container per workspace, no capabilities under deny, ACL plan with the private temp dir', () => {
  const spec = buildWindowsSpawnSpec(winPlan({ readRoots: ['/', 'D:\\data'] }), TMP, ['ignore', 1, { pipe: '\\\\.\\pipe\\x', nonce: 'n' }]);
  assert.match(spec.windows.containerName, /^zero-sandbox\.[0-9a-f]{32}$/);
  assert.equal(spec.windows.capabilitySids, []);
  assert.equal(spec.stdio, ['ignore', 1, { pipe: '\\\\.\\pipe\\x', nonce: 'n' }]);
  assert.is(spec.cwd, WS);
  assert.equal(spec.env, ['APPDATA=C:\\Users\\dev\\AppData\\Roaming', 'PATH=C:\\Windows\\System32', 'ZERO_SANDBOXED=1']);
  const acl = spec.windows.aclKinds.map((kind, i) => `${kind} ${spec.windows.aclPaths[i]}`);
  assert.ok(acl.includes('allow-read D:\\data'), acl.join('\n'));
  assert.ok(acl.includes(`allow-write ${WS}`));
  assert.ok(acl.includes(`allow-write ${TMP}`));
  assert.ok(acl.includes(`deny-write? ${WS}\\.zero`));
  assert.not.ok(spec.windows.aclPaths.includes('/'), 'the read-all root is not an ACL entry');
  const allow = buildWindowsSpawnSpec(winPlan({ network: 'allow' }), TMP, ['ignore', 'ignore', 'ignore']);
  assert.equal(allow.windows.capabilitySids, ['S-1-15-3-1', 'S-1-15-3-3']);
});

test('spec: cmd.exe gets its text verbatim inside /s /c quotes; argv commands are quoted per argument', () => {
  const shell = buildWindowsSpawnSpec(winPlan({ argv: [CMD, '/d', '/s', '/c', 'echo "a b" & exit 3'] }), TMP, ['ignore', 'ignore', 'ignore']);
  assert.is(shell.windows.commandLine, `${CMD} /d /s /c "echo "a b" & exit 3"`);
  const direct = buildWindowsSpawnSpec(winPlan({ argv: ['C:\\Program Files\\Git\\git.exe', 'commit', '-m', 'a "b"'] }), TMP, ['ignore', 'ignore', 'ignore']);
  assert.is(direct.windows.commandLine, '"C:\\Program Files\\Git\\git.exe" commit -m "a \\"b\\""');
});

test('spec: limits a job object cannot enforce are refused', () => {
  try {
    buildWindowsSpawnSpec(winPlan({ limits: { cpuSeconds: 10 } }), TMP, ['ignore', 'ignore', 'ignore']);
    assert.unreachable('expected sandbox_unavailable');
  } catch (error) {
    assert.is((error as SandboxError).code, 'sandbox_unavailable');
    assert.match((error as SandboxError).message, /cpuSeconds/);
  }
});

test('spawn: the native call gets the spec; verified pipes carry stdin, stdout and stderr; intruders are dropped', async () => {
  const binding = new FakeBinding(echo, true);
  const child = startWindows(winPlan(), {}, TMP, deps(binding));
  assert.is(child.pid, 4242);
  assert.is(child.backend, 'windows-appcontainer');
  assert.instance(child, SandboxedProcess);
  assert.is(binding.specs.length, 1);
  const spec = binding.specs[0]!;
  assert.is(spec.windows.commandLine, `${CMD} /d /s /c "echo hi"`);
  const nonces = spec.stdio.map((entry) => (typeof entry === 'object' ? entry.nonce : ''));
  nonces.forEach((nonce) => assert.match(nonce, /^[0-9a-f]{32}$/));
  assert.is(new Set(nonces).size, 3);
  const { exit, events, stdout, stderr } = await drive(child, 'ping');
  assert.equal(exit, { exitCode: 7, signal: null, timedOut: false, aborted: false, protectedPathViolations: [] });
  assert.equal(events, [exit]);
  assert.is(stdout, 'out:ping');
  assert.is(stderr, 'err');
  assert.is(child.kill(), false, 'kill after exit is a no-op');
  assert.equal(binding.kills, []);
});

test('spawn: kill() terminates the job through the addon and reports SIGKILL', async () => {
  const binding = new FakeBinding(() => {});
  const child = startWindows(winPlan(), { stdio: ['ignore', 'ignore', 'ignore'] }, TMP, deps(binding));
  assert.equal(binding.specs[0]!.stdio, ['ignore', 'ignore', 'ignore']);
  assert.is(child.stdout, null);
  assert.ok(child.kill());
  const exit = await child.exited;
  assert.equal(binding.kills, [[4242, 9]]);
  assert.is(exit.signal, 'SIGKILL');
  assert.is(exit.exitCode, null);
});

test('spawn: timeoutMs and abort kill the job and are reported', async () => {
  const binding = new FakeBinding(() => {});
  const timed = await startWindows(winPlan(), { timeoutMs: 30, stdio: ['ignore', 'inherit', 'ignore'] }, TMP, deps(binding)).exited;
  assert.equal(binding.specs[0]!.stdio, ['ignore', 1, 'ignore']);
  assert.is(timed.timedOut, true);
  const controller = new AbortController();
  const child = startWindows(winPlan(), { signal: controller.signal, stdio: ['ignore', 'ignore', 'ignore'] }, TMP, deps(binding));
  controller.abort();
  assert.is((await child.exited).aborted, true);
  assert.is(binding.kills.length, 2);
});

test('spec: a resolved .cmd program runs through cmd.exe with its arguments quoted for cmd.exe, or is refused', () => {
  const spec = buildWindowsSpawnSpec(winPlan({ argv: ['C:\\Tools\\npm.cmd', 'install', 'a&b'] }), TMP, ['ignore', 'ignore', 'ignore']);
  assert.is(spec.windows.commandLine, 'C:\\Windows\\System32\\cmd.exe /d /s /c ""C:\\Tools\\npm.cmd" install "a&b""');
  assert.throws(() => buildWindowsSpawnSpec(winPlan({ argv: ['C:\\Tools\\build.BAT', '%USERPROFILE%'] }), TMP, ['ignore', 'ignore', 'ignore']), /cmd\.exe would interpret/);
  // An .exe keeps the MSVC quoting.
  const exe = buildWindowsSpawnSpec(winPlan({ argv: ['C:\\Tools\\git.exe', 'a&b'] }), TMP, ['ignore', 'ignore', 'ignore']);
  assert.is(exe.windows.commandLine, 'C:\\Tools\\git.exe a&b');
});

test('spawn: a failing native spawn closes the pipes and surfaces its error', async () => {
  const address = pipeAt('failing');
  const failing = { spawn: () => { throw new SandboxError('sandbox_unavailable', 'CreateAppContainerProfile failed', { layer: 'appcontainer' }); }, kill: () => false };
  try {
    startWindows(winPlan(), {}, TMP, { platform: 'win32', probe: () => winProbe(true), binding: failing, pipeAddress: () => address });
    assert.unreachable('expected the native error');
  } catch (error) {
    assert.is((error as SandboxError).code, 'sandbox_unavailable');
  }
  const refused = await new Promise<string>((resolve) => connect(address).on('connect', () => resolve('connected')).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')));
  assert.ok(refused === 'ECONNREFUSED' || refused === 'ENOENT', refused);
});

test('run: output collected into the RunResult shape', async () => {
  const binding = new FakeBinding(echo);
  const result = await runWith(['echo'], { input: 'abc' }, winBackend(winPlan(), TMP, deps(binding)));
  assert.equal(Object.keys(result).sort(), ['aborted', 'backend', 'denials', 'durationMs', 'exitCode', 'network', 'outputBytes', 'prewarmed', 'protectedPathViolations', 'scrubbedEnv', 'signal', 'stderr', 'stdout', 'timedOut', 'truncated']);
  assert.is(result.stdout, 'out:abc');
  assert.is(result.stderr, 'err');
  assert.is(result.exitCode, 7);
  assert.is(result.backend, 'windows-appcontainer');
});

// Windows only (the AppContainer spec takes drive-letter paths; `npm run test:wine` runs it): the
// same check on POSIX paths is the macOS dispatch test's.
const onWindows = (name: string, fn: () => Promise<void>): void => {
  if (process.platform === 'win32') test(name, fn);
};

onWindows('attack (Windows backend): git files planted for host git are undone once the job is empty', async () => {
  // The stand-in job writes into a real workspace (Windows paths and case rules) and only then
  // reports the exit, as the addon does once the job counts no process: the after-run check is
  // the same guard and check as on Linux.
  const repo = join(base, 'git-plant');
  seedRepository(repo);
  const config = SEEDED_CONFIG;
  // Windows volumes are case-insensitive: a `.GIT` is the `.git` host git opens there.
  const dotGit = '.GIT';
  const binding = new FakeBinding((_sockets, exit) => {
    writeFileSync(join(repo, '.git', 'config'), `${config}[core]\n\tfsmonitor = evil.exe\n`);
    for (const dir of ['hooks', 'objects', 'refs']) mkdirSync(join(repo, 'a', 'b', dotGit, dir), { recursive: true });
    writeFileSync(join(repo, 'a', 'b', dotGit, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(repo, 'a', 'b', dotGit, 'config'), '[core]\n\thooksPath = ../../hooks\n');
    writeFileSync(join(repo, 'a', 'b', dotGit, 'hooks', 'post-checkout'), 'evil');
    mkdirSync(join(repo, '.vscode'));
    writeFileSync(join(repo, '.vscode', 'tasks.json'), '{"tasks":[{"command":"evil","runOptions":{"runOn":"folderOpen"}}]}');
    setTimeout(() => exit(exited(0)), 5);
  });
  const plan = posixPlan(repo, { argv: [CMD, '/d', '/s', '/c', 'plant'], writeRoots: [{ root: repo, readOnlySubpaths: [], protectedNames: ['.zero', '.agents'] }] });
  const exit = await startWindows(plan, { stdio: ['ignore', 'ignore', 'ignore'] }, TMP, deps(binding)).exited;
  assert.is(exit.exitCode, 1, 'a command that exited 0 but planted for host git fails');
  const violations = exit.protectedPathViolations;
  assert.ok(violations.includes(join(repo, '.git', 'config')), violations.join(' '));
  assert.is(readFileSync(join(repo, '.git', 'config'), 'utf8'), config, 'the config is put back byte for byte');
  assert.not.ok(existsSync(join(repo, 'a', 'b', dotGit, 'config')), violations.join(' '));
  assert.not.ok(existsSync(join(repo, 'a', 'b', dotGit, 'hooks', 'post-checkout')), violations.join(' '));
  assert.ok(existsSync(join(repo, 'a', 'b', dotGit, 'HEAD')), 'the new repository itself is kept');
  assert.not.ok(existsSync(join(repo, '.vscode', 'tasks.json')));
});

test('fail closed: an AppContainer the probe found unusable refuses before the addon is called', async () => {
  const binding = new FakeBinding(() => {});
  const error = (() => {
    try {
      spawnOnPlatform(['cmd'], { workspace: base }, deps(binding, false));
    } catch (e) {
      return e as SandboxError;
    }
    throw new Error('expected sandbox_unavailable');
  })();
  assert.is(error.code, 'sandbox_unavailable');
  assert.is(error.layer, 'appcontainer');
  assert.match(error.message, /appContainerProfile failed/);
  const run = await rejection(runOnPlatform('dir', { workspace: base }, deps(binding, false)));
  assert.is(run.code, 'sandbox_unavailable');
  assert.equal(binding.specs, []);
});

test.after(() => rmSync(base, { recursive: true, force: true }));
test.run();
