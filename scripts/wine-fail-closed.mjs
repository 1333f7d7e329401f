#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Runs INSIDE a Windows node.exe (under Wine, from scripts/test-wine.mjs) with the MinGW-built
// addon named by ZERO_SANDBOX_BINDING. Wine has no AppContainer, so the Windows backend must fail
// closed: the probe reports the layer as missing (without crashing node on Wine's aborting stubs),
// runSandboxed and spawnSandboxed refuse with sandbox_unavailable, and even a spawn that skips the
// probe's verdict is refused by the native layer. A marker file proves nothing ran: a control run
// of the same command outside the sandbox does create it, so the check can fail.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
const { startSandboxed } = await lib('sandbox/process.js');
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

await check('the native layer refuses too when the probe is bypassed (a forged available verdict)', async () => {
  const forged = () => ({ layers: { appcontainer: { available: true, measuredBy: 'forged by this check' } } });
  const error = await expectRefusal(() => spawnOnPlatform(command, { workspace: work, cwd: work }, { platform: 'win32', probe: forged }), 'the native spawn');
  expect(/CreateAppContainerProfile|AppContainer/.test(error.message), `message does not name the layer: ${error.message}`);
  await new Promise((resolve) => setTimeout(resolve, 500)); // a launched process would have written by now
  expect(!existsSync(marker), 'the command ran: its marker exists');
});

rmSync(work, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ results }, null, 2)}\n`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
