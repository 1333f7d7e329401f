// SPDX-License-Identifier: MIT
// The lifecycle every backend shares (timeout, abort, kill grace, output capture with its cap,
// protected-path reporting, the result), driven by a simulated starter: a fake OS process whose
// streams, signals and exit the test plays. A backend that hands over pipes (macOS, Windows) gets
// exactly the Linux rules this way, on any OS.
import { PassThrough } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { BoundedCapture } from '../../lib/sandbox/capture.js';
import type { OsExit, OsProcess, Starter } from '../../lib/sandbox/contract.js';
import { SandboxedProcess, startSandboxed } from '../../lib/sandbox/process.js';
import { joinCaptured, runWith } from '../../lib/sandbox/run.js';
import { hasTruncationMarker } from '../../lib/sandbox/truncation.js';
import { rejection } from '../helpers/sandbox.js';
import { planBackend } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';

/** What the fake OS process saw and can do. */
interface Fake {
  signals: number[];
  stdin: string;
  write(stream: 'stdout' | 'stderr', data: string | Buffer): void;
  /** Ends the streams and reports the exit, as an OS does when the last process is gone. */
  exit(exit: Partial<OsExit>): void;
}

/**
 * A starter whose process is `play`ed by the test: every signal but 0 ends it (killed by that
 * signal), and `violations` are what its protected-path check reports.
 */
function fakeStarter(play: (fake: Fake) => void, violations: Array<{ path: string; reason?: string }> = []): { start: Starter; fake: () => Fake } {
  let current: Fake | undefined;
  const start: Starter = (_prepared, io, onExit) => {
    const stdin = new PassThrough();
    const stdout = io.stdio[1] === 'pipe' ? new PassThrough() : null;
    const stderr = io.stdio[2] === 'pipe' ? new PassThrough() : null;
    let gone = false;
    const fake: Fake = {
      signals: [],
      stdin: '',
      write: (stream, data) => (stream === 'stdout' ? stdout : stderr)?.write(data),
      exit: (exit) => {
        if (gone) return;
        gone = true;
        stdout?.end();
        stderr?.end();
        setImmediate(() => onExit({ exitCode: null, signal: null, ...exit }));
      },
    };
    stdin.on('data', (chunk: Buffer) => (fake.stdin += chunk.toString()));
    current = fake;
    const os: OsProcess = {
      pid: 4321,
      stdio: [stdin, stdout, stderr],
      capturesOutput: false,
      prewarmed: false,
      kill: (signal) => {
        if (gone) return false;
        fake.signals.push(signal);
        if (signal === 9) fake.exit({ signal: 'SIGKILL' });
        return true;
      },
      checkProtectedPaths: () => violations,
    };
    setImmediate(() => play(fake));
    return os;
  };
  return { start, fake: () => current! };
}

const plan = posixPlan('/w/ws', { argv: ['/bin/fake'] });
const backend = (start: Starter) => planBackend(plan, '/tmp/none', 'macos-seatbelt', start);

test('a simulated process is a real SandboxedProcess: exit, then close; stdin, stdout and stderr flow', async () => {
  const { start, fake } = fakeStarter((f) => {
    f.write('stdout', 'out');
    f.write('stderr', 'err');
  });
  const child = startSandboxed(['/bin/fake'], {}, backend(start));
  assert.instance(child, SandboxedProcess);
  assert.is(child.pid, 4321);
  const events: string[] = [];
  child.on('exit', () => events.push('exit'));
  child.on('close', () => events.push('close'));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stdin!.end('ping');
  await new Promise((r) => setTimeout(r, 20));
  fake().exit({ exitCode: 4 });
  const exit = await child.exited;
  assert.equal(exit, { exitCode: 4, signal: null, timedOut: false, aborted: false, protectedPathViolations: [] });
  assert.equal(events, ['exit', 'close']);
  assert.is(out, 'out');
  assert.is(fake().stdin, 'ping');
  assert.is(child.kill(), false, 'kill after exit is a no-op');
});

test('maxBuffer: head and tail with the truncation marker, reported as truncated with a denial (the Linux rule)', async () => {
  const { start } = fakeStarter((f) => {
    f.write('stdout', 'H'.repeat(3000));
    f.write('stdout', 'T'.repeat(3000));
    f.write('stderr', 'small');
    f.exit({ exitCode: 0 });
  });
  const result = await runWith(['/bin/fake'], { maxBuffer: 1000 }, backend(start));
  assert.is(result.truncated, true);
  assert.equal(result.outputBytes, { stdout: 6000, stderr: 5 });
  assert.ok(hasTruncationMarker(result.stdout));
  assert.ok(result.stdout.startsWith('H'.repeat(500) + '\n[zero] output truncated: 5000 bytes omitted'), result.stdout.slice(0, 600));
  assert.ok(result.stdout.endsWith('\n' + 'T'.repeat(500)) || result.stdout.endsWith('T'.repeat(500)));
  assert.is(result.stderr, 'small');
  assert.equal(result.denials.map((d) => d.capability.scope), ['maxBuffer.stdout']);
  assert.is(result.exitCode, 0);
});

test("onMaxBuffer 'kill': the sandbox is killed at the cap and the run rejects with max_buffer_exceeded", async () => {
  const { start, fake } = fakeStarter((f) => f.write('stdout', 'x'.repeat(2000)));
  const error = await rejection(runWith(['/bin/fake'], { maxBuffer: 1000, onMaxBuffer: 'kill' }, backend(start)));
  assert.is(error.code, 'max_buffer_exceeded');
  assert.match(error.message, /stdout exceeded maxBuffer \(1000 bytes\)/);
  assert.equal(fake().signals, [9]);
});

test('abort resolves like a timeout, with the partial output and the reason (the Linux rule)', async () => {
  const controller = new AbortController();
  const { start, fake } = fakeStarter((f) => {
    f.write('stdout', 'partial');
    setTimeout(() => controller.abort('enough'), 10);
  });
  const result = await runWith(['/bin/fake'], { signal: controller.signal }, backend(start));
  assert.is(result.aborted, true);
  assert.is(result.abortReason, 'enough');
  assert.is(result.stdout, 'partial');
  assert.is(result.signal, 'SIGKILL');
  assert.is(result.timedOut, false);
  assert.equal(fake().signals, [9]);
});

test('timeout kills the sandbox, keeps the partial output and adds the timeout denial', async () => {
  const { start } = fakeStarter((f) => f.write('stdout', 'so far'));
  const result = await runWith(['/bin/fake'], { timeoutMs: 30 }, backend(start));
  assert.is(result.timedOut, true);
  assert.is(result.stdout, 'so far');
  assert.equal(result.denials.map((d) => d.capability.scope), ['timeoutMs']);
});

test('kill(): the signal first, SIGKILL after the grace period unless the sandbox is gone', async () => {
  const { start, fake } = fakeStarter(() => {});
  const child = startSandboxed(['/bin/fake'], { stdio: 'ignore' }, backend(start));
  await new Promise((r) => setImmediate(r));
  // The grace timer does not hold the event loop open (a real sandbox's handles do): this does.
  const keepAlive = setInterval(() => {}, 1000);
  assert.ok(child.kill('SIGTERM', { graceMs: 30 }));
  const exit = await child.exited;
  clearInterval(keepAlive);
  assert.equal(fake().signals, [15, 9]);
  assert.is(exit.signal, 'SIGKILL');
  assert.throws(() => startSandboxed(['/bin/fake'], { stdio: 'ignore' }, backend(fakeStarter(() => {}).start)).kill('SIGNOPE' as NodeJS.Signals), /unknown signal SIGNOPE/);
});

test('protected paths the OS reports: listed, turned into denials, and a zero exit becomes 1', async () => {
  const { start } = fakeStarter((f) => f.exit({ exitCode: 0 }), [{ path: '/w/ws/.zero' }, { path: '/w/ws/.git/config', reason: 'core.fsmonitor runs a program' }]);
  const result = await runWith(['/bin/fake'], {}, backend(start));
  assert.is(result.exitCode, 1);
  assert.equal(result.protectedPathViolations, ['/w/ws/.zero', '/w/ws/.git/config']);
  assert.equal(result.denials.map((d) => d.reason), [
    'the sandbox blocked creation of protected workspace metadata path /w/ws/.zero (removed)',
    'the sandbox removed protected workspace metadata path /w/ws/.git/config: core.fsmonitor runs a program',
  ]);
});

test('bounded capture: the head and tail never split a UTF-8 character; the byte count is exact', () => {
  const capture = new BoundedCapture(10);
  capture.append(Buffer.from('aaaa€'));
  capture.append(Buffer.from('€€€bbbb'));
  const stream = capture.result();
  assert.is(stream.bytes, Buffer.byteLength('aaaa€€€€bbbb'));
  assert.is(stream.head, 'aaaa');
  assert.is(stream.tail, 'bbbb');
  assert.ok(joinCaptured(stream).includes('bytes omitted'));
  const whole = new BoundedCapture(0);
  whole.append(Buffer.from('x'.repeat(100)));
  assert.equal(whole.result(), { head: 'x'.repeat(100), bytes: 100 });
});

test.run();
