// SPDX-License-Identifier: MIT
// The protected-path notes shared between processes (lib/sandbox/run-notes.ts), with real other
// processes publishing them: which a run's noting takes (runs of overlapping write roots in flight
// during it, not those that ended before it, never those of a process that died), that ended
// runs' notes do not pile up, and that the directory must be a private one of ours.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { REPO_ROOT } from '../helpers/cli.js';
import { buildThreadRealm, chooseNotesDir, claimMissedChecks, openNotingWindow, parseThreadRealm, runNotesCounts, type SharedNotes } from '../../lib/sandbox/run-notes.js';
import { processStart, threadStart } from '../../lib/sandbox/runtime-lease.js';
import { firstMessage } from '../helpers/workers.js';

// POSIX directory semantics and /proc: Linux only (the only backend that shares its notes).
const test = process.platform === 'linux' ? uvuTest : uvuTest.skip;

const RUN_NOTES_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'run-notes.js')).href;

/** Another process holding one published run of `root`, driven by lines on its stdin. */
class OtherRun {
  readonly child: ChildProcessWithoutNullStreams;
  #out = '';

  /** `padBytes`: that many more bytes in the noted config (a large run's notes). */
  constructor(dir: string, root: string, tag: string, padBytes = 0) {
    const script = `import { openNotingWindow } from ${JSON.stringify(RUN_NOTES_JS)};
const [dir, root, tag, pad] = process.argv.slice(1);
const w = openNotingWindow(dir);
w.take([root]);
const bytes = Buffer.concat([Buffer.from(tag), Buffer.alloc(Number(pad), 'x')]);
const p = w.publish({ since: w.since, roots: [root], gitRoots: [root], configs: new Map([[root + '/.git/config', { bytes, state: 'file:' + tag }]]), watched: new Map(), ownEntries: [] });
console.log('published');
process.stdin.setEncoding('utf8').on('data', (line) => {
  const started = /started (\\d+)/.exec(line);
  if (started !== null) { p.started(Number(started[1])); console.log('recorded'); }
  if (line.includes('end')) { p.end(); console.log('ended'); }
  if (line.includes('exit')) process.exit(0);
});`;
    this.child = spawn(process.execPath, ['--input-type=module', '-e', script, dir, root, tag, String(padBytes)], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => (this.#out += chunk));
  }

  async said(word: string): Promise<void> {
    for (let i = 0; i < 3000 && !this.#out.includes(word); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(this.#out.includes(word), `the other process said ${word}`);
  }

  async tell(word: 'end' | 'exit' | `started ${number}`): Promise<void> {
    this.child.stdin.write(`${word}\n`);
    if (word === 'end') await this.said('ended');
    else if (word.startsWith('started')) await this.said('recorded');
    else await new Promise((resolve) => this.child.once('exit', resolve));
  }

  async kill(): Promise<void> {
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await gone;
  }
}

function withDir(fn: (dir: string, base: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const base = mkdtempSync(join(tmpdir(), 'zs-run-notes-'));
    const dir = join(base, 'notes');
    try {
      await fn(dir, base);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  };
}

const tags = (notes: SharedNotes[]) => notes.map((n) => [...n.configs.values()][0]?.bytes?.toString().replace(/x+$/, ''));

test('a run takes the notes of other processes\' runs in flight of overlapping roots, and only those', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  // One after the other: the order their noting began in is the order their notes are taken in.
  const first = new OtherRun(dir, ws, 'first');
  await first.said('published');
  const nested = new OtherRun(dir, join(ws, 'sub'), 'nested');
  await nested.said('published');
  const elsewhere = new OtherRun(dir, join(base, 'other'), 'elsewhere');
  await elsewhere.said('published');
  // Runs with the same roots as one before (a burst): each is asked on its own merits.
  const again = new OtherRun(dir, ws, 'again');
  await again.said('published');
  const elsewhereAgain = new OtherRun(dir, join(base, 'other'), 'elsewhere again');
  try {
    await elsewhereAgain.said('published');
    const window = openNotingWindow(dir);
    assert.equal(tags(window.take([ws])), ['first', 'nested', 'again'], 'oldest first, the unrelated root left out');
    window.abandon();
    // Another policy in the same process is asked afresh, not answered from the first one's take.
    const other = openNotingWindow(dir);
    assert.equal(tags(other.take([join(base, 'other', 'deep')])), ['elsewhere', 'elsewhere again']);
    other.abandon();
  } finally {
    for (const run of [first, nested, elsewhere, again, elsewhereAgain]) await run.tell('exit');
  }
}));

test('other processes\' notes are parsed whole only when their roots overlap; large ones are not kept parsed', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  // 3 MB of notes each: another workspace's large runs, and one of ours. One after the other: the
  // order their noting began in is the order they are taken in.
  const runs: OtherRun[] = [];
  const start = async (root: string, tag: string, padBytes: number): Promise<void> => {
    const run = new OtherRun(dir, root, tag, padBytes);
    runs.push(run);
    await run.said('published');
  };
  try {
    for (const i of [0, 1]) await start(join(base, `other${i}`), `elsewhere ${i}`, 3_000_000);
    await start(join(ws, 'a'), 'small', 0);
    await start(join(ws, 'b'), 'large', 3_000_000);
    const before = runNotesCounts.parsed;
    for (let round = 0; round < 3; round++) {
      const window = openNotingWindow(dir);
      assert.equal(tags(window.take([ws])), ['small', 'large'], `round ${round}`);
      window.abandon();
    }
    // The small notes parsed once and kept; the large ones at each take, never kept; the others'
    // roots read from the head of their files, never parsed whole.
    assert.is(runNotesCounts.parsed - before, 1 + 3);
  } finally {
    for (const run of runs) await run.tell('exit');
  }
}));

test('a run ended before the noting began is not taken; one that ended during it is', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const before = new OtherRun(dir, ws, 'ended-before');
  const during = new OtherRun(dir, ws, 'ended-during');
  try {
    await before.said('published');
    await during.said('published');
    await before.tell('end');
    const window = openNotingWindow(dir);
    await during.tell('end');
    assert.equal(tags(window.take([ws])), ['ended-during']);
    window.abandon();
    // With no window open any more, the ended runs' notes go at the next noting.
    openNotingWindow(dir).abandon();
    const next = openNotingWindow(dir);
    assert.equal(next.take([ws]), []);
    next.abandon();
    assert.equal(readdirSync(dir).filter((name) => name.startsWith('e.')), [], 'ended runs\' notes removed');
  } finally {
    await before.tell('exit');
    await during.tell('exit');
  }
}));

test('the notes of a process that died are never taken: they are a missed check, claimed once, then ended', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const crashed = new OtherRun(dir, ws, 'crashed');
  await crashed.said('published');
  await crashed.kill();
  assert.is(readdirSync(dir).filter((name) => name.startsWith(`r.${crashed.child.pid}-`)).length, 1);
  const window = openNotingWindow(dir);
  assert.equal(window.take([ws]), []);
  window.abandon();
  assert.equal(claimMissedChecks([join(base, 'other')], dir, 0), [], 'a run of other roots does not claim it');
  const claimed = claimMissedChecks([ws], dir, 0);
  assert.equal(tags(claimed.map((c) => c.notes)), ['crashed']);
  assert.equal(claimMissedChecks([ws], dir, 0), [], 'claimed once');
  assert.ok(readdirSync(dir).every((name) => name.startsWith('k.')), 'held by the claim');
  claimed[0]?.done();
  assert.ok(readdirSync(dir).every((name) => name.startsWith('e.')), 'ended as its own check would have');
}));

test('a worker thread terminated in the middle of its runs counts as a dead owner though its process lives on', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const worker = new Worker(new URL('../helpers/notes-worker.js', import.meta.url), { workerData: { dir, root: ws, tag: 'worker' } });
  try {
    await firstMessage(worker);
    const marker = readdirSync(dir).find((name) => name.startsWith('n.'));
    assert.ok(marker, "the worker's second run is noting");
    // Its realm names its thread: this process, another thread of it.
    const realm = marker.split('.')[3] as string;
    assert.is(marker.split('.')[2], `${process.pid}-${processStart(process.pid)}`);
    assert.is(parseThreadRealm(realm)?.tidStart, threadStart(process.pid, parseThreadRealm(realm)?.tid ?? 0));
    const live = openNotingWindow(dir);
    assert.equal(tags(live.take([ws])), ['worker'], "a live worker's run is in flight");
    live.abandon();
    // An ended run of another process, kept while a run noting before it ended is there.
    const other = new OtherRun(dir, ws, 'other');
    await other.said('published');
    await other.tell('end');
    await other.tell('exit');
    await worker.terminate();
    assert.ok(readdirSync(dir).some((name) => name.startsWith('e.')), "the other run's notes, kept for the worker's noting run");
    const after = openNotingWindow(dir);
    assert.equal(after.take([ws]), [], "the dead worker's notes are never taken");
    after.abandon();
    assert.not.ok(readdirSync(dir).includes(marker), "the dead worker's marker is removed");
    assert.not.ok(readdirSync(dir).some((name) => name.startsWith('e.')), 'and the ended run it held back with it');
    const claimed = claimMissedChecks([ws], dir, 0);
    assert.equal(tags(claimed.map((c) => c.notes)), ['worker'], 'its check is a missed one');
    claimed[0]?.done();
    const last = openNotingWindow(dir);
    assert.equal(last.take([ws]), []);
    last.abandon();
    assert.equal(readdirSync(dir), [], 'nothing is left');
  } finally {
    await worker.terminate();
  }
}));

test('a missed check claimed by a worker thread terminated before it ran the check is claimed again', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const crashed = new OtherRun(dir, ws, 'crashed');
  await crashed.said('published');
  await crashed.kill();
  const worker = new Worker(new URL('../helpers/notes-worker.js', import.meta.url), { workerData: { dir, root: ws, claim: true } });
  try {
    const said = await firstMessage(worker);
    assert.equal(said, ['crashed'], 'the worker claimed it');
    assert.equal(claimMissedChecks([ws], dir, 0), [], "a live worker's claim is its own");
    await worker.terminate();
    const again = claimMissedChecks([ws], dir, 0);
    assert.equal(tags(again.map((c) => c.notes)), ['crashed'], 'claimed again once the worker is gone');
    again[0]?.done();
    assert.ok(readdirSync(dir).every((name) => name.startsWith('e.')), 'ended as its own check would have');
  } finally {
    await worker.terminate();
  }
}));

test('a thread realm round-trips, and a main thread\'s realm names no thread', () => {
  const realm = buildThreadRealm(0x3fffff, '123456789', 'a1');
  assert.is(realm.length, 28);
  assert.equal(parseThreadRealm(realm), { tid: 0x3fffff, tidStart: '123456789' });
  assert.is(parseThreadRealm('a1b2c3d4'), undefined);
});

test('a missed check is compared with each frozen list of roots on its own: lists that do not overlap it, asked in turn, neither claim it nor hide it from one that does', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const crashed = new OtherRun(dir, ws, 'crashed');
  await crashed.said('published');
  await crashed.kill();
  // A caller alternating policies: the answers for each list are kept side by side.
  const apart = [Object.freeze([join(base, 'a')]), Object.freeze(Array.from({ length: 50 }, (_, i) => join(base, `p${i}`, 'dist')))];
  const overlapping = Object.freeze([join(base, 'b'), join(ws, 'pkg')]);
  for (let i = 0; i < 3; i++) for (const roots of apart) assert.equal(claimMissedChecks(roots, dir, 0), [], `round ${i}: not claimed for roots apart from it`);
  // The same content unfrozen, as a caller's own array, gets the same answer.
  assert.equal(claimMissedChecks([...(apart[1] as readonly string[])], dir, 0), []);
  const claimed = claimMissedChecks(overlapping, dir, 0);
  assert.equal(tags(claimed.map((c) => c.notes)), ['crashed'], 'claimed by the list that overlaps it');
  claimed[0]?.done();
}));

test('a dead process\'s sandbox record is kept while its run has notes in the directory, and removed once none is left', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const crashed = new OtherRun(dir, ws, 'crashed');
  const sandbox = spawn('sleep', ['60'], { stdio: 'ignore' });
  await crashed.said('published');
  await crashed.tell(`started ${sandbox.pid as number}`);
  await crashed.kill();
  const gone = new Promise((resolve) => sandbox.once('exit', resolve));
  sandbox.kill('SIGKILL');
  await gone;
  const records = () => readdirSync(dir).filter((name) => name.startsWith('s.'));
  assert.is(records().length, 1);
  assert.equal(claimMissedChecks([join(base, 'other')], dir, 0), []);
  assert.is(records().length, 1, 'kept while its missed check waits');
  // Its notes gone (removed by hand here; a claim's end removes the record itself).
  for (const name of readdirSync(dir)) if (!name.startsWith('s.')) rmSync(join(dir, name));
  assert.equal(claimMissedChecks([join(base, 'other')], dir, 0), []);
  assert.equal(records(), [], 'removed once nothing of its run is left');
}));

test('a dead process\'s run whose sandbox is still there counts as in flight until the sandbox is gone', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const crashed = new OtherRun(dir, ws, 'crashed');
  // Stands for the sandbox's pid 1, left behind by its supervisor.
  const sandbox = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    await crashed.said('published');
    await crashed.tell(`started ${sandbox.pid as number}`);
    await crashed.kill();
    assert.equal(claimMissedChecks([ws], dir, 0), [], 'not checked while its sandbox is there');
    const window = openNotingWindow(dir);
    assert.equal(tags(window.take([ws])), ['crashed'], 'taken as a run in flight');
    window.abandon();
  } finally {
    const gone = new Promise((resolve) => sandbox.once('exit', resolve));
    sandbox.kill('SIGKILL');
    await gone;
  }
  const claimed = claimMissedChecks([ws], dir, 0);
  assert.equal(tags(claimed.map((c) => c.notes)), ['crashed'], 'checked once it is gone');
  claimed[0]?.done();
  assert.equal(readdirSync(dir).filter((name) => name.startsWith('s.')), [], 'the sandbox record goes with it');
}));

test('a run publishes its notes once it has taken the others\', and withdraws them', withDir(async (dir, base) => {
  const ws = join(base, 'ws');
  const window = openNotingWindow(dir);
  assert.ok(readdirSync(dir).every((name) => name.startsWith('n.')), 'noting');
  window.take([ws]);
  const published = window.publish({ since: window.since, roots: [ws], gitRoots: [ws], configs: new Map([[`${ws}/.git/config`, { bytes: Buffer.from('mine'), state: 'file:1' }]]), watched: new Map(), ownEntries: [] });
  assert.equal(readdirSync(dir).map((name) => name[0]).sort(), ['c', 'r'], 'published, with its check for a run that finds this process dead');
  // The check is the same notes: a second name of the published file (written once).
  const [check, live] = readdirSync(dir).sort().map((name) => join(dir, name)) as [string, string];
  assert.is(readFileSync(check, 'utf8'), readFileSync(live, 'utf8'));
  assert.is(statSync(check).ino, statSync(live).ino);
  assert.is(statSync(live).nlink, 2);
  published.end();
  assert.ok(readdirSync(dir).every((name) => name.startsWith('e.')), 'withdrawn');
}));

test('the directory must be a private directory of ours', withDir(async (dir, base) => {
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  let error: (Error & { code?: string }) | undefined;
  try {
    openNotingWindow(dir);
  } catch (e) {
    error = e as Error & { code?: string };
  }
  assert.is(error?.code, 'protected_path');
  assert.ok(error?.message.includes(dir), error?.message);
  const link = join(base, 'link');
  symlinkSync(join(base, 'elsewhere'), link);
  mkdirSync(join(base, 'elsewhere'), { mode: 0o700 });
  error = undefined;
  try {
    openNotingWindow(link);
  } catch (e) {
    error = e as Error & { code?: string };
  }
  assert.is(error?.code, 'protected_path', 'a link in its place is refused');
}));

function refusal(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a refusal');
}

test('without a usable /dev/shm the notes go to the private per-boot fallback, made with its parents', withDir(async (_dir, base) => {
  const state = join(base, 'home', '.local', 'state', 'zero-sandbox');
  mkdirSync(join(state, 'run-notes-oldboot', 'x'), { recursive: true });
  const fallback = join(state, 'run-notes-thisboot');
  // No /dev/shm at all, and one that is a file: both fall back.
  for (const shm of [join(base, 'no-shm', 'zero-sandbox-1'), join(base, 'file', 'zero-sandbox-1')]) {
    if (shm.includes('file')) writeFileSync(join(base, 'file'), '');
    assert.is(chooseNotesDir(shm, { dir: fallback }), fallback);
  }
  assert.is(statSync(fallback).mode & 0o777, 0o700);
  assert.equal(readdirSync(state), ['run-notes-thisboot'], 'the directory of an earlier boot is removed');
  const window = openNotingWindow(fallback);
  window.publish({ since: window.since, roots: ['/w'], gitRoots: ['/w'], configs: new Map(), watched: new Map(), ownEntries: [] }).end();
  // A usable /dev/shm is always the first choice: the fallback is not even looked at.
  const shm = join(base, 'shm', 'zero-sandbox-1');
  mkdirSync(join(base, 'shm'));
  assert.is(chooseNotesDir(shm, { dir: join(base, 'unused', 'x') }), shm);
  assert.is(readdirSync(base).includes('unused'), false);
}));

test('an unusable directory of ours in /dev/shm is refused, not passed over; with no usable place the refusal names each and why', withDir(async (_dir, base) => {
  const shm = join(base, 'shm', 'zero-sandbox-1');
  mkdirSync(shm, { recursive: true, mode: 0o777 });
  chmodSync(shm, 0o777);
  const fallback = join(base, 'state', 'run-notes-b');
  // Falling back would split this user's runs between two places.
  let error = refusal(() => chooseNotesDir(shm, { dir: fallback }));
  assert.is(error.code, 'protected_path');
  assert.ok(error.message.includes(shm), error.message);
  assert.is(readdirSync(base).includes('state'), false, 'the fallback was not used');
  writeFileSync(join(base, 'blocker'), '');
  error = refusal(() => chooseNotesDir(join(base, 'none', 'zero-sandbox-1'), { dir: join(base, 'blocker', 'zero-sandbox', 'run-notes-b') }));
  assert.is(error.code, 'protected_path');
  assert.match(error.message, new RegExp(`${join(base, 'none', 'zero-sandbox-1')}: ENOENT.*; ${join(base, 'blocker', 'zero-sandbox', 'run-notes-b')}: ENOTDIR`));
  error = refusal(() => chooseNotesDir(join(base, 'none', 'zero-sandbox-1'), { why: 'the account database has no home directory for this user', path: '~/.local/state/zero-sandbox' }));
  assert.ok(error.message.endsWith('~/.local/state/zero-sandbox: the account database has no home directory for this user'), error.message);
}));

// A real machine without a writable /dev/shm: a mount namespace where it is a read-only tmpfs and
// the account home an empty tmpfs (so the test leaves nothing in the real one).
const unshare = process.platform === 'linux' ? spawnSync('unshare', ['-Urm', 'true']).status === 0 : false;
const nsTest = unshare || process.env.ZERO_SANDBOX_MUST_WORK === '1' ? test : uvuTest.skip;

nsTest('a process that finds /dev/shm read-only publishes its notes in the fallback under the account home', () => {
  const script = `import { runNotesDir, openNotingWindow } from ${JSON.stringify(RUN_NOTES_JS)};
import { readdirSync } from 'node:fs';
const w = openNotingWindow();
w.publish({ since: w.since, roots: ['/w'], gitRoots: ['/w'], configs: new Map(), watched: new Map(), ownEntries: [] });
console.log(JSON.stringify({ dir: runNotesDir(), names: readdirSync(runNotesDir()) }));`;
  const home = spawnSync('sh', ['-c', 'getent passwd 0 | cut -d: -f6'], { encoding: 'utf8' }).stdout.trim() || '/root';
  const shell = `mount -t tmpfs -o ro,mode=755 none /dev/shm && mount -t tmpfs -o mode=700 none ${home} && exec "$0" --input-type=module -e "$1"`;
  const r = spawnSync('unshare', ['-Urm', 'sh', '-c', shell, process.execPath, script], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { dir: string; names: string[] };
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  assert.is(out.dir, join(home, '.local', 'state', 'zero-sandbox', `run-notes-${boot}`));
  assert.equal(out.names.map((name) => name[0]).sort(), ['c', 'r'], 'published there');
});

uvuTest.run();
