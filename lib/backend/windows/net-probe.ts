// SPDX-License-Identifier: MIT
// Network deny on Windows, tried from inside: a tiny Node.js script, launched by the caller's
// launcher in an AppContainer with no capability SIDs (platform-backends.ts: the same spawn real
// runs use), connects to a listener we open on 127.0.0.1 and to a never-routed TEST-NET address
// (192.0.2.1, RFC 5737). What each outcome proves is judged here (pure); the gate keeps one
// result per process. docs/architecture.md explains what it proves and what it does not.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';

import { SandboxError } from '../../errors.js';
import type { AsyncStarter, OsExit, OsProcess, PreparedRun, SandboxBackend, StartIo } from '../../sandbox/contract.js';
import { deferredProcess } from '../../sandbox/deferred-start.js';
import type { RunOptions } from '../../sandbox/options.js';

/** The never-routed address the script connects to (TEST-NET-1, documentation only). */
export const TEST_NET_ADDRESS = '192.0.2.1';
export const TEST_NET_PORT = 443;
/** How long the script waits for each connect before it calls the try a timeout. */
export const CONNECT_WAIT_MS = 3000;

/**
 * The script the container runs (`node -e`): argv is loopback host, port, nonce, far host, far
 * port. It writes the nonce on a loopback connection (so the listener knows it is ours) and prints
 * one JSON line: per target `connected`, `timeout` or `error` with the error's code.
 */
export const NETWORK_PROBE_SCRIPT = [
  "const net=require('net');const [,h,p,n,fh,fp]=process.argv;const out={};let left=2;",
  'const fin=(k,v,s)=>{if(out[k])return;out[k]=v;if(s)s.destroy();if(--left===0)process.stdout.write(JSON.stringify(out)+"\\n")};',
  'const tryOne=(k,host,port,nonce)=>{const s=net.connect({host,port:Number(port)});',
  `const t=setTimeout(()=>fin(k,{result:'timeout'},s),${CONNECT_WAIT_MS});`,
  "s.on('connect',()=>{clearTimeout(t);if(nonce)s.write(nonce);setTimeout(()=>fin(k,{result:'connected'},s),50)});",
  "s.on('error',(e)=>{clearTimeout(t);fin(k,{result:'error',code:String(e.code||''),errno:Number(e.errno)||0})})};",
  "tryOne('loopback',h,p,n);tryOne('testNet',fh,fp,'');",
].join('');

/** What one connect from inside the container did. */
export interface NetworkAttempt {
  /** host:port tried. */
  target: string;
  result: 'connected' | 'timeout' | 'error' | 'not_reported';
  /** The error's code as Node.js names it (libuv: WSAEACCES is EACCES). */
  code?: string;
  /** The error's number as Node.js gives it (libuv's negative code). */
  errno?: number;
}

export type NetworkProbeOutcome = 'isolated' | 'inconclusive' | 'not_isolated' | 'launch_failed';

/** The probe's finding, as doctor --json shows it. */
export interface NetworkProbeResult {
  outcome: NetworkProbeOutcome;
  /** Whether network-deny runs go ahead on this finding (false: refused, sandbox_unavailable). */
  denyRunsAllowed: boolean;
  /** What the finding proves and what it does not, in words. */
  detail: string;
  loopback: NetworkAttempt;
  /** Connections that reached our listener carrying the script's nonce. */
  loopbackArrivals: number;
  testNet: NetworkAttempt;
  /** The launch's own failure, when the script did not run or report. */
  launchError?: { code: string; message: string };
  /** The script's exit code (null: killed, timed out or never started). */
  exitCode?: number | null;
  durationMs: number;
  measuredBy: string;
}

/** What the launcher reports back: the script's exit and output. */
export interface NetworkProbeLaunch {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs `node -e NETWORK_PROBE_SCRIPT ...args` in an AppContainer with no capability SIDs. */
export type NetworkProbeLauncher = (args: string[]) => Promise<NetworkProbeLaunch>;

/** What was seen, before it is judged. */
export interface NetworkProbeObservation {
  launch?: NetworkProbeLaunch;
  launchError?: { code: string; message: string };
  loopbackTarget: string;
  loopbackArrivals: number;
  durationMs: number;
}

const MEASURED_BY = `ran node.exe in an AppContainer with no capability SIDs (the spawn real runs use) and tried TCP connects to a listener on 127.0.0.1 and to ${TEST_NET_ADDRESS}:${TEST_NET_PORT} (TEST-NET-1)`;

function parseAttempt(raw: unknown, target: string): NetworkAttempt {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const result = value.result;
  if (result !== 'connected' && result !== 'timeout' && result !== 'error') return { target, result: 'not_reported' };
  const attempt: NetworkAttempt = { target, result };
  if (typeof value.code === 'string' && value.code !== '') attempt.code = value.code;
  if (typeof value.errno === 'number' && value.errno !== 0) attempt.errno = value.errno;
  return attempt;
}

/** The script's JSON line, or undefined when it printed none. */
function parseReport(stdout: string): Record<string, unknown> | undefined {
  const line = stdout.split(/\r?\n/).find((l) => l.startsWith('{'));
  if (line === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** An error from the far address that can only be an answer from the network: a SYN went out. */
const ANSWERED = new Set(['ECONNREFUSED', 'ECONNRESET']);

/**
 * Judges what was seen (pure). not_isolated: a connection succeeded, reached our listener, or the
 * TEST-NET address answered; isolated: nothing reached the listener and the TEST-NET connect was
 * refused locally with EACCES (the firewall's block, before any packet); inconclusive: nothing got
 * through, but the TEST-NET connect timed out or found no route, which a missing block would give
 * too; launch_failed: the script did not run or did not report both tries.
 */
export function judgeNetworkProbe(seen: NetworkProbeObservation): NetworkProbeResult {
  const testTarget = `${TEST_NET_ADDRESS}:${TEST_NET_PORT}`;
  const report = seen.launch === undefined ? undefined : parseReport(seen.launch.stdout);
  const loopback = parseAttempt(report?.loopback, seen.loopbackTarget);
  const testNet = parseAttempt(report?.testNet, testTarget);
  const base = { loopback, loopbackArrivals: seen.loopbackArrivals, testNet, durationMs: seen.durationMs, measuredBy: MEASURED_BY };
  const withLaunch = seen.launch === undefined ? base : { ...base, exitCode: seen.launch.exitCode };
  if (seen.loopbackArrivals > 0 || loopback.result === 'connected' || testNet.result === 'connected' || (testNet.result === 'error' && ANSWERED.has(testNet.code ?? ''))) {
    const what = seen.loopbackArrivals > 0 || loopback.result === 'connected'
      ? `a connection from inside the container reached the host listener on ${seen.loopbackTarget}`
      : testNet.result === 'connected' ? `a connection from inside the container to ${testTarget} succeeded` : `${testTarget} answered a connect from inside the container (${testNet.code ?? ''}), so its SYN left the machine`;
    return { ...withLaunch, outcome: 'not_isolated', denyRunsAllowed: false, detail: `${what}: the firewall's AppContainer filters are not in force here` };
  }
  if (seen.launchError !== undefined || seen.launch === undefined || loopback.result === 'not_reported' || testNet.result === 'not_reported') {
    const launchError = seen.launchError ?? { code: 'probe_failed', message: describeLaunch(seen.launch) };
    return { ...withLaunch, outcome: 'launch_failed', denyRunsAllowed: false, launchError, detail: `the connection probe did not run in a container (${launchError.code}: ${launchError.message}), so network isolation is unproven` };
  }
  if (testNet.result === 'error' && testNet.code === 'EACCES') {
    return { ...withLaunch, outcome: 'isolated', denyRunsAllowed: true, detail: `nothing reached the host listener on ${seen.loopbackTarget} (the container saw ${attemptWords(loopback)}) and the connect to ${testTarget} was refused locally with EACCES (the firewall's block, before any packet): loopback isolation and the outbound block are in force for a container without capabilities` };
  }
  return {
    ...withLaunch,
    outcome: 'inconclusive',
    denyRunsAllowed: true,
    detail: `nothing reached the host listener on ${seen.loopbackTarget} (the container saw ${attemptWords(loopback)}), but the connect to ${testTarget} ended in ${attemptWords(testNet)}, not EACCES: a machine without a route, or with the block missing and the packet dropped further on, looks the same, so the outbound block is not proven; network deny rests on the container holding no capability SID, the firewall services running and the loopback refusal`,
  };
}

function attemptWords(attempt: NetworkAttempt): string {
  return attempt.result === 'error' ? `error ${attempt.code ?? 'without a code'}` : attempt.result;
}

function describeLaunch(launch: NetworkProbeLaunch | undefined): string {
  if (launch === undefined) return 'nothing was launched';
  const why = launch.timedOut ? 'timed out' : `exited with ${String(launch.exitCode)}`;
  const stderr = launch.stderr.trim().split(/\r?\n/).slice(0, 3).join(' | ').slice(0, 300);
  return `the script ${why} without reporting both tries${stderr === '' ? '' : `; stderr: ${stderr}`}`;
}

/** Opens the loopback listener, runs the launcher, and judges what was seen. */
export async function runNetworkProbe(launcher: NetworkProbeLauncher): Promise<NetworkProbeResult> {
  const started = performance.now();
  const nonce = randomBytes(16).toString('hex');
  let arrivals = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (got.length >= nonce.length) return;
      got += chunk;
      if (got.startsWith(nonce)) arrivals++;
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('error', () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    const message = `no listener could be opened on 127.0.0.1 (${error instanceof Error ? error.message : String(error)})`;
    return judgeNetworkProbe({ launchError: { code: 'internal_error', message }, loopbackTarget: '127.0.0.1', loopbackArrivals: 0, durationMs: Math.round(performance.now() - started) });
  }
  const port = (server.address() as AddressInfo).port;
  const loopbackTarget = `127.0.0.1:${port}`;
  const seen: NetworkProbeObservation = { loopbackTarget, loopbackArrivals: 0, durationMs: 0 };
  try {
    seen.launch = await launcher(['127.0.0.1', String(port), nonce, TEST_NET_ADDRESS, String(TEST_NET_PORT)]);
  } catch (error) {
    seen.launchError = error instanceof SandboxError ? { code: error.code, message: error.message } : { code: 'internal_error', message: error instanceof Error ? error.message : String(error) };
  } finally {
    // A connection in flight lands before the close: data already sent is read first.
    await new Promise((resolve) => setImmediate(resolve));
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  seen.loopbackArrivals = arrivals;
  seen.durationMs = Math.round(performance.now() - started);
  return judgeNetworkProbe(seen);
}

/** The refusal of a network-deny run on a finding that does not allow it. */
export function networkProbeRefusal(result: NetworkProbeResult): SandboxError {
  return new SandboxError('sandbox_unavailable', `windows-appcontainer cannot enforce network deny here, so nothing ran: the in-container connection probe found ${result.outcome}: ${result.detail}`, { layer: 'appcontainer' });
}

/**
 * One probe per process: the first network-deny run (or doctor) starts it, later ones share it; a
 * decisive finding is kept for the life of the process, a launch failure is tried again by the
 * next run (it refused the runs that waited on it).
 */
export class NetworkProbeGate {
  #result: NetworkProbeResult | undefined;
  /** The last finding, kept or not (a launch failure). */
  #last: NetworkProbeResult | undefined;
  #pending: Promise<NetworkProbeResult> | undefined;

  /** `onResult` hears every finding (the host's gate keeps it for probeSync). */
  constructor(private readonly launcher: NetworkProbeLauncher, private readonly onResult: (result: NetworkProbeResult) => void = () => {}) {}

  /** The finding, measuring it first if there is none yet. */
  measure(): Promise<NetworkProbeResult> {
    if (this.#result !== undefined) return Promise.resolve(this.#result);
    this.#pending ??= runNetworkProbe(this.launcher).then((result) => {
      this.#pending = undefined;
      if (result.outcome !== 'launch_failed') this.#result = result;
      this.#last = result;
      this.onResult(result);
      return result;
    });
    return this.#pending;
  }

  /** The kept finding, if any (no measuring). */
  current(): NetworkProbeResult | undefined {
    return this.#result;
  }

  /** Resolves when a network-deny run may go ahead; rejects with sandbox_unavailable otherwise. */
  async require(): Promise<void> {
    const result = await this.measure();
    if (!result.denyRunsAllowed) throw networkProbeRefusal(result);
  }

  /**
   * The synchronous form: a kept finding decides; without one the probe is started (again, after
   * a launch failure, which refuses) and the run refused, as nothing may wait on this thread.
   * (The gated starter does not get here without a kept finding: it waits off the thread.)
   */
  requireSync(): void {
    const result = this.#result;
    if (result === undefined) {
      const last = this.#last;
      this.measure().catch(() => {});
      if (last !== undefined) throw networkProbeRefusal(last);
      throw new SandboxError('sandbox_unavailable', 'windows-appcontainer has not yet tried a connection from inside a container in this process, and a synchronous spawnSandboxed with network deny cannot wait for it, so nothing ran: await probe() (or use runSandboxed) once before, or retry when the probe started now has finished', { layer: 'appcontainer' });
    }
    if (!result.denyRunsAllowed) throw networkProbeRefusal(result);
  }
}

/**
 * `backend` with the gate in front of its starts: a run with network deny starts only once the
 * probe allows it. The off-thread start waits for the probe; so does a synchronous one
 * (spawnSandboxed) without a finding yet, behind a process returned at once. Runs with network
 * allow never wait for it.
 */
export function gateNetworkDeny(backend: Required<SandboxBackend>, gate: NetworkProbeGate): SandboxBackend {
  const { prepare, start, startAsync } = backend;
  return {
    prepare,
    start: (prepared, io, onExit) => {
      if (prepared.plan.network === 'deny') {
        if (gate.current() === undefined) return startAfterProbe(gate, startAsync, prepared, io, onExit);
        gate.requireSync();
      }
      return start(prepared, io, onExit);
    },
    startAsync: async (prepared, io, onExit) => {
      if (prepared.plan.network === 'deny') await gate.require();
      return startAsync(prepared, io, onExit);
    },
  };
}

/**
 * A synchronous start that waits for the probe's finding off the caller's thread: the process is
 * returned at once with streams of ours, bridged to the real ones once the off-thread start has
 * made them (ended if it never does). A refusal of the probe is the start's failure: nothing ran,
 * nothing was guarded yet.
 */
function startAfterProbe(gate: NetworkProbeGate, startAsync: AsyncStarter, prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void): OsProcess {
  const ours = io.stdio.map((mode) => (mode === 'pipe' ? new PassThrough() : null)) as [PassThrough | null, PassThrough | null, PassThrough | null];
  const endOurs = (): void => {
    for (const stream of ours) stream?.end();
  };
  const finish = async (cancelled: () => boolean): Promise<OsProcess | undefined> => {
    try {
      await gate.require();
      if (cancelled()) {
        endOurs();
        return undefined;
      }
      const os = await startAsync(prepared, io, onExit);
      const [stdin, stdout, stderr] = os.stdio;
      if (ours[0] !== null && stdin !== null) ours[0].pipe(stdin);
      if (ours[1] !== null && stdout !== null) stdout.pipe(ours[1]);
      if (ours[2] !== null && stderr !== null) stderr.pipe(ours[2]);
      return os;
    } catch (error) {
      endOurs();
      throw error;
    }
  };
  return deferredProcess({ stdio: ours, finish, checkWithoutProcess: () => [] }, onExit);
}

/** Bytes kept of each of the probe script's streams (it prints one short line). */
const PROBE_OUTPUT_CAP = 64 * 1024;

/**
 * Runs `argv` to its end on `backend` (prepare, then the off-thread start: the same starter and
 * addon spawn as every run) with stdout and stderr collected, killed after `timeoutMs`; the
 * protected-path check runs and what preparing took is released once it is gone. The shared
 * lifecycle (lib/sandbox/process.ts) is not used: it depends on the running platform's backend,
 * which loads this one.
 */
export async function launchThrough(backend: Required<SandboxBackend>, argv: string[], options: RunOptions, timeoutMs: number): Promise<NetworkProbeLaunch> {
  const prepared = backend.prepare(argv, options);
  let ended!: (exit: OsExit) => void;
  const exited = new Promise<OsExit>((resolve) => (ended = resolve));
  let os;
  try {
    os = await backend.startAsync(prepared, { stdio: ['ignore', 'pipe', 'pipe'] }, (exit) => ended(exit));
  } catch (error) {
    prepared.release();
    throw error;
  }
  const collect = (stream: NodeJS.ReadableStream | null): Promise<string> => new Promise((resolve) => {
    let text = '';
    if (stream === null) return resolve('');
    stream.on('data', (chunk: Buffer) => {
      if (text.length < PROBE_OUTPUT_CAP) text += chunk.toString('utf8');
    });
    stream.on('end', () => resolve(text.slice(0, PROBE_OUTPUT_CAP)));
    stream.on('error', () => resolve(text));
  });
  const [stdout, stderr] = [collect(os.stdio[1]), collect(os.stdio[2])];
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    os.kill(9);
  }, timeoutMs);
  try {
    const exit = await exited;
    return { exitCode: exit.exitCode, stdout: await stdout, stderr: await stderr, timedOut };
  } finally {
    clearTimeout(timer);
    try {
      os.checkProtectedPaths();
    } finally {
      prepared.release();
    }
  }
}
