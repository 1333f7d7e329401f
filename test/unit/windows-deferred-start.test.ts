// SPDX-License-Identifier: MIT
// spawnSandboxed on Windows returns at once: the ACL plan (an inheritable ACE propagates to every
// file below a write root, which can take long on a large tree) is applied on the thread pool, and
// the process is spawned after it. A kill meanwhile starts nothing; a refused plan is the process's
// error (nothing ran). Runs on any OS with a stand-in addon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { readAclJournal } from '../../lib/backend/windows/acl-journal-store.js';
import { windowsStarter } from '../../lib/backend/windows/start.js';
import { SandboxError } from '../../lib/errors.js';
import type { OsExit } from '../../lib/sandbox/contract.js';
import { startPrepared } from '../../lib/sandbox/process.js';
import { fakeBinding, noIo, preparedRun, WS, type AclCall, type SpawnCall } from '../helpers/windows-start.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

function gate(): { open: () => void; promise: Promise<void> } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { open, promise };
}
const journalDir = () => tempDir('zs-acl-deferred-');

test('the start returns before the ACLs are applied; the process is spawned after them, with nothing left to apply', async () => {
  const dir = journalDir();
  const held = gate();
  const fake = fakeBinding(dir, undefined, held.promise);
  const exits: OsExit[] = [];
  const os = windowsStarter({ binding: fake.binding, aclJournalDir: dir })(preparedRun(), noIo, (exit) => exits.push(exit));
  // Returned while the addon is still applying: no spawn yet, no pid, the marker is in place.
  assert.equal(fake.calls.map((c) => ('op' in c ? c.op : 'spawn')), ['apply']);
  assert.ok((fake.calls[0] as AclCall).paths.includes(WS));
  assert.is(os.pid, 0);
  assert.is(readAclJournal(dir).propagating.length, 1);
  held.open();
  assert.is(await os.started, true);
  assert.is(os.pid, 7);
  const spawn = fake.calls[1] as SpawnCall;
  assert.equal(spawn.spawn.windows.aclKinds, []);
  assert.equal(readAclJournal(dir).propagating, []);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(exits.map((e) => e.exitCode), [0]);
});

test('a kill while the ACLs are applied starts nothing: the exit is SIGKILL and the marker is gone', async () => {
  const dir = journalDir();
  const held = gate();
  const fake = fakeBinding(dir, undefined, held.promise);
  const exits: OsExit[] = [];
  const os = windowsStarter({ binding: fake.binding, aclJournalDir: dir })(preparedRun(), noIo, (exit) => exits.push(exit));
  assert.is(os.kill(0), true, 'about to exist');
  assert.is(os.kill(9), true);
  held.open();
  assert.is(await os.started, false);
  assert.not.ok(fake.calls.some((c) => 'spawn' in c), 'nothing was spawned');
  assert.equal(exits, [{ exitCode: null, signal: 'SIGKILL' }]);
  assert.is(os.kill(9), false, 'gone');
  assert.equal(os.checkProtectedPaths(), []);
  assert.equal(readAclJournal(dir).propagating, []);
});

test('through spawnSandboxed\'s lifecycle: `spawn` then `exit`; a refused ACL plan rejects `exited`, is the `error` event, and nothing ran', async () => {
  const dir = journalDir();
  const ok = startPrepared(preparedRun(), { stdio: 'ignore' }, { start: windowsStarter({ binding: fakeBinding(dir).binding, aclJournalDir: dir }) });
  const order: string[] = [];
  ok.on('spawn', () => order.push(`spawn ${ok.pid}`));
  ok.on('exit', (exit) => order.push(`exit ${exit.exitCode}`));
  await ok.exited;
  assert.equal(order, ['spawn 7', 'exit 0']);

  const refused = fakeBinding(dir, 'apply');
  const child = startPrepared(preparedRun(), { stdio: 'ignore' }, { start: windowsStarter({ binding: refused.binding, aclJournalDir: dir }) });
  const heard: unknown[] = [];
  child.on('error', (error) => heard.push(error));
  child.on('spawn', () => heard.push('spawn'));
  child.on('exit', () => heard.push('exit'));
  const error = await child.exited.then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof SandboxError && error.code === 'sandbox_unavailable', String(error));
  assert.equal(heard, [error]);
  assert.is(child.pid, 0);
  assert.is(child.exit, null);
  assert.not.ok(refused.calls.some((c) => 'spawn' in c));
  assert.equal(readAclJournal(dir).propagating, []);
});

test('a timeout that passes while the ACLs are applied kills the start, not a process', async () => {
  const dir = journalDir();
  const held = gate();
  const fake = fakeBinding(dir, undefined, held.promise);
  const child = startPrepared(preparedRun(), { stdio: 'ignore', timeoutMs: 1 }, { start: windowsStarter({ binding: fake.binding, aclJournalDir: dir }) });
  await new Promise((resolve) => setTimeout(resolve, 20));
  held.open();
  const exit = await child.exited;
  assert.equal([exit.timedOut, exit.signal, exit.exitCode], [true, 'SIGKILL', null]);
  assert.not.ok(fake.calls.some((c) => 'spawn' in c));
  assert.equal(fake.kills, []);
});

test.after(removeTempDirs);

test.run();
