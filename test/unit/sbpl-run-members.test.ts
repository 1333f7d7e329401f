// SPDX-License-Identifier: MIT
// The end of a macOS run: the mark every run's profile carries (two random paths, one readable and
// one not), why it tells that run's processes from every other process, and the sweep that kills
// them in rounds before the protected-path check (bounded, failing closed). The loop runs here with
// an injected listing, kill and clock; with the stand-in sandbox-exec, a process that left the
// command's group (a new session) is found through an injected listing and killed before the exit.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { loadNative } from '../../lib/native/load.js';
import { buildSeatbeltProfile } from '../../lib/backend/macos/profile.js';
import { buildDenialTag } from '../../lib/backend/macos/denial-log.js';
import { buildRunNonces, isRunNoncePath, RUN_NONCE_DIR } from '../../lib/backend/macos/run-nonces.js';
import { sweepPause, sweepRunMembers, type RunMembersListing, type SweepDeps } from '../../lib/backend/macos/run-members.js';
import { macosStarter } from '../../lib/backend/macos/start.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import { runWith } from '../../lib/sandbox/run.js';
import { planBackend } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { alive } from '../helpers/alive.js';

// ---- The mark ---------------------------------------------------------------------------------

test('buildRunNonces: two different paths in the root-owned empty directory, new for every run', () => {
  const a = buildRunNonces();
  const b = buildRunNonces();
  for (const path of [a.allowed, a.denied, b.allowed, b.denied]) {
    assert.ok(isRunNoncePath(path), path);
    assert.ok(path.startsWith(`${RUN_NONCE_DIR}/`), path);
  }
  assert.is(new Set([a.allowed, a.denied, b.allowed, b.denied]).size, 4);
  // A random source that repeats itself cannot produce a mark that marks nothing.
  assert.throws(() => buildRunNonces(() => Buffer.alloc(16, 7)), /equal/);
  for (const bad of [`${RUN_NONCE_DIR}/zero-sandbox-run-${'A'.repeat(32)}`, `${RUN_NONCE_DIR}/zero-sandbox-run-${'a'.repeat(31)}`, `/private/tmp/zero-sandbox-run-${'a'.repeat(32)}`, `${RUN_NONCE_DIR}/zero-sandbox-run-${'a'.repeat(32)}/x`]) {
    assert.not.ok(isRunNoncePath(bad), bad);
  }
});

const TMP = '/private/var/folders/xy/T/zero-sandbox-1234';
const plan = (overrides: Partial<SandboxPlan> = {}): SandboxPlan => posixPlan('/Users/dev/project', overrides);

/**
 * What a profile answers for reading `path`, from its one-line file-read rules (last match wins):
 * the rules the plan section writes are of this form, and the base profile names no path under
 * the run paths' directory. Rules with a (param "X") are read with the params.
 */
function readVerdict(profile: string, params: Record<string, string>, path: string): 'allow' | 'deny' {
  let verdict: 'allow' | 'deny' = 'deny'; // (deny default)
  const rule = /^\((allow|deny) ([a-z* -]+?) \((subpath|literal) (?:\(param "([A-Z_0-9]+)"\)|"([^"]*)")\)(?: \(with message "[^"]*"\))?\)$/;
  for (const line of profile.split('\n')) {
    const m = rule.exec(line);
    if (m === null || !m[2]!.split(' ').includes('file-read*')) continue;
    const target = m[4] !== undefined ? params[m[4]] : m[5];
    assert.ok(target !== undefined, line);
    const hit = m[3] === 'literal' ? path === target : path === target || path.startsWith(target === '/' ? '/' : `${target}/`);
    if (hit) verdict = m[1] as 'allow' | 'deny';
  }
  return verdict;
}

test("the mark: this run's profile allows the first path and denies the second, whatever the plan", () => {
  const mark = buildRunNonces();
  const plans = [plan(), plan({ readRoots: ['/Users/dev/project'] }), plan({ denyRead: ['/private/var/empty', '/private'] }), plan({ network: 'allow', denyWrite: ['/private/var/empty'] })];
  for (const p of plans) {
    const { profile, params } = buildSeatbeltProfile(p, { tmpDir: TMP, runNonces: mark, denialTag: buildDenialTag() });
    assert.is(readVerdict(profile, params, mark.allowed), 'allow', JSON.stringify(p.readRoots));
    assert.is(readVerdict(profile, params, mark.denied), 'deny', JSON.stringify(p.readRoots));
    // Nothing after the mark changes a file rule: it is the last word on both paths.
    const lines = profile.split('\n');
    const last = lines.findIndex((l) => l.includes('RUN_MARK_DENIED'));
    assert.ok(last > 0);
    assert.not.ok(lines.slice(last + 1).some((l) => /\((allow|deny) file-/.test(l)), 'a file rule after the mark');
  }
});

test("the mark: another run's profile, or one without a mark, treats this run's two paths alike", () => {
  const mine = buildRunNonces();
  for (const p of [plan(), plan({ readRoots: ['/Users/dev/project'] }), plan({ denyRead: ['/private/var/empty'] })]) {
    for (const options of [{ tmpDir: TMP }, { tmpDir: TMP, runNonces: buildRunNonces() }]) {
      const { profile, params } = buildSeatbeltProfile(p, options);
      assert.is(readVerdict(profile, params, mine.allowed), readVerdict(profile, params, mine.denied), JSON.stringify({ p: p.readRoots, options }));
    }
  }
});

test('the mark: the builder takes only two different paths buildRunNonces makes', () => {
  const good = buildRunNonces();
  for (const runNonces of [{ allowed: good.allowed, denied: good.allowed }, { allowed: '/Users/dev/project/x', denied: good.denied }, { allowed: good.allowed, denied: `${good.denied}\n` }]) {
    try {
      buildSeatbeltProfile(plan(), { tmpDir: TMP, runNonces });
      assert.unreachable('accepted a bad mark');
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
    }
  }
});

// ---- The sweep --------------------------------------------------------------------------------

/** A scripted world: each listing pops the next one; kills and pauses are recorded; time advances by `tick` per call of now(). */
function world(listings: Array<RunMembersListing | Error>, tick = 1): SweepDeps & { kills: number[]; pauses: number[]; lists: number } {
  let clock = 0;
  const state = {
    kills: [] as number[],
    pauses: [] as number[],
    lists: 0,
    list: (): RunMembersListing => {
      const next = listings[Math.min(state.lists, listings.length - 1)]!;
      state.lists++;
      if (next instanceof Error) throw next;
      return next;
    },
    kill: (pid: number) => void state.kills.push(pid),
    now: () => (clock += tick),
    sleep: (ms: number) => {
      state.pauses.push(ms);
      return Promise.resolve();
    },
  };
  return state;
}

async function sweepError(deps: SweepDeps, bounds?: { rounds: number; ms: number }): Promise<SandboxError> {
  try {
    await sweepRunMembers(deps, bounds);
  } catch (error) {
    assert.instance(error, SandboxError);
    return error as SandboxError;
  }
  throw new Error('the sweep passed');
}

test('sweep: an empty first listing ends it at once, with no kill and no pause', async () => {
  const w = world([{ members: [], undecided: 0 }]);
  assert.equal(await sweepRunMembers(w), { rounds: 1, killed: 0 });
  assert.equal(w.kills, []);
  assert.equal(w.pauses, []);
});

test('sweep: survivors are killed round after round until a listing comes back empty', async () => {
  // 101 left the group; killed, it had forked 102 and 103; then nothing is left.
  const w = world([{ members: [101], undecided: 0 }, { members: [102, 103], undecided: 0 }, { members: [], undecided: 0 }]);
  assert.equal(await sweepRunMembers(w), { rounds: 3, killed: 3 });
  assert.equal(w.kills, [101, 102, 103]);
  assert.is(w.lists, 3);
});

test('sweep: a listing with undecided processes is not empty (one may have forked and exited meanwhile)', async () => {
  const w = world([{ members: [], undecided: 2, undecidedErrno: 3 }, { members: [], undecided: 0 }]);
  assert.equal(await sweepRunMembers(w), { rounds: 2, killed: 0 });
  const stuck = world([{ members: [], undecided: 1, undecidedErrno: 1 }]);
  const error = await sweepError(stuck, { rounds: 5, ms: 10_000 });
  assert.is(error.code, 'protected_path');
  assert.match(error.message, /could not be told apart \(sandbox_check errno 1\)/);
  assert.is(stuck.lists, 5);
});

test('sweep: processes that keep forking past the bound fail the run, reported, never passed over', async () => {
  let next = 1000;
  const storm: SweepDeps & { kills: number[] } = { ...world([]), kills: [] };
  storm.list = () => ({ members: [next++, next++], undecided: 0 });
  storm.kill = (pid) => void storm.kills.push(pid);
  const byRounds = await sweepError(storm, { rounds: 7, ms: 1_000_000 });
  assert.is(byRounds.code, 'protected_path');
  assert.is(byRounds.layer, 'seatbelt');
  assert.match(byRounds.message, /after 7 rounds/);
  assert.match(byRounds.message, /were not checked/);
  assert.is(storm.kills.length, 14, 'every round kills what it found, the last one included');
  // The time bound holds as well: a clock that runs out after a few rounds.
  const slow = world([{ members: [7], undecided: 0 }], 400);
  const byTime = await sweepError(slow, { rounds: 1000, ms: 1000 });
  assert.is(byTime.code, 'protected_path');
  assert.ok(slow.lists >= 2 && slow.lists <= 3, String(slow.lists));
});

test('sweep: the pauses start at none and grow to 50 ms', () => {
  assert.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map(sweepPause), [0, 0, 0, 2, 4, 8, 16, 32, 50, 50]);
});

test('sweep: a listing that fails (the addon function missing or throwing) fails the run closed', async () => {
  const missing = new SandboxError('native_unavailable', 'the native addon has no macosRunMembers');
  const e1 = await sweepError(world([missing]));
  assert.is(e1.code, 'protected_path');
  assert.is((e1.cause as SandboxError).code, 'native_unavailable');
  assert.match(e1.message, /could not be listed/);
  // A native error (a plain object with a code) keeps its code as the cause's.
  const native = Object.assign(new Error('proc_listpids(PROC_UID_ONLY) failed'), { code: 'internal_error', errno: 12, syscall: 'proc_listpids(PROC_UID_ONLY)' });
  const e2 = await sweepError(world([{ members: [5], undecided: 0 }, native]));
  assert.is(e2.code, 'protected_path');
  assert.is((e2.cause as SandboxError).errno, 12);
});

test('sweep: a pid that would signal a group or every process (0, -1, 1) is refused, not killed', async () => {
  for (const pid of [0, -1, 1, 2.5]) {
    const w = world([{ members: [pid], undecided: 0 }]);
    const error = await sweepError(w);
    assert.is(error.code, 'internal_error');
    assert.equal(w.kills, []);
  }
});

// ---- The starter with the stand-in sandbox-exec -----------------------------------------------

const posix = process.platform !== 'win32';
const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-run-members-')));
const ws = join(base, 'ws');
const tmp = join(base, 'tmp');
mkdirSync(ws);
mkdirSync(tmp);
const fake = join(base, 'fake-sandbox-exec');
if (posix) {
  writeFileSync(fake, '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n');
  chmodSync(fake, 0o755);
}

// A process in a session of its own (node's detached spawn calls setsid) writes its pid and sleeps.
const LEAVER = `
const { spawn } = require('child_process');
const c = spawn(process.execPath, ['-e', 'require("fs").writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)', process.argv[1]], { detached: true, stdio: 'ignore' });
c.unref();
const until = Date.now() + 10000;
while (!require('fs').existsSync(process.argv[1]) && Date.now() < until) {}
`;

if (posix) {
  test('starter: a process that left the group is listed, killed, and the exit waits for it', async () => {
    const pidFile = join(ws, 'leaver.pid');
    const listed: number[] = [];
    // The listing the real seatbelt would give: the leaver while it runs (this stand-in sandboxes nothing).
    const runMembers = (allowed: string, denied: string): RunMembersListing => {
      assert.ok(isRunNoncePath(allowed) && isRunNoncePath(denied));
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
      const members = pid > 1 && alive(pid) ? [pid] : [];
      listed.push(...members);
      return { members, undecided: 0 };
    };
    const p = posixPlan(ws, { argv: [process.execPath, '-e', LEAVER, pidFile], env: { PATH: '/usr/bin:/bin', TMPDIR: tmp } });
    const result = await runWith(p.argv, { timeoutMs: 30_000 }, planBackend(p, tmp, 'macos-seatbelt', macosStarter({ sandboxExecPath: fake, runMembers })));
    assert.is(result.exitCode, 0, result.stderr);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const survived = alive(pid);
    if (survived) process.kill(pid, 'SIGKILL');
    assert.ok(listed.includes(pid), 'the leaver was listed');
    assert.not.ok(survived, 'the leaver outlived the run');
  });

  test('starter: a listing that fails rejects the run and the protected-path check does not run', async () => {
    const runMembers = (): RunMembersListing => {
      throw Object.assign(new Error('dlsym(sandbox_check) failed'), { code: 'sandbox_unavailable' });
    };
    mkdirSync(join(ws, '.git'), { recursive: true });
    const p = posixPlan(ws, { argv: ['/bin/sh', '-c', 'mkdir -p .git/hooks && printf "#!/bin/sh\\n" > .git/hooks/post-checkout'], env: { PATH: '/usr/bin:/bin', TMPDIR: tmp } });
    try {
      await runWith(p.argv, { timeoutMs: 30_000 }, planBackend(p, tmp, 'macos-seatbelt', macosStarter({ sandboxExecPath: fake, runMembers })));
      assert.unreachable('the run passed');
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'protected_path');
      assert.match((error as SandboxError).message, /were not checked/);
    }
    // Not checked (nothing of the run may be running when the host works on its files): the hook
    // the command planted is still there, and the error said so.
    assert.ok(existsSync(join(ws, '.git', 'hooks', 'post-checkout')));
  });
}

// ---- The addon's listing against the real seatbelt (macOS only) -------------------------------

const onMac = process.platform === 'darwin' && (process.env.ZERO_SANDBOX_MUST_WORK === '1' || existsSync('/usr/bin/sandbox-exec'));
if (onMac) {
  test('macOS: macosRunMembers lists a process under the marked profile, and only for its own mark', async () => {
    const native = loadNative();
    assert.type(native.macosRunMembers, 'function', 'the macOS addon has no macosRunMembers');
    const list = native.macosRunMembers!.bind(native);
    const mark = buildRunNonces();
    const other = buildRunNonces();
    // The run's rules as the builder writes them (allowed one, denied the other), on a permissive base.
    const profile = `(version 1)\n(allow default)\n(allow file-read* (literal "${mark.allowed}"))\n(deny file-read* (literal "${mark.denied}"))\n`;
    const child = spawn('/usr/bin/sandbox-exec', ['-p', profile, '/bin/sleep', '60'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    try {
      // sandbox-exec applies the profile, then execs sleep under the same pid.
      let listing = list(mark.allowed, mark.denied);
      for (let i = 0; i < 200 && !listing.members.includes(pid); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        listing = list(mark.allowed, mark.denied);
      }
      assert.ok(listing.members.includes(pid), JSON.stringify(listing));
      assert.not.ok(listing.members.includes(process.pid), 'an unsandboxed process was listed');
      // The pair swapped, or another run's mark: this profile treats those alike, so not listed.
      assert.not.ok(list(mark.denied, mark.allowed).members.includes(pid));
      assert.not.ok(list(other.allowed, other.denied).members.includes(pid));
    } finally {
      child.kill('SIGKILL');
    }
  });
}

test.after(() => {
  rmSync(base, { recursive: true, force: true });
});

test.run();
