#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Runs INSIDE a Windows node.exe (under Wine, from scripts/test-wine.mjs) with the MinGW-built
// addon named by ZERO_SANDBOX_BINDING. Wine has no AppContainer, so the Windows backend must fail
// closed: the probe reports the layer as missing (without crashing node on Wine's aborting stubs),
// runSandboxed and spawnSandboxed refuse with sandbox_unavailable, and even a spawn that skips the
// probe's verdict is refused by the native layer. A marker file proves nothing ran: a control run
// of the same command outside the sandbox does create it, so the check can fail.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const lib = (rel) => import(pathToFileURL(join(root, 'dist', 'lib', rel)).href);
const results = [];

async function check(name, fn) {
  try {
    await fn();
    results.push({ name, ok: true });
  } catch (error) {
    results.push({ name, ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) });
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/** Expects `fn` to throw (or reject with) a SandboxError whose code is sandbox_unavailable. */
async function expectRefusal(fn, what) {
  let caught;
  try {
    await fn();
  } catch (error) {
    caught = error;
  }
  expect(caught !== undefined, `${what} did not refuse`);
  expect(caught.code === 'sandbox_unavailable', `${what} failed with ${caught.code}: ${caught.message}`);
  return caught;
}

const { probe, runSandboxed, spawnSandboxed, SandboxError } = await lib('index.js');
const { platformBackend } = await lib('sandbox/platform-backends.js');
const { startSandboxed, startSandboxedAsync } = await lib('sandbox/process.js');
const { callNative, callNativeAsync } = await lib('native/load.js');
const spawnOnPlatform = (cmd, options, deps) => startSandboxed(cmd, options, platformBackend(deps));
const work = mkdtempSync(join(tmpdir(), 'zs-wine-'));
const marker = join(work, 'ran.txt');
// A shell string runs under cmd.exe; `echo x> file` creates the marker when anything runs it.
const command = 'echo ran> ran.txt';

await check('this is Windows node.exe with the MinGW addon', () => {
  expect(process.platform === 'win32', `process.platform is ${process.platform}`);
  expect(/\.node$/.test(process.env.ZERO_SANDBOX_BINDING ?? ''), 'ZERO_SANDBOX_BINDING names no .node file');
});

await check('the probe reports AppContainer missing, with the failing call, and the backend unavailable', async () => {
  const report = await probe();
  const fact = report.facts.appContainerProfile;
  expect(fact?.attempted === true && fact.ok === false, `appContainerProfile fact: ${JSON.stringify(fact)}`);
  expect(/CreateAppContainerProfile/.test(fact.syscall ?? ''), `failing call: ${fact.syscall}`);
  expect(report.layers.appcontainer?.available === false, 'appcontainer layer reported available');
  expect(report.canEnforceDefaultPolicy === false, 'canEnforceDefaultPolicy is true');
  expect(report.backend === 'unavailable', `backend ${report.backend}`);
  expect(report.missing.some((m) => m.layer === 'appcontainer'), 'appcontainer not listed as missing');
});

await check('the control: the same command outside the sandbox creates the marker', () => {
  const control = mkdtempSync(join(tmpdir(), 'zs-wine-control-'));
  try {
    const r = spawnSync(process.env.ComSpec ?? 'cmd.exe', ['/d', '/s', '/c', command], { cwd: control, encoding: 'utf8' });
    expect(r.status === 0, `cmd.exe exited ${r.status}: ${r.stderr}`);
    expect(existsSync(join(control, 'ran.txt')), 'the unsandboxed control did not create its marker');
  } finally {
    rmSync(control, { recursive: true, force: true });
  }
});

await check('runSandboxed refuses with sandbox_unavailable naming the layer, and nothing ran', async () => {
  const error = await expectRefusal(() => runSandboxed(command, { workspace: work, cwd: work }), 'runSandboxed');
  expect(error instanceof SandboxError, 'not a SandboxError');
  expect(error.layer === 'appcontainer', `layer ${error.layer}`);
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

await check('spawnSandboxed refuses synchronously with sandbox_unavailable, and nothing ran', async () => {
  await expectRefusal(() => spawnSandboxed(['cmd.exe', '/d', '/c', 'echo ran> ran.txt'], { workspace: work, cwd: work }), 'spawnSandboxed');
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

// Network allow here: the native layer itself is checked (a network-deny run would wait for the
// in-container connection probe first, checked below).
await check('the native spawn refuses too when the probe is bypassed (a forged available verdict)', async () => {
  const forged = () => ({ layers: { appcontainer: { available: true, measuredBy: 'forged by this check' } } });
  // The addon without its off-thread ACL verb: the plan is applied within the native spawn, which
  // must refuse on its own.
  const binding = { spawn: (spec, onExit) => callNative((b) => b.spawn(spec, onExit)), kill: (pid, signal) => callNative((b) => b.kill(pid, signal)) };
  const error = await expectRefusal(() => spawnOnPlatform(command, { workspace: work, cwd: work, network: 'allow' }, { platform: 'win32', probe: forged, binding, aclJournalDir: join(work, 'journal-sync') }), 'the native spawn');
  expect(/CreateAppContainerProfile|AppContainer/.test(error.message), `message does not name the layer: ${error.message}`);
  await new Promise((resolve) => setTimeout(resolve, 500)); // a launched process would have written by now
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

await check('spawnSandboxed with the probe bypassed returns at once; the ACL step off the thread refuses: error event, exited rejects, nothing ran', async () => {
  const forged = () => ({ layers: { appcontainer: { available: true, measuredBy: 'forged by this check' } } });
  const child = spawnOnPlatform(command, { workspace: work, cwd: work, network: 'allow' }, { platform: 'win32', probe: forged, aclJournalDir: join(work, 'journal-deferred') });
  expect(child.pid === 0, `pid is ${child.pid} before the ACL step`);
  const heard = [];
  child.on('error', (e) => heard.push(e));
  child.on('spawn', () => heard.push('spawn'));
  const error = await expectRefusal(() => child.exited, 'the deferred start');
  expect(/AppContainer/.test(error.message), `message does not name the layer: ${error.message}`);
  expect(heard.length === 1 && heard[0] === error, `heard ${heard.map(String).join(', ')}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

await check('the off-thread start refuses too when the probe is bypassed: the ACL step fails closed, nothing ran', async () => {
  const forged = () => ({ layers: { appcontainer: { available: true, measuredBy: 'forged by this check' } } });
  const aclJournalDir = join(work, 'journal');
  const error = await expectRefusal(() => startSandboxedAsync(command, { workspace: work, cwd: work, network: 'allow' }, platformBackend({ platform: 'win32', probe: forged, aclJournalDir })), 'the off-thread start');
  expect(/AppContainer/.test(error.message), `message does not name the layer: ${error.message}`);
  // The record was written before any ACE could be added; the propagation marker is gone.
  const names = readdirSync(aclJournalDir);
  expect(names.length === 1 && /^zero-sandbox\.[0-9a-f]{32}\.json$/.test(names[0]), `journal holds ${names.join(', ')}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

await check('network deny with a forged available verdict: the in-container connection probe cannot launch, so the run is refused naming its finding, and nothing ran', async () => {
  const forged = () => ({ layers: { appcontainer: { available: true, measuredBy: 'forged by this check' } } });
  const deps = { platform: 'win32', probe: forged, aclJournalDir: join(work, 'journal-net'), userCacheDir: join(work, 'cache') };
  const error = await expectRefusal(() => startSandboxedAsync(command, { workspace: work, cwd: work }, platformBackend(deps)), 'the network-deny start');
  expect(/in-container connection probe found launch_failed/.test(error.message), `message does not name the probe's finding: ${error.message}`);
  expect(/AppContainer/.test(error.message), `message does not name the layer that failed: ${error.message}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

// The ACL verb itself on real files, with an AppContainer SID given as text (Wine has no userenv to
// derive one). Wine keeps no DACL on files (it maps them to Unix modes), so what is proven here is
// the call path: no-follow open, WRITE_DAC, Get/SetSecurityInfo, skips, refusals, the promise.
await check('windowsAcl applies and reverts on real files off the JavaScript thread, and refuses what it must', async () => {
  const tree = join(work, 'acl-tree');
  mkdirSync(join(tree, 'a', 'b'), { recursive: true });
  const sid = 'S-1-15-2-1-2-3-4-5-6-7';
  const acl = (request) => callNativeAsync((b) => b.windowsAcl({ container: 'zero-sandbox.test', kinds: [], paths: [], redo: false, ...request }));
  const pending = callNativeAsync((b) => {
    const p = b.windowsAcl({ op: 'apply', container: 'x', sid, kinds: ['allow-write', 'deny-write', 'deny-read?'], paths: [tree, join(tree, 'a', 'b'), join(tree, 'absent')], redo: false });
    expect(typeof p?.then === 'function', 'windowsAcl did not return a promise');
    return p;
  });
  await pending;
  await acl({ op: 'apply', sid, kinds: ['allow-write'], paths: [tree], redo: true });
  const reverted = await acl({ op: 'revert', sid, paths: [tree, join(tree, 'a', 'b'), join(tree, 'absent')] });
  expect(typeof reverted.changed === 'number', `revert answered ${JSON.stringify(reverted)}`);
  const missing = await expectRefusal(() => acl({ op: 'apply', sid, kinds: ['deny-read'], paths: [join(tree, 'absent')] }), 'a required missing path');
  expect(missing.path === join(tree, 'absent'), `refusal names ${missing.path}`);
  const everyone = await acl({ op: 'apply', sid: 'S-1-1-0', kinds: ['allow-write'], paths: [tree] }).catch((e) => e);
  expect(everyone?.code === 'invalid_argument', `a non-AppContainer SID was not refused: ${everyone?.code}`);
  await expectRefusal(() => acl({ op: 'revert', paths: [tree] }), 'deriving a SID without userenv');
  await expectRefusal(() => acl({ op: 'delete-profile' }), 'deleting a profile without userenv');
});

// Reverting on request (`zero-sandbox state revert-acls`) goes through the same verbs: under Wine
// the SID cannot be derived (no userenv), so each container fails, is named with the error, and
// keeps its journal record for another try; nothing is dropped as if it had been reverted.
await check('a revert on request that cannot be done keeps the record and names the container and the error', async () => {
  const { revertJournaledAcls } = await lib('backend/windows/acl-revert.js');
  const { serializeAclJournal } = await lib('backend/windows/acl-journal.js');
  const journalDir = join(work, 'journal-revert');
  mkdirSync(journalDir);
  const container = `zero-sandbox.${'d'.repeat(32)}`;
  writeFileSync(join(journalDir, `${container}.json`), serializeAclJournal({ version: 1, container, workspace: work.toLowerCase(), entries: [{ kind: 'allow-write', path: work }] }));
  const report = await revertJournaledAcls({ journalDir });
  expect(report.reverted.length === 0 && report.failed.length === 1, `report: ${JSON.stringify(report)}`);
  expect(report.failed[0].container === container && report.failed[0].error?.code === 'sandbox_unavailable', `failed entry: ${JSON.stringify(report.failed[0])}`);
  expect(existsSync(join(journalDir, `${container}.json`)), 'the record was dropped though nothing was reverted');
});

rmSync(work, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
