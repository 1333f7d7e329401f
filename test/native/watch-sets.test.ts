// Watch sets (native/linux/watch_sets.h, lib/sandbox/watch-set.ts): a set must stop being quiet on
// every change that could alter what its paths lead to (entries made, removed, renamed, attributes
// changed, a directory on the way moved, the mount table changed, events lost) and stay quiet
// otherwise (a file's content written, entries of other names beside a watched entry).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { loadNative, nativeBindingPath } from '../../lib/native/load.js';
import { watchDirs, watchEntries, type WatchSet } from '../../lib/sandbox/watch-set.js';
import { makeTree, type Tree } from '../helpers/sandbox.js';

// process.platform: only Linux has watch sets (inotify).
const LINUX = process.platform === 'linux';
const linuxTest = LINUX ? test : test.skip;

interface Verbs {
  fsWatchSet(dirs: string[], entries?: string[]): number;
  fsWatchSetQuiet(id: number): boolean;
  fsWatchSetRelease(id: number): void;
}

const verbs = (): Verbs => loadNative() as unknown as Verbs;

/** A tree with ws/a/b/c (the watched directory) holding a file f, and a sibling ws/x. */
function tree(): Tree & { dir: string } {
  const t = makeTree('zs-watch-set-');
  const dir = join(t.ws, 'a', 'b', 'c');
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(t.ws, 'x'));
  writeFileSync(join(dir, 'f'), 'one\n');
  return { ...t, dir };
}

function made(set: WatchSet | undefined): WatchSet {
  assert.ok(set !== undefined, 'the set is made');
  return set;
}

/** `change` made after a fresh set (of the tree's directory unless given): whether it is quiet afterwards. */
function quietAfter(change: (t: Tree & { dir: string }) => void, watch = (t: Tree & { dir: string }) => watchDirs([t.dir])): boolean {
  const t = tree();
  try {
    const set = made(watch(t));
    try {
      assert.ok(set.quiet(), 'quiet before the change');
      change(t);
      return set.quiet();
    } finally {
      set.release();
    }
  } finally {
    t.cleanup();
  }
}

linuxTest('a set just made is quiet, and stays quiet while nothing changes', () => {
  assert.ok(quietAfter(() => undefined));
});

linuxTest('an entry made, removed or renamed in a watched directory is seen', () => {
  assert.not.ok(quietAfter((t) => writeFileSync(join(t.dir, 'g'), '')), 'made');
  assert.not.ok(quietAfter((t) => mkdirSync(join(t.dir, 'sub'))), 'directory made');
  assert.not.ok(quietAfter((t) => rmSync(join(t.dir, 'f'))), 'removed');
  assert.not.ok(quietAfter((t) => renameSync(join(t.dir, 'f'), join(t.dir, 'f2'))), 'renamed');
  assert.not.ok(quietAfter((t) => renameSync(join(t.dir, 'f'), join(t.ws, 'x', 'f'))), 'moved out');
  assert.not.ok(quietAfter((t) => {
    writeFileSync(join(t.ws, 'x', 'new'), 'two\n');
    renameSync(join(t.ws, 'x', 'new'), join(t.dir, 'f'));
  }), 'replaced by rename');
});

linuxTest('a directory on the way renamed, removed or replaced is seen', () => {
  assert.not.ok(quietAfter((t) => renameSync(join(t.ws, 'a'), join(t.ws, 'a2'))), 'ancestor renamed');
  assert.not.ok(quietAfter((t) => {
    renameSync(join(t.ws, 'a', 'b'), join(t.ws, 'b-old'));
    mkdirSync(join(t.ws, 'a', 'b', 'c'), { recursive: true });
  }), 'ancestor replaced');
  assert.not.ok(quietAfter((t) => rmSync(join(t.ws, 'a'), { recursive: true })), 'ancestor removed');
  assert.not.ok(quietAfter((t) => renameSync(t.dir, join(t.ws, 'x', 'c'))), 'the directory itself moved');
});

linuxTest('an attribute change in the directory or on the way is seen', () => {
  assert.not.ok(quietAfter((t) => chmodSync(join(t.dir, 'f'), 0o600)), 'file mode');
  assert.not.ok(quietAfter((t) => chmodSync(t.dir, 0o700)), 'directory mode');
  assert.not.ok(quietAfter((t) => chmodSync(join(t.ws, 'a', 'b'), 0o700)), 'ancestor mode');
});

linuxTest('a file content write is not an event (documented: content memos re-read files)', () => {
  assert.ok(quietAfter((t) => writeFileSync(join(t.dir, 'f'), 'changed\n', { flag: 'a' })));
});

linuxTest('entries beside the way down are not events for it', () => {
  // A directory above the set is asked only about the name leading down.
  assert.ok(quietAfter((t) => writeFileSync(join(t.ws, 'a', 'other'), '')), 'beside an ancestor');
  assert.ok(quietAfter((t) => writeFileSync(join(t.ws, 'x', 'other'), '')), 'in a sibling');
});

linuxTest('an ancestor entry differing only in case is taken as the one on the way', () => {
  // A case-folding directory would find "B" when "b" is looked up.
  assert.not.ok(quietAfter((t) => mkdirSync(join(t.ws, 'a', 'B'))));
});

linuxTest('lost events (a full queue) count as every set changed', () => {
  const max = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
  if (!(max > 0 && max <= 100_000)) {
    console.log(`skipped: max_queued_events is ${max}`);
    return;
  }
  const t = tree();
  const other = join(t.ws, 'x');
  const busy = made(watchDirs([other]));
  const set = made(watchDirs([t.dir]));
  try {
    for (let i = 0; i <= max + 10; i++) writeFileSync(join(other, `f${i}`), '');
    assert.not.ok(busy.quiet(), 'the flooded set');
    assert.not.ok(set.quiet(), 'a set whose directory had no event');
  } finally {
    busy.release();
    set.release();
    t.cleanup();
  }
});

linuxTest('sets are independent; a released or unknown id answers false', () => {
  const t = tree();
  try {
    const one = made(watchDirs([t.dir]));
    const two = made(watchDirs([join(t.ws, 'x')]));
    writeFileSync(join(t.ws, 'x', 'new'), '');
    assert.ok(one.quiet(), 'the set without an event');
    assert.not.ok(two.quiet(), 'the set with one');
    one.release();
    assert.not.ok(one.quiet(), 'released');
    two.release();
    const id = verbs().fsWatchSet([t.dir]);
    assert.ok(id >= 0);
    assert.ok(verbs().fsWatchSetQuiet(id));
    verbs().fsWatchSetRelease(id);
    assert.not.ok(verbs().fsWatchSetQuiet(id), 'released id');
    assert.not.ok(verbs().fsWatchSetQuiet(-1), 'negative id');
    assert.not.ok(verbs().fsWatchSetQuiet(1e9), 'unknown id');
  } finally {
    t.cleanup();
  }
});

linuxTest('again() gives a set over the same paths only while the first is quiet', () => {
  const t = tree();
  try {
    const first = made(watchEntries([join(t.dir, 'f')], [join(t.ws, 'x')]));
    const second = made(first.again());
    first.release();
    assert.ok(second.quiet(), 'the second while nothing changed');
    const third = made(second.again());
    writeFileSync(join(t.ws, 'x', 'new'), '');
    assert.not.ok(second.quiet(), 'a change to a directory of the set');
    assert.not.ok(third.quiet(), 'the same change seen by the set made again');
    assert.is(second.again(), undefined, 'not made from a set that changed');
    second.release();
    third.release();
    const fourth = made(watchEntries([join(t.dir, 'f')]));
    const fifth = made(fourth.again());
    writeFileSync(join(t.dir, 'g.new'), 'x');
    renameSync(join(t.dir, 'g.new'), join(t.dir, 'f'));
    assert.not.ok(fifth.quiet(), 'the entry replaced by rename');
    fourth.release();
    fifth.release();
    assert.is(fifth.again(), undefined, 'not made from a released set');
  } finally {
    t.cleanup();
  }
});

linuxTest('a set that cannot be watched completely is refused', () => {
  const t = tree();
  try {
    assert.is(watchDirs([join(t.ws, 'missing')]), undefined, 'missing');
    assert.is(watchDirs([join(t.dir, 'f')]), undefined, 'a file');
    symlinkSync(t.dir, join(t.ws, 'link'));
    assert.is(watchDirs([join(t.ws, 'link')]), undefined, 'a link');
    assert.is(watchDirs(['/proc/self']), undefined, 'a filesystem that does not report changes');
    assert.is(verbs().fsWatchSet(['relative']), -1, 'a relative path');
    assert.is(verbs().fsWatchSet([t.dir, '..'], []), -1, 'one bad path among good ones');
  } finally {
    t.cleanup();
  }
});

// Up to four per policy kept across runs (its plan's, its spec's, its guard look's, its mount
// template's), for 16 policies, with room for prewarmed ones and the runs in flight.
linuxTest('at most 128 sets live at once', () => {
  const t = tree();
  const sets: WatchSet[] = [];
  try {
    for (let i = 0; i < 128; i++) sets.push(made(watchDirs([t.dir])));
    assert.is(watchDirs([t.dir]), undefined, 'the 129th');
    (sets.pop() as WatchSet).release();
    sets.push(made(watchDirs([t.dir])));
  } finally {
    for (const set of sets) set.release();
    t.cleanup();
  }
});

/** quietAfter for an entries set of one path (ws/a/b/c/f unless given). */
function entryQuietAfter(change: (t: Tree & { dir: string }) => void, path = (t: Tree & { dir: string }) => join(t.dir, 'f')): boolean {
  return quietAfter(change, (t) => watchEntries([path(t)]));
}

linuxTest('an entry set sees its entry changed and nothing else in its directory', () => {
  assert.ok(entryQuietAfter(() => undefined), 'nothing');
  assert.ok(entryQuietAfter((t) => writeFileSync(join(t.dir, 'g'), '')), 'another entry made');
  assert.ok(entryQuietAfter((t) => writeFileSync(join(t.dir, 'f'), 'more', { flag: 'a' })), 'content written');
  assert.not.ok(entryQuietAfter((t) => {
    writeFileSync(join(t.dir, 'g'), 'new\n');
    renameSync(join(t.dir, 'g'), join(t.dir, 'f'));
  }), 'replaced by rename');
  assert.not.ok(entryQuietAfter((t) => rmSync(join(t.dir, 'f'))), 'removed');
  assert.not.ok(entryQuietAfter((t) => chmodSync(join(t.dir, 'f'), 0o600)), 'mode');
  assert.not.ok(entryQuietAfter((t) => writeFileSync(join(t.dir, 'F'), '')), 'a name differing in case');
  assert.not.ok(entryQuietAfter((t) => renameSync(join(t.ws, 'a'), join(t.ws, 'a2'))), 'a directory on the way');
});

linuxTest('an entry set of a missing path sees the path made', () => {
  const missing = (t: Tree) => join(t.ws, 'a', 'b', 'gone', 'g');
  assert.ok(entryQuietAfter((t) => mkdirSync(join(t.ws, 'a', 'b', 'other')), missing), 'another name');
  assert.not.ok(entryQuietAfter((t) => mkdirSync(join(t.ws, 'a', 'b', 'gone')), missing), 'its directory made');
  assert.not.ok(entryQuietAfter((t) => writeFileSync(join(t.dir, 'h'), ''), (t) => join(t.dir, 'h')), 'itself made');
});

linuxTest('an entry set of a link watches the link and the path it names', () => {
  const link = (t: Tree) => join(t.ws, 'link');
  const make = (t: Tree & { dir: string }) => symlinkSync(t.dir, join(t.ws, 'link'));
  assert.ok(entryQuietAfter(() => undefined, (t) => (make(t), link(t))), 'nothing');
  assert.not.ok(entryQuietAfter((t) => renameSync(t.dir, join(t.ws, 'c-old')), (t) => (make(t), link(t))), 'its target moved');
  assert.not.ok(entryQuietAfter((t) => rmSync(join(t.ws, 'link')), (t) => (make(t), link(t))), 'the link removed');
  const t = tree();
  try {
    symlinkSync(join(t.ws, 'link2'), join(t.ws, 'link'));
    symlinkSync(t.dir, join(t.ws, 'link2'));
    assert.is(watchEntries([join(t.ws, 'link')]), undefined, 'a link to a link');
    assert.is(watchEntries([join(t.ws, 'link2', 'f')]), undefined, 'a link on the way');
  } finally {
    t.cleanup();
  }
});

// Run in a mount namespace of its own (a user namespace maps the caller to root there): a tmpfs
// mounted on the way changes what the paths lead to without any inotify event.
const MOUNTED = `
const addon = require(process.argv[1]);
const { execFileSync } = require('node:child_process');
const [dir] = process.argv.slice(2);
const id = addon.fsWatchSet([dir + '/a/b/c']);
const before = addon.fsWatchSetQuiet(id);
execFileSync('mount', ['-t', 'tmpfs', 'none', dir + '/x']);
console.log(JSON.stringify({ id, before, after: addon.fsWatchSetQuiet(id) }));
`;

linuxTest('a file system mounted anywhere counts as a change', () => {
  const t = tree();
  try {
    const r = spawnSync('unshare', ['-rm', process.execPath, '-e', MOUNTED, nativeBindingPath() as string, t.ws], { encoding: 'utf8' });
    if (r.status !== 0 && /unshare/.test(r.stderr) && !/Error/.test(r.stderr)) {
      console.log(`skipped: no user and mount namespace here (${r.stderr.trim()})`);
      return;
    }
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { id: number; before: boolean; after: boolean };
    assert.ok(out.id >= 0 && out.before, r.stdout);
    assert.not.ok(out.after, 'quiet after a mount');
  } finally {
    t.cleanup();
  }
});

// A child with a CPU profiler sampling every 10 us: its timer signal interrupts the addon's
// system calls. Asks one set, over a directory nobody changes, whether it is quiet many times.
const SIGNALLED = `
const { Session } = require('node:inspector');
const addon = require(process.argv[1]);
const id = addon.fsWatchSet([process.argv[2]]);
const session = new Session();
session.connect();
session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 10 }, () => session.post('Profiler.start', () => {
  let asked = 0;
  while (asked < 20000 && addon.fsWatchSetQuiet(id)) asked++;
  console.log(JSON.stringify({ id, asked }));
})));
`;

linuxTest('a signal interrupting the look at the mount table is no change (a set stays quiet under a profiler)', () => {
  const t = tree();
  try {
    const r = spawnSync(process.execPath, ['-e', SIGNALLED, nativeBindingPath() as string, t.dir], { encoding: 'utf8' });
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { id: number; asked: number };
    assert.ok(out.id >= 0, r.stdout);
    assert.is(out.asked, 20000, 'quiet every time');
  } finally {
    t.cleanup();
  }
});

test.run();
