// SPDX-License-Identifier: MIT
// `zero-sandbox state list|prune`: the managed per-workspace state is listed and old entries are
// removed, but never one a live run holds a lease on, never through a symlink planted in the
// state directory, and the automatic age limit is configurable.
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildOwnerName, currentOwner, leaseDirOf } from '../../lib/sandbox/runtime-lease.js';
import { RUNTIME_MAX_AGE_MS, runtimeMaxAgeMs } from '../../lib/sandbox/runtime-state.js';
import { runCli } from '../helpers/cli.js';

const DAY = 24 * 60 * 60 * 1000;

function place() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'zs-state-')));
  const cache = join(root, 'cache');
  const base = join(cache, 'zero', 'runtime', 'v1');
  mkdirSync(base, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, XDG_CACHE_HOME: cache, NO_COLOR: '1' };
  const entry = (name: string, ageDays: number, workspace?: string) => {
    const path = join(base, name);
    mkdirSync(join(path, 'cache', 'npm'), { recursive: true });
    writeFileSync(join(path, 'cache', 'npm', 'blob'), 'x');
    if (workspace !== undefined) writeFileSync(join(path, 'workspace'), `${workspace}\n`);
    const t = new Date(Date.now() - ageDays * DAY);
    utimesSync(path, t, t);
    return path;
  };
  return { root, base, env, entry, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('list shows each entry with its workspace and whether a live run holds it', async () => {
  const p = place();
  try {
    p.entry('00000000000000aa', 1, '/work/a');
    const held = p.entry('00000000000000bb', 40, '/work/b');
    mkdirSync(leaseDirOf(held));
    symlinkSync('/work/b', join(leaseDirOf(held), buildOwnerName(currentOwner())));
    const r = await runCli(['state', 'list', '--json'], { env: p.env });
    assert.is(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.is(doc.maxAgeDays, 30);
    assert.equal(doc.entries.map((e: { workspace: string; inUse: boolean }) => [e.workspace, e.inUse]), [['/work/a', false], ['/work/b', true]]);
    const help = await runCli(['state', '--help'], { env: p.env });
    assert.match(help.stdout, 'ZERO_SANDBOX_STATE_MAX_AGE_DAYS');
  } finally {
    p.cleanup();
  }
});

test('prune removes unused old entries, keeps recent and leased ones, and follows no link', async () => {
  const p = place();
  const outside = realpathSync(mkdtempSync(join(tmpdir(), 'zs-state-outside-')));
  try {
    writeFileSync(join(outside, 'precious'), 'keep');
    const old = p.entry('00000000000000aa', 45, '/work/old');
    const recent = p.entry('00000000000000bb', 2, '/work/recent');
    const held = p.entry('00000000000000cc', 90, '/work/held');
    mkdirSync(leaseDirOf(held));
    symlinkSync('/work/held', join(leaseDirOf(held), buildOwnerName(currentOwner())));
    // Another user's entry (possible to set up only as root) is neither listed nor removed.
    const foreign = process.getuid?.() === 0 ? p.entry('00000000000000ee', 90, '/work/foreign') : undefined;
    if (foreign !== undefined) chownSync(foreign, 65534, 65534);
    // A root-named symlink to a directory elsewhere: neither followed nor removed through.
    symlinkSync(outside, join(p.base, '00000000000000dd'));
    const r = await runCli(['state', 'prune', '--json'], { env: p.env });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).removed, [{ name: '00000000000000aa', workspace: '/work/old' }]);
    assert.not.ok(existsSync(old));
    assert.ok(existsSync(join(recent, 'cache', 'npm', 'blob')));
    assert.ok(existsSync(join(held, 'cache', 'npm', 'blob')), 'a live run keeps its state');
    assert.is(readFileSync(join(outside, 'precious'), 'utf8'), 'keep');
    if (foreign !== undefined) assert.ok(existsSync(join(foreign, 'cache', 'npm', 'blob')), "another user's state is left alone");
    const all = await runCli(['state', 'prune', '--all', '--json'], { env: p.env });
    assert.equal(JSON.parse(all.stdout).removed.map((e: { name: string }) => e.name), ['00000000000000bb']);
    assert.ok(existsSync(held));
    assert.is(readFileSync(join(outside, 'precious'), 'utf8'), 'keep');
    const bad = await runCli(['state', 'prune', '--older-than', 'soon'], { env: p.env });
    assert.is(bad.code, 2);
  } finally {
    p.cleanup();
    rmSync(outside, { recursive: true, force: true });
  }
});

test('the automatic age limit is configurable; nonsense values keep the 30-day default', () => {
  assert.is(runtimeMaxAgeMs({}), RUNTIME_MAX_AGE_MS);
  assert.is(runtimeMaxAgeMs({ ZERO_SANDBOX_STATE_MAX_AGE_DAYS: '7' }), 7 * DAY);
  for (const value of ['0', '-3', 'x', '']) assert.is(runtimeMaxAgeMs({ ZERO_SANDBOX_STATE_MAX_AGE_DAYS: value }), RUNTIME_MAX_AGE_MS, value);
});

test('acls and revert-acls: nothing to list or revert off Windows, said so; bad input is a usage error', async () => {
  const p = place();
  try {
    const acls = await runCli(['state', 'acls', '--json'], { env: p.env });
    assert.is(acls.code, 0, acls.stderr);
    assert.equal(JSON.parse(acls.stdout), { platform: process.platform, journal: null, containers: [] });
    const revert = await runCli(['state', 'revert-acls'], { env: p.env });
    assert.is(revert.code, 0, revert.stderr);
    assert.match(revert.stdout, `only the Windows backend sets them (this is ${process.platform})`);
    const help = await runCli(['state', 'revert-acls', '--help'], { env: p.env });
    assert.match(help.stdout, 'revert-acls [--workspace DIR]');
    assert.is((await runCli(['state', 'revert-acls', 'extra'], { env: p.env })).code, 2);
    const empty = await runCli(['state', 'revert-acls', '--workspace', ' '], { env: p.env });
    assert.equal([empty.code, empty.stderr.includes('--workspace needs a directory')], [2, true]);
    const unknown = await runCli(['state', 'acl'], { env: p.env });
    assert.equal([unknown.code, unknown.stderr.includes('revert-acls')], [2, true]);
  } finally {
    p.cleanup();
  }
});

test.run();
