// SPDX-License-Identifier: MIT
// The Windows ACL journal on any OS: the record a run writes before adding ACEs, the plan a later
// run derives (revert superseded containers grants first, redo a cut-short propagation), and the
// starter that writes the record and marker before the addon is called and reverts stale ones.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildAclJournalRecord, buildRevertPaths, parseAclJournal, planAclChanges, serializeAclJournal, type AclJournalRecord } from '../../lib/backend/windows/acl-journal.js';
import { readAclJournal } from '../../lib/backend/windows/acl-journal-store.js';
import { buildAppContainerSpec } from '../../lib/backend/windows/spec.js';
import { revertJournaledAcls } from '../../lib/backend/windows/acl-revert.js';
import { windowsAsyncStarter, windowsStarter } from '../../lib/backend/windows/start.js';
import type { WindowsSpawnSpec } from '../../lib/backend/windows/launch-spec.js';
import { SandboxError } from '../../lib/errors.js';
import type { NativeExit } from '../../lib/native/types.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { fakeBinding, noIo as io, preparedRun as prepared, TMP, WS, type AclCall, type SpawnCall } from '../helpers/windows-start.js';
import { removeTempDirs, tempDir } from '../fixtures/temp-dirs.js';

const A = `zero-sandbox.${'a'.repeat(32)}`;
const B = `zero-sandbox.${'b'.repeat(32)}`;

function record(container: string, workspace = WS.toLowerCase(), entries: AclJournalRecord['entries'] = [{ kind: 'allow-write', path: WS }]): AclJournalRecord {
  return { version: 1, container, workspace, entries };
}

test('the record leaves out the per-run temp dir and the ?/~ suffixes', () => {
  const r = buildAclJournalRecord(A, WS, ['allow-write', 'allow-write', 'deny-write?', 'allow-read~', 'deny-delete?'], [WS, TMP, `${WS}\\.git\\hooks`, 'C:\\tools', `${TMP}\\x`], TMP);
  assert.equal(r, { version: 1, container: A, workspace: WS.toLowerCase(), entries: [{ kind: 'allow-write', path: WS }, { kind: 'deny-write', path: `${WS}\\.git\\hooks` }, { kind: 'allow-read', path: 'C:\\tools' }] });
  assert.equal(parseAclJournal(serializeAclJournal(r), A), r);
});

test('a damaged, foreign or renamed record is not acted on', () => {
  const text = serializeAclJournal(record(A));
  assert.is(parseAclJournal(text, B), undefined);
  assert.is(parseAclJournal('{"version":1', A), undefined);
  assert.is(parseAclJournal(text.replace('allow-write', 'allow-all'), A), undefined);
  assert.is(parseAclJournal(text.replace('C:\\\\Users', 'Users'), A), undefined);
  assert.is(parseAclJournal(serializeAclJournal(record('evil')), 'evil'), undefined);
});

test('revert paths: grants first, then deny-only paths, each once', () => {
  const r = record(A, WS.toLowerCase(), [
    { kind: 'deny-read', path: 'C:\\Users\\dev\\.ssh' },
    { kind: 'allow-write', path: WS },
    { kind: 'deny-write', path: `${WS}\\.git\\hooks` },
    { kind: 'allow-traverse', path: 'C:\\Users\\dev' },
    { kind: 'deny-delete', path: WS.toUpperCase() },
  ]);
  assert.equal(buildRevertPaths(r), [WS, 'C:\\Users\\dev', 'C:\\Users\\dev\\.ssh', `${WS}\\.git\\hooks`]);
});

test('a later run reverts the other containers of its workspace only, and redoes a cut-short propagation', () => {
  const next = record(A);
  const other = record('zero-sandbox.' + 'c'.repeat(32), 'd:\\elsewhere');
  assert.equal(planAclChanges(next, [record(B), next, other], []), { revert: [{ container: B, paths: [WS] }], redo: false });
  assert.equal(planAclChanges(next, [next], [B]).redo, false);
  assert.equal(planAclChanges(next, [next], [A]).redo, true);
});

test('the container name follows the whole ACL plan: a narrower write set or another deny gets a new SID', () => {
  const plan = posixPlan(WS, { argv: ['C:\\Windows\\System32\\cmd.exe'], env: {}, readRoots: [], writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: [] }, { root: 'D:\\cache', readOnlySubpaths: [], protectedNames: [] }] });
  const wide = buildAppContainerSpec(plan, { tmpDir: TMP }).containerName;
  const narrow = buildAppContainerSpec({ ...plan, writeRoots: plan.writeRoots.slice(0, 1) }, { tmpDir: TMP }).containerName;
  const denied = buildAppContainerSpec({ ...plan, denyRead: ['C:\\Users\\dev\\.aws'] }, { tmpDir: TMP }).containerName;
  const otherTmp = buildAppContainerSpec(plan, { tmpDir: `${TMP}2` }).containerName;
  assert.is.not(wide, narrow);
  assert.is.not(wide, denied);
  assert.is(wide, otherTmp);
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** The addon without its off-thread ACL verb: the plan is applied within spawn. */
const withinSpawn = (fake: ReturnType<typeof fakeBinding>) => ({ spawn: fake.binding.spawn, kill: fake.binding.kill });

test('start with the plan applied within spawn: record and marker exist before the addon sets ACEs; the marker goes after', async () => {
  const dir = tempDir('zs-acl-journal-');
  const fake = fakeBinding(dir);
  windowsStarter({ binding: withinSpawn(fake), aclJournalDir: dir })(prepared(), io, () => {});
  const spawn = fake.calls[0] as SpawnCall;
  const container = spawn.spawn.windows.containerName;
  assert.is(spawn.journal.length, 2);
  assert.ok(spawn.journal.includes(`${container}.json`));
  assert.ok(spawn.journal.some((n) => n.startsWith(`${container}.propagating.`)));
  assert.is(spawn.spawn.windows.aclRedo, false);
  assert.equal(readdirSync(dir), [`${container}.json`]);
  const saved = parseAclJournal(readFileSync(join(dir, `${container}.json`), 'utf8'), container)!;
  assert.ok(saved.entries.some((e) => e.kind === 'allow-write' && e.path === WS));
  assert.not.ok(saved.entries.some((e) => e.path === TMP));
  await settle();
});

test('a marker left by a run that stopped makes the next run set its ACEs again, then it is dropped', async () => {
  const dir = tempDir('zs-acl-journal-');
  const first = fakeBinding(dir);
  windowsStarter({ binding: withinSpawn(first), aclJournalDir: dir })(prepared(), io, () => {});
  const container = (first.calls[0] as { spawn: WindowsSpawnSpec }).spawn.windows.containerName;
  writeFileSync(join(dir, `${container}.propagating.99.${'0'.repeat(16)}`), '');
  const again = fakeBinding(dir);
  windowsStarter({ binding: withinSpawn(again), aclJournalDir: dir })(prepared(), io, () => {});
  assert.is((again.calls[0] as { spawn: WindowsSpawnSpec }).spawn.windows.aclRedo, true);
  assert.equal(readAclJournal(dir).propagating, []);
  await settle();
});

test('async start: ACEs applied off-thread before spawn; a superseded container is reverted, its profile deleted and its record dropped', async () => {
  const dir = tempDir('zs-acl-journal-');
  writeFileSync(join(dir, `${B}.json`), serializeAclJournal(record(B, WS.toLowerCase(), [{ kind: 'deny-read', path: 'C:\\Users\\dev\\.ssh' }, { kind: 'allow-write', path: 'D:\\old' }])));
  writeFileSync(join(dir, `${B}.propagating.99.${'0'.repeat(16)}`), '');
  const fake = fakeBinding(dir);
  await windowsAsyncStarter({ binding: fake.binding, aclJournalDir: dir })(prepared(), io, () => {});
  await settle();
  const apply = fake.calls[0] as AclCall;
  const spawn = fake.calls[1] as { spawn: WindowsSpawnSpec };
  assert.is(apply.op, 'apply');
  assert.is(apply.container, spawn.spawn.windows.containerName);
  assert.ok(apply.paths.includes(WS) && apply.paths.includes(TMP));
  assert.equal(spawn.spawn.windows.aclKinds, []);
  assert.equal(fake.calls.slice(2), [
    { op: 'revert', container: B, kinds: [], paths: ['D:\\old', 'C:\\Users\\dev\\.ssh'], redo: false },
    { op: 'delete-profile', container: B, kinds: [], paths: [], redo: false },
  ]);
  assert.not.ok(existsSync(join(dir, `${B}.json`)));
  assert.equal(readAclJournal(dir).markers, []);
});

test('async start: a refused ACL plan refuses the run, nothing spawns; a failed revert keeps the record', async () => {
  const dir = tempDir('zs-acl-journal-');
  const refused = fakeBinding(dir, 'apply');
  let error: unknown;
  await windowsAsyncStarter({ binding: refused.binding, aclJournalDir: dir })(prepared(), io, () => {}).catch((e: unknown) => { error = e; });
  assert.ok(error instanceof SandboxError && error.code === 'sandbox_unavailable');
  assert.not.ok(refused.calls.some((c) => 'spawn' in c));
  assert.equal(readAclJournal(dir).propagating, []);

  writeFileSync(join(dir, `${B}.json`), serializeAclJournal(record(B)));
  const failing = fakeBinding(dir, 'revert');
  await windowsAsyncStarter({ binding: failing.binding, aclJournalDir: dir })(prepared(), io, () => {});
  await settle();
  assert.ok(failing.calls.some((c) => 'op' in c && c.op === 'revert'));
  assert.not.ok(failing.calls.some((c) => 'op' in c && c.op === 'delete-profile'));
  assert.ok(existsSync(join(dir, `${B}.json`)));
});

test('revert on request: every container (or one workspace\'s) loses its ACEs and profile; a failure keeps its record and says why', async () => {
  const dir = tempDir('zs-acl-journal-');
  const C = `zero-sandbox.${'c'.repeat(32)}`;
  writeFileSync(join(dir, `${A}.json`), serializeAclJournal(record(A, WS.toLowerCase(), [{ kind: 'deny-read', path: 'C:\\Users\\dev\\.ssh' }, { kind: 'allow-write', path: WS }])));
  writeFileSync(join(dir, `${A}.propagating.99.${'0'.repeat(16)}`), '');
  writeFileSync(join(dir, `${C}.json`), serializeAclJournal(record(C, 'd:\\elsewhere', [{ kind: 'allow-write', path: 'D:\\elsewhere' }])));
  writeFileSync(join(dir, 'unrelated.txt'), 'kept');

  // Only one workspace: the other container is not touched (the workspace is matched normalised).
  const one = fakeBinding(dir);
  const onlyWs = await revertJournaledAcls({ journalDir: dir, workspace: 'c:\\users\\DEV\\project\\', binding: one.binding });
  assert.equal(onlyWs.reverted.map((r) => [r.container, r.paths, r.changed]), [[A, [WS, 'C:\\Users\\dev\\.ssh'], 2]]);
  assert.equal(one.calls, [
    { op: 'revert', container: A, kinds: [], paths: [WS, 'C:\\Users\\dev\\.ssh'], redo: false },
    { op: 'delete-profile', container: A, kinds: [], paths: [], redo: false },
  ]);
  assert.equal(readdirSync(dir).sort(), ['unrelated.txt', `${C}.json`]);

  // A revert the addon refuses: the record stays for another try and the report names the error.
  const refused = fakeBinding(dir, 'revert');
  const failed = await revertJournaledAcls({ journalDir: dir, binding: refused.binding });
  assert.equal(failed.reverted, []);
  assert.equal(failed.failed.map((r) => [r.container, r.error?.code, r.error?.message]), [[C, 'sandbox_unavailable', 'revert refused']]);
  assert.ok(existsSync(join(dir, `${C}.json`)));

  // An addon without the verb cannot revert: refused, not skipped silently.
  const old = await revertJournaledAcls({ journalDir: dir, binding: {} });
  assert.equal(old.failed.map((r) => r.error?.code), ['sandbox_unavailable']);

  const all = await revertJournaledAcls({ journalDir: dir, binding: fakeBinding(dir).binding });
  assert.equal(all.reverted.map((r) => r.container), [C]);
  assert.equal(readdirSync(dir), ['unrelated.txt']);
  assert.equal((await revertJournaledAcls({ journalDir: join(dir, 'absent'), binding: fakeBinding(dir).binding })).reverted, []);
});

test('revert on request leaves a container with a run in flight in this process', async () => {
  const dir = tempDir('zs-acl-journal-');
  const fake = fakeBinding(dir);
  let exited!: () => void;
  const done = new Promise<void>((resolve) => (exited = resolve));
  const held = { ...fake.binding, spawn: (spec: object, onExit: (exit: NativeExit) => void) => {
    fake.calls.push({ spawn: spec as WindowsSpawnSpec, journal: [] });
    void done.then(() => onExit({ exitCode: 0, signal: null, execErrno: 0, commandExited: true }));
    return { pid: 8 };
  } };
  await windowsAsyncStarter({ binding: held, aclJournalDir: dir })(prepared(), io, () => {});
  const container = (fake.calls[1] as { spawn: WindowsSpawnSpec }).spawn.windows.containerName;
  const during = await revertJournaledAcls({ journalDir: dir, binding: fake.binding });
  assert.equal([during.reverted.length, during.inUse.map((r) => r.container)], [0, [container]]);
  assert.ok(existsSync(join(dir, `${container}.json`)));
  exited();
  await settle();
  const after = await revertJournaledAcls({ journalDir: dir, binding: fake.binding });
  assert.equal(after.reverted.map((r) => r.container), [container]);
});

test.after(removeTempDirs);

test.run();
