// SPDX-License-Identifier: MIT
// The macOS denial monitor: the pure parser of `log stream --style ndjson` lines (lines in the
// layout that tool prints, with the kernel's `Sandbox: name(pid) deny(n) operation target`
// message), the denials it makes, and the monitor run against a stand-in log tool (the unified
// log exists only on macOS).
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import {
  buildDenialTag,
  buildLogStreamArgs,
  collectSeatbeltDenials,
  isDenialTag,
  MAX_LOGGED_DENIALS,
  parseSeatbeltLogLine,
  startDenialMonitor,
} from '../../lib/backend/macos/denial-log.js';
import { writeFakeLogTool } from '../fixtures/sbpl/fake-log.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

const TAG = buildDenialTag(Buffer.from('00112233445566778899aabb', 'hex'));

/** One line as `log stream --style ndjson` prints a kernel message (fields as that tool names them). */
function ndjson(eventMessage: string): string {
  return JSON.stringify({
    traceID: 1234567890,
    eventMessage,
    eventType: 'logEvent',
    source: null,
    formatString: '%s',
    activityIdentifier: 0,
    subsystem: '',
    category: '',
    threadID: 4242,
    senderImageUUID: '00000000-0000-0000-0000-000000000000',
    processImagePath: '/kernel',
    senderImagePath: '/System/Library/Extensions/Sandbox.kext/Contents/MacOS/Sandbox',
    timestamp: '2026-12-01 03:40:00.123456+0000',
    machTimestamp: 123456789,
    messageType: 'Error',
    processID: 0,
    timezoneName: '',
  });
}

test('tag: only [a-z0-9], fresh per call, and the log predicate names it', () => {
  const a = buildDenialTag();
  assert.ok(isDenialTag(a), a);
  assert.is.not(a, buildDenialTag());
  assert.is(TAG, 'zsdeny00112233445566778899aabb');
  assert.equal(buildLogStreamArgs(TAG), ['stream', '--style', 'ndjson', '--level', 'default', '--predicate', `eventMessage CONTAINS "${TAG}"`]);
  assert.throws(() => buildLogStreamArgs('x" OR 1 == 1 OR "'), /not a denial tag/);
  assert.not.ok(isDenialTag('zsdeny'));
  assert.not.ok(isDenialTag('zsdenyXYZ12345'));
});

test('parser: a kernel refusal with the tag after the target or before it', () => {
  assert.equal(parseSeatbeltLogLine(ndjson(`Sandbox: cat(5131) deny(1) file-read-data /Users/dev/.ssh/id_ed25519 ${TAG}`), TAG), {
    process: 'cat', pid: 5131, operation: 'file-read-data', target: '/Users/dev/.ssh/id_ed25519',
  });
  assert.equal(parseSeatbeltLogLine(ndjson(`${TAG} Sandbox: node(77) deny(3) file-write-create /Users/dev/other/x.txt`), TAG), {
    process: 'node', pid: 77, operation: 'file-write-create', target: '/Users/dev/other/x.txt',
  });
  // A path with spaces is kept whole; a refusal without a target has target ''.
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: sh(9) deny(1) file-read-data /Users/dev/My Docs/a b.txt ${TAG}`), TAG)?.target, '/Users/dev/My Docs/a b.txt');
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: curl(12) deny(1) network-outbound ${TAG}`), TAG)?.target, '');
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: curl(12) deny(1) network-outbound 93.184.216.34:443 ${TAG}`), TAG)?.target, '93.184.216.34:443');
});

test('parser: other lines are ignored (banner, other runs, non-file operations, broken JSON)', () => {
  assert.is(parseSeatbeltLogLine('Filtering the log data using "eventMessage CONTAINS ..."', TAG), undefined);
  assert.is(parseSeatbeltLogLine('{"eventMessage": ', TAG), undefined);
  assert.is(parseSeatbeltLogLine(JSON.stringify({ eventMessage: 42 }), TAG), undefined);
  // Another run's tag (or none): not this run's refusal.
  assert.is(parseSeatbeltLogLine(ndjson('Sandbox: cat(1) deny(1) file-read-data /etc/x zsdenyffffffffffffffffffffffff'), TAG), undefined);
  // mach-lookup and sysctl refusals are framework noise, not reported.
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: git(3) deny(1) mach-lookup com.apple.SecurityServer ${TAG}`), TAG), undefined);
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: ps(3) deny(1) sysctl-read kern.procargs2 ${TAG}`), TAG), undefined);
});

test('attack: a process name cannot forge a refusal of another path (names are at most 16 characters)', () => {
  // The command names itself so that the kernel's line seems to refuse a path of its choosing
  // first; the parser still reads the real operation and target.
  const forged = parseSeatbeltLogLine(ndjson(`Sandbox: a(1) deny(1) fil(4242) deny(1) file-read-data /real/path ${TAG}`), TAG);
  assert.equal(forged, { process: 'a(1) deny(1) fil', pid: 4242, operation: 'file-read-data', target: '/real/path' });
  // A whole forged sequence does not fit in a process name: nothing is reported for it.
  assert.is(parseSeatbeltLogLine(ndjson(`Sandbox: x(1) deny(1) file-write-data /etc/passwd ${TAG}`.replace('x(1) deny(1) file-write-data /etc/passwd', 'zzzzzzzzzzzzzzzzz(1) deny(1) file-write-data /etc/passwd')), TAG), undefined);
});

test('denials: kinds by operation, one per kind and target, capped', () => {
  const lines = [
    ndjson(`Sandbox: cat(1) deny(1) file-read-data /Users/dev/.aws/credentials ${TAG}`),
    ndjson(`Sandbox: cat(2) deny(1) file-read-data /Users/dev/.aws/credentials ${TAG}`),
    ndjson(`Sandbox: touch(3) deny(1) file-write-create /Users/dev/elsewhere ${TAG}`),
    ndjson(`Sandbox: curl(4) deny(1) network-outbound /private/var/run/docker.sock ${TAG}`),
    ndjson(`Sandbox: sh(5) deny(1) process-exec* /Users/dev/.ssh/run ${TAG}`),
  ];
  const denials = collectSeatbeltDenials(lines, TAG);
  assert.equal(denials.map((d) => [d.capability.kind, d.capability.scope, d.source]), [
    ['filesystem_read', '/Users/dev/.aws/credentials', 'platform_sandbox'],
    ['workspace_write', '/Users/dev/elsewhere', 'platform_sandbox'],
    ['external_network', '/private/var/run/docker.sock', 'platform_sandbox'],
    ['process_spawn', '/Users/dev/.ssh/run', 'platform_sandbox'],
  ]);
  assert.match(denials[0]!.reason, /reading \/Users\/dev\/\.aws\/credentials \(seatbelt file-read-data by cat\[1\]\)/);
  const many = Array.from({ length: MAX_LOGGED_DENIALS + 10 }, (_, i) => ndjson(`Sandbox: cat(1) deny(1) file-read-data /d/${i} ${TAG}`));
  assert.is(collectSeatbeltDenials(many, TAG).length, MAX_LOGGED_DENIALS);
});

const posix = process.platform !== 'win32';
if (posix) {
  const dir = realpathSync(tempDir('zs-denial-log-'));
  const fakeLog = join(dir, 'log');
  writeFakeLogTool(fakeLog, join(dir, 'predicate.txt'), [
    'Sandbox: cat(41) deny(1) file-read-data /Users/dev/.ssh/id_rsa %s',
    'Sandbox: cat(42) deny(1) file-read-data /other zsdenyffffffffffffffffffffffff',
  ]);

  test('monitor: reads this run\'s refusals from the log tool and stops it', async () => {
    const monitor = startDenialMonitor(TAG, fakeLog);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const denials = await monitor.stop(10);
    assert.ok(Date.now() - started < 1500, 'the stream was ended, not waited out');
    assert.equal(denials.map((d) => d.capability.scope), ['/Users/dev/.ssh/id_rsa']);
  });

  test('monitor: a missing log tool reports nothing and does not throw', async () => {
    const monitor = startDenialMonitor(TAG, join(dir, 'no-such-log'));
    assert.equal(await monitor.stop(0), []);
  });
}

test.after(removeTempDirs);

test.run();
