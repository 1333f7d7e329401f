// SPDX-License-Identifier: MIT
// Network deny on Windows, tried from inside a container: what each outcome of the connection
// probe proves (judged from what the container and our listener saw), the probe around an
// injected launcher that plays the container (connecting for real when it plays a container the
// firewall does not isolate), the script itself run unsandboxed, and the gate in front of the
// Windows starter with a stand-in addon: a deny run waits for the finding and is refused with
// sandbox_unavailable before the addon is called when the probe got through or could not run.
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { buildEnforcementReport } from '../../lib/backend/enforcement.js';
import { gateNetworkDeny, judgeNetworkProbe, launchThrough, NETWORK_PROBE_SCRIPT, NetworkProbeGate, runNetworkProbe, type NetworkProbeLaunch, type NetworkProbeLauncher } from '../../lib/backend/windows/net-probe.js';
import { windowsAsyncStarter, windowsStarter } from '../../lib/backend/windows/start.js';
import type { WindowsSpawnSpec } from '../../lib/backend/windows/launch-spec.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import type { NativeExit } from '../../lib/native/types.js';
import { addNetworkProbe, buildProbeReport } from '../../lib/probe.js';
import { startSandboxed } from '../../lib/sandbox/process.js';
import { runWith } from '../../lib/sandbox/run.js';
import { rejection } from '../helpers/sandbox.js';
import { preparedFromPlan } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-netprobe-')));
const WS = 'C:\\Users\\dev\\project';
const TMP = 'C:\\Users\\dev\\AppData\\Local\\Temp\\zero-sandbox-net';

/** What the script prints for two tries. */
const report = (loopback: object, testNet: object): string => `${JSON.stringify({ loopback, testNet })}\n`;
const EACCES = { result: 'error', code: 'EACCES', errno: -4092 };
const launched = (stdout: string, exitCode: number | null = 0): NetworkProbeLaunch => ({ exitCode, stdout, stderr: '', timedOut: false });

/** A launcher playing a container: `connects` reaches our listener for real with the nonce. */
function playing(stdout: string, connects = false): NetworkProbeLauncher & { calls: string[][] } {
  const calls: string[][] = [];
  const launcher = async (args: string[]): Promise<NetworkProbeLaunch> => {
    calls.push(args);
    if (connects) {
      const [host, port, nonce] = args;
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: host!, port: Number(port) }, () => socket.end(nonce, () => resolve()));
        socket.on('error', reject);
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return launched(stdout);
  };
  return Object.assign(launcher, { calls });
}

const seen = (launch: NetworkProbeLaunch | undefined, arrivals = 0) => ({ ...(launch === undefined ? {} : { launch }), loopbackTarget: '127.0.0.1:5000', loopbackArrivals: arrivals, durationMs: 1 });

test('judge: EACCES from TEST-NET with nothing at the listener is isolated; a timeout or no route is inconclusive, allowed and said', () => {
  const isolated = judgeNetworkProbe(seen(launched(report({ result: 'error', code: 'ECONNREFUSED' }, EACCES))));
  assert.is(isolated.outcome, 'isolated');
  assert.is(isolated.denyRunsAllowed, true);
  assert.equal(isolated.testNet, { target: '192.0.2.1:443', result: 'error', code: 'EACCES', errno: -4092 });
  assert.equal(isolated.loopback, { target: '127.0.0.1:5000', result: 'error', code: 'ECONNREFUSED' });
  for (const testNet of [{ result: 'timeout' }, { result: 'error', code: 'ENETUNREACH' }, { result: 'error', code: 'EHOSTUNREACH' }]) {
    const found = judgeNetworkProbe(seen(launched(report({ result: 'timeout' }, testNet))));
    assert.is(found.outcome, 'inconclusive', JSON.stringify(testNet));
    assert.is(found.denyRunsAllowed, true);
    assert.match(found.detail, /not proven/);
  }
});

test('judge: a connection that arrived, succeeded, or an answer from TEST-NET is not_isolated and refuses deny runs', () => {
  const arrived = judgeNetworkProbe(seen(launched(report({ result: 'error', code: 'EACCES' }, EACCES)), 1));
  assert.is(arrived.outcome, 'not_isolated', 'the listener is believed over the container');
  assert.match(arrived.detail, /reached the host listener/);
  for (const [loopback, testNet] of [[{ result: 'connected' }, EACCES], [EACCES, { result: 'connected' }], [EACCES, { result: 'error', code: 'ECONNREFUSED' }], [EACCES, { result: 'error', code: 'ECONNRESET' }]] as const) {
    const found = judgeNetworkProbe(seen(launched(report(loopback, testNet))));
    assert.is(found.outcome, 'not_isolated', JSON.stringify([loopback, testNet]));
    assert.is(found.denyRunsAllowed, false);
  }
});

test('judge: no report, half a report or a launch error is launch_failed and refuses deny runs', () => {
  const cases = [
    judgeNetworkProbe(seen(launched('', 1))),
    judgeNetworkProbe(seen(launched(`${JSON.stringify({ loopback: { result: 'timeout' } })}\n`))),
    judgeNetworkProbe(seen(launched('not json\n'))),
    judgeNetworkProbe(seen(launched('', null))),
    judgeNetworkProbe({ ...seen(undefined), launchError: { code: 'sandbox_unavailable', message: 'CreateAppContainerProfile failed' } }),
  ];
  for (const found of cases) {
    assert.is(found.outcome, 'launch_failed');
    assert.is(found.denyRunsAllowed, false);
  }
  assert.equal(cases[4]!.launchError, { code: 'sandbox_unavailable', message: 'CreateAppContainerProfile failed' });
  assert.match(cases[0]!.detail, /exited with 1 without reporting both tries/);
});

test('probe: the launcher gets our listener, a nonce and TEST-NET; a container that connects is found not_isolated', async () => {
  const launcher = playing(report({ result: 'connected' }, EACCES), true);
  const found = await runNetworkProbe(launcher);
  const [host, port, nonce, far, farPort] = launcher.calls[0]!;
  assert.is(host, '127.0.0.1');
  assert.ok(Number(port) > 0);
  assert.match(nonce!, /^[0-9a-f]{32}$/);
  assert.equal([far, farPort], ['192.0.2.1', '443']);
  assert.is(found.outcome, 'not_isolated');
  assert.is(found.loopbackArrivals, 1);
  assert.is(found.loopback.target, `127.0.0.1:${port}`);
});

test('probe: a connection without the nonce (another program) is not counted; EACCES then proves isolation', async () => {
  const launcher: NetworkProbeLauncher = async ([host, port]) => {
    await new Promise<void>((resolve) => connect({ host: host!, port: Number(port) }, function (this: import('node:net').Socket) { this.end('someone else', () => resolve()); }).on('error', () => resolve()));
    return launched(report({ result: 'timeout' }, EACCES));
  };
  const found = await runNetworkProbe(launcher);
  assert.is(found.loopbackArrivals, 0);
  assert.is(found.outcome, 'isolated');
});

test('probe: timeout from TEST-NET is inconclusive; a launcher that throws is launch_failed with its code', async () => {
  assert.is((await runNetworkProbe(playing(report({ result: 'timeout' }, { result: 'timeout' })))).outcome, 'inconclusive');
  const failed = await runNetworkProbe(async () => {
    throw new SandboxError('sandbox_unavailable', 'appContainerProfile failed (CreateAppContainerProfile)');
  });
  assert.is(failed.outcome, 'launch_failed');
  assert.equal(failed.launchError, { code: 'sandbox_unavailable', message: 'appContainerProfile failed (CreateAppContainerProfile)' });
});

test('probe: the script itself, run unsandboxed here, reaches the listener and is found not_isolated', async () => {
  const launcher: NetworkProbeLauncher = (args) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', NETWORK_PROBE_SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr, timedOut: false }));
  });
  const found = await runNetworkProbe(launcher);
  assert.is(found.outcome, 'not_isolated', found.detail);
  assert.is(found.loopback.result, 'connected');
  assert.is(found.loopbackArrivals, 1);
  assert.ok(['timeout', 'error', 'connected'].includes(found.testNet.result), JSON.stringify(found.testNet));
});

test('gate: one probe per process for decisive findings; a launch failure is tried again', async () => {
  const isolated = playing(report({ result: 'timeout' }, EACCES));
  const gate = new NetworkProbeGate(isolated);
  await Promise.all([gate.require(), gate.require()]);
  await gate.require();
  assert.is(isolated.calls.length, 1);
  let tries = 0;
  const failing = new NetworkProbeGate(async () => {
    tries++;
    return launched('', 1);
  });
  for (let i = 0; i < 2; i++) {
    const error = await rejection(failing.require());
    assert.is(error.code, 'sandbox_unavailable');
    assert.match(error.message, /found launch_failed/);
  }
  assert.is(tries, 2);
  // A synchronous start after a launch failure is refused with that finding (and starts a retry).
  assert.throws(() => failing.requireSync(), (e: SandboxError) => e.code === 'sandbox_unavailable' && /found launch_failed/.test(e.message));
  await failing.measure();
  assert.is(tries, 3, 'measure() shares the retry the refusal started');
});

/** A stand-in addon: counts spawns and ends each at once with exit 0. */
class CountingBinding {
  specs: WindowsSpawnSpec[] = [];
  spawn(spec: object, onExit: (exit: NativeExit) => void): { pid: number } {
    this.specs.push(spec as WindowsSpawnSpec);
    setTimeout(() => onExit({ exitCode: 0, signal: null, execErrno: 0, commandExited: true }), 10);
    return { pid: 77 };
  }
  kill(): boolean {
    return true;
  }
}

function winPlan(network: SandboxPlan['network']): SandboxPlan {
  return posixPlan(WS, { argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/s', '/c', 'exit 0'], env: { PATH: 'C:\\Windows\\System32' }, network, writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: [] }] });
}

let journals = 0;
/** A listening address for stdio pipe `i`: a named pipe on Windows, a Unix socket elsewhere. */
let pipes = 0;
const pipeAt = (i: number): string => (process.platform === 'win32' ? `\\\\.\\pipe\\zs-netprobe-${process.pid}-${pipes++}-${i}` : join(base, `p${pipes++}-${i}.sock`));
function gated(network: SandboxPlan['network'], gate: NetworkProbeGate, binding: CountingBinding) {
  const deps = { binding, pipeAddress: pipeAt, aclJournalDir: join(base, `journal-${journals++}`) };
  const plan = winPlan(network);
  return gateNetworkDeny({ prepare: () => preparedFromPlan(plan, TMP, 'windows-appcontainer'), start: windowsStarter(deps), startAsync: windowsAsyncStarter(deps) }, gate);
}
const quiet = { stdio: ['ignore', 'ignore', 'ignore'] as ['ignore', 'ignore', 'ignore'] };

test('gated start: a probe that got through refuses network-deny runs with sandbox_unavailable before the addon is called', async () => {
  const binding = new CountingBinding();
  const gate = new NetworkProbeGate(playing(report({ result: 'connected' }, EACCES), true));
  const error = await rejection(runWith('exit 0', {}, gated('deny', gate, binding)));
  assert.is(error.code, 'sandbox_unavailable');
  assert.is(error.layer, 'appcontainer');
  assert.match(error.message, /found not_isolated: a connection from inside the container reached the host listener/);
  assert.is(binding.specs.length, 0, 'nothing was spawned');
  // The synchronous start refuses on the kept finding as well; network allow does not wait for it.
  assert.throws(() => startSandboxed('exit 0', quiet, gated('deny', gate, binding)), (e: SandboxError) => e.code === 'sandbox_unavailable');
  const allowed = await runWith('exit 0', {}, gated('allow', gate, binding));
  assert.is(allowed.exitCode, 0);
  assert.is(binding.specs.length, 1);
  assert.ok(binding.specs[0]!.windows.capabilitySids.length > 0, 'the allow run holds the network capabilities');
});

test('gated start: a probe that could not run refuses too (fail closed), naming its error', async () => {
  const binding = new CountingBinding();
  const gate = new NetworkProbeGate(async () => {
    throw new SandboxError('spawn_failed', 'node.exe could not start in the container');
  });
  const error = await rejection(runWith('exit 0', {}, gated('deny', gate, binding)));
  assert.is(error.code, 'sandbox_unavailable');
  assert.match(error.message, /found launch_failed: .*spawn_failed: node\.exe could not start/);
  assert.is(binding.specs.length, 0);
});

test('gated start: isolated and inconclusive findings let deny runs start with no capability SIDs; a synchronous first start returns at once and waits for the finding off the thread', async () => {
  for (const testNet of [EACCES, { result: 'timeout' }]) {
    const binding = new CountingBinding();
    const launcher = playing(report({ result: 'timeout' }, testNet));
    const gate = new NetworkProbeGate(launcher);
    const sync = () => startSandboxed('exit 0', quiet, gated('deny', gate, binding));
    const first = sync();
    assert.is(first.pid, 0, 'no process before the finding');
    assert.is(binding.specs.length, 0);
    const spawned = new Promise<number>((resolve) => first.once('spawn', () => resolve(first.pid)));
    assert.is((await first.exited).exitCode, 0);
    assert.is(await spawned, 77);
    const result = await runWith('exit 0', {}, gated('deny', gate, binding));
    assert.is(result.exitCode, 0);
    assert.is((await sync().exited).exitCode, 0);
    assert.is(launcher.calls.length, 1, 'one probe served the waiting synchronous start and the runs after it');
    assert.is(binding.specs.length, 3);
    for (const spec of binding.specs) assert.equal(spec.windows.capabilitySids, []);
  }
});

test('gated start: a synchronous first start whose probe refuses ran nothing: error event, exited rejects; its streams end', async () => {
  const binding = new CountingBinding();
  const gate = new NetworkProbeGate(playing(report({ result: 'connected' }, EACCES), true));
  const child = startSandboxed('exit 0', { stdio: 'pipe' }, gated('deny', gate, binding));
  const heard: unknown[] = [];
  child.on('error', (e) => heard.push(e));
  const ended = new Promise<void>((resolve) => child.stdout?.on('end', () => resolve()).resume());
  const error = await rejection(child.exited);
  assert.is(error.code, 'sandbox_unavailable');
  assert.match(error.message, /found not_isolated/);
  assert.equal(heard, [error]);
  await ended;
  assert.is(binding.specs.length, 0, 'nothing was spawned');
});

/** A stand-in addon that plays the probe script over the stdio pipes, or hangs until killed. */
class ScriptBinding {
  specs: WindowsSpawnSpec[] = [];
  kills = 0;
  released = 0;
  #onExit: ((exit: NativeExit) => void) | undefined;
  constructor(readonly stdout: string | undefined) {}
  spawn(spec: object, onExit: (exit: NativeExit) => void): { pid: number } {
    const s = spec as WindowsSpawnSpec;
    this.specs.push(s);
    this.#onExit = onExit;
    setTimeout(() => {
      if (this.stdout === undefined) return;
      const [, out, err] = s.stdio.map((entry) => (typeof entry === 'object' ? connect(entry.pipe).on('error', () => {}) : undefined));
      out!.write((s.stdio[1] as { nonce: string }).nonce);
      err!.write((s.stdio[2] as { nonce: string }).nonce);
      out!.end(this.stdout);
      err!.end();
      setTimeout(() => onExit({ exitCode: 0, signal: null, execErrno: 0, commandExited: true }), 30);
    }, 0);
    return { pid: 78 };
  }
  kill(): boolean {
    this.kills++;
    setImmediate(() => this.#onExit?.({ exitCode: null, signal: 9, execErrno: 0, commandExited: false }));
    return true;
  }
}

test('launch: the probe script goes through the Windows starter (no capability SIDs), its stdout comes back, a hang is killed', async () => {
  const line = report({ result: 'timeout' }, EACCES);
  for (const stdout of [line, undefined]) {
    const binding = new ScriptBinding(stdout);
    const deps = { binding, pipeAddress: pipeAt, aclJournalDir: join(base, `journal-${journals++}`) };
    let released = 0;
    const plan = winPlan('deny');
    const backend = { prepare: () => ({ ...preparedFromPlan(plan, TMP, 'windows-appcontainer'), release: () => void released++ }), start: windowsStarter(deps), startAsync: windowsAsyncStarter(deps) };
    const got = await launchThrough(backend, ['node.exe', '-e', 'x'], {}, stdout === undefined ? 100 : 20_000);
    assert.equal(binding.specs[0]!.windows.capabilitySids, []);
    assert.is(released, 1, 'what preparing took is released once');
    if (stdout === undefined) {
      assert.equal([got.timedOut, got.exitCode, binding.kills], [true, null, 1]);
    } else {
      assert.equal(got, { exitCode: 0, stdout: line, stderr: '', timedOut: false });
      assert.is(binding.kills, 0);
    }
  }
});

test('report: doctor and the loss report carry the finding; a refusing one makes the default policy unenforceable', async () => {
  const facts = Object.fromEntries(['appContainerProfile', 'securityCapabilities', 'jobObject', 'appContainerSpawn', 'firewallService'].map((n) => [n, { attempted: true, ok: true, errno: 0, value: 0 }]));
  const probed = buildProbeReport({ platform: 'win32', arch: 'x64', release: '10.0.22631', uid: -1, facts }, {});
  const notIsolated = judgeNetworkProbe(seen(launched(report({ result: 'connected' }, EACCES))));
  const refused = addNetworkProbe(probed, notIsolated);
  assert.is(refused.canEnforceDefaultPolicy, false);
  assert.ok(refused.missing.some((m) => m.layer === 'appcontainer' && /not_isolated/.test(m.reason)));
  assert.equal(refused.windows.networkProbe, notIsolated);
  const loss = buildEnforcementReport(refused, { network: 'deny' });
  assert.is(loss.complete, false);
  assert.match(loss.capabilities.find((c) => c.capability.startsWith('network deny'))!.reason!, /not_isolated/);
  const inconclusive = addNetworkProbe(probed, judgeNetworkProbe(seen(launched(report({ result: 'timeout' }, { result: 'timeout' })))));
  assert.is(inconclusive.canEnforceDefaultPolicy, true);
  const stated = buildEnforcementReport(inconclusive, { network: 'deny' });
  assert.is(stated.complete, true);
  assert.ok(stated.limitations.some((l) => /probe was inconclusive here/.test(l)));
  assert.match(addNetworkProbe(probed, undefined).windows.networkProbeSkipped!, /not measured yet/);
});

test.after(() => rmSync(base, { recursive: true, force: true }));

test.run();
