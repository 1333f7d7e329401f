// The looks at write roots before and after every run keep their answers across runs while inotify
// reports no change that could alter them (native/linux/watched_looks.cc): fsInspectManyWatched
// and fsListRoots(..., true). A kept answer must be the answer a look gives now, whatever the host
// changed in between: each case below changes something on the host (an entry made at a kept
// path, a directory on the way renamed, replaced by a link or removed, a subdirectory's .git made,
// a hard link made, many entries made at once) and compares every answer with a fresh look.
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { loadNative, nativeBindingPath } from '../../lib/native/load.js';
import { makeTree, type Tree } from '../helpers/sandbox.js';

// process.platform: only Linux has the watched verbs (inotify).
const LINUX = process.platform === 'linux';
const linuxTest = LINUX ? test : test.skip;

interface Verbs {
  fsInspectMany(paths: string[]): string[] | null;
  fsInspectManyWatched(paths: string[]): Array<string | number> | null;
  fsListRoots(paths: string[], maxLooks: number, watched?: boolean): Array<string | number> | null;
}

const verbs = (): Verbs => loadNative() as unknown as Verbs;

/** The watched answers and how many were kept ones. */
function watched(paths: string[]): { answers: string[]; kept: number } {
  const r = verbs().fsInspectManyWatched(paths);
  assert.ok(r !== null && r.length === paths.length + 1);
  return { answers: r.slice(0, paths.length) as string[], kept: r[paths.length] as number };
}

function listed(paths: string[]): { answers: Array<string | number>; kept: number } {
  const r = verbs().fsListRoots(paths, 512, true);
  assert.ok(r !== null && r.length === paths.length + 1);
  return { answers: r.slice(0, paths.length), kept: r[paths.length] as number };
}

/** Roots r0..r{n-1} in ws/packages/pK/dist, and the paths the run's looks ask about them. */
function roots(t: Tree, n: number): { dists: string[]; asked: string[] } {
  const dists: string[] = [];
  for (let i = 0; i < n; i++) {
    const dist = join(t.ws, 'packages', `p${i}`, 'dist');
    mkdirSync(dist, { recursive: true });
    dists.push(dist);
  }
  const asked = dists.flatMap((d) => [d, join(d, '.git'), join(d, '.zero'), join(d, '.agents'), join(d, '..', '.git').replace(/\/dist\/\.\.\//, '/')]);
  return { dists, asked };
}

/** Every answer the same as a fresh look; returns how many were kept ones. */
function same(asked: string[], dists: string[], why: string): number {
  const fresh = verbs().fsInspectMany(asked);
  const w = watched(asked);
  assert.equal(w.answers, fresh, `${why}: inspect`);
  const freshLists = verbs().fsListRoots(dists, 512);
  const l = listed(dists);
  assert.equal(l.answers, freshLists, `${why}: listing`);
  return w.kept + l.kept;
}

linuxTest('unchanged roots are answered from the memo, with the answers of a look', () => {
  const t = makeTree();
  try {
    const { dists, asked } = roots(t, 20);
    same(asked, dists, 'first');
    const kept = same(asked, dists, 'again');
    // The directories and the missing names: every path but none (no file is asked).
    assert.ok(kept >= asked.length + dists.length, `kept ${kept}`);
  } finally {
    t.cleanup();
  }
});

linuxTest('every change the host makes between two calls is seen', () => {
  const t = makeTree();
  try {
    const { dists, asked } = roots(t, 12);
    const d = (i: number) => dists[i] as string;
    const steps: Array<[string, () => void]> = [
      ['a .git made at the top', () => mkdirSync(join(d(0), '.git', 'hooks'), { recursive: true })],
      ['a .zero file made', () => writeFileSync(join(d(1), '.zero'), 'x')],
      ['a file made in a root', () => writeFileSync(join(d(2), 'out.js'), 'x')],
      ['a subdirectory made', () => mkdirSync(join(d(2), 'sub'))],
      ['a subdirectory\'s .git made', () => writeFileSync(join(d(2), 'sub', '.git'), 'gitdir: /tmp\n')],
      ['an ancestor renamed and replaced', () => {
        renameSync(join(t.ws, 'packages', 'p3'), join(t.ws, 'packages', 'p3-old'));
        mkdirSync(join(t.ws, 'packages', 'p3', 'dist', '.agents'), { recursive: true });
      }],
      ['the old ancestor changed where it went', () => mkdirSync(join(t.ws, 'packages', 'p3-old', 'dist', '.zero'))],
      ['a root replaced by a link', () => {
        rmSync(d(4), { recursive: true });
        mkdirSync(join(t.ws, 'elsewhere', '.git'), { recursive: true });
        symlinkSync(join(t.ws, 'elsewhere'), d(4));
      }],
      ['an ancestor removed', () => rmSync(join(t.ws, 'packages', 'p5'), { recursive: true })],
      ['an ancestor made again', () => mkdirSync(join(t.ws, 'packages', 'p5', 'dist', '.git'), { recursive: true })],
      ['a hard link made from another root', () => {
        writeFileSync(join(d(6), 'cfg'), 'x');
        linkSync(join(d(6), 'cfg'), join(d(7), '.zero'));
      }],
      ['a root\'s times set', () => utimesSync(d(8), new Date(0), new Date(0))],
      ['a .git made beside a root', () => mkdirSync(join(t.ws, 'packages', 'p9', '.git'))],
      ['many entries at once (more events than the queue holds)', () => {
        for (let i = 0; i < 17000; i++) writeFileSync(join(t.ws, 'packages', 'p11', 'dist', `f${i}`), '');
        mkdirSync(join(t.ws, 'packages', 'p11', 'dist', '.zero'));
      }],
      ['the whole tree renamed and another put in its place', () => {
        renameSync(join(t.ws, 'packages'), join(t.ws, 'packages-old'));
        mkdirSync(join(t.ws, 'packages', 'p10', 'dist', '.git'), { recursive: true });
      }],
    ];
    same(asked, dists, 'first');
    for (const [why, change] of steps) {
      same(asked, dists, `before: ${why}`);
      change();
      same(asked, dists, why);
    }
  } finally {
    t.cleanup();
  }
});

linuxTest('an entry made under any name drops every missing answer kept in its directory', () => {
  // In a case-insensitive directory (casefolding is set per directory on ext4, f2fs and tmpfs),
  // ".GIT" made there is what a look at ".git" finds: the event's name need not be the one asked.
  const t = makeTree();
  try {
    const dist = join(t.ws, 'p', 'dist');
    mkdirSync(dist, { recursive: true });
    const asked = [join(dist, '.git'), join(dist, '.zero')];
    watched(asked);
    assert.is(watched(asked).kept, 2, 'kept while nothing changed');
    writeFileSync(join(dist, '.GIT'), 'x');
    const after = watched(asked);
    assert.is(after.kept, 0, 'both looked at again');
    assert.equal(after.answers, verbs().fsInspectMany(asked));
  } finally {
    t.cleanup();
  }
});

// Run in a mount namespace of its own (a user namespace maps the caller to root there): a tmpfs
// mounted over a directory on the way to a kept answer changes what the path leads to without any
// inotify event; the mount table's change must drop what was kept.
const MOUNTED = `
const addon = require(process.argv[1]);
const { execFileSync } = require('node:child_process');
const { mkdirSync } = require('node:fs');
const [dir] = process.argv.slice(2);
const asked = [dir + '/p/dist', dir + '/p/dist/.git', dir + '/p/dist/.zero'];
const look = () => JSON.stringify(addon.fsInspectMany(asked));
const kept = () => JSON.stringify(addon.fsInspectManyWatched(asked).slice(0, asked.length));
kept(); kept();
execFileSync('mount', ['-t', 'tmpfs', 'none', dir + '/p']);
mkdirSync(dir + '/p/dist/.git', { recursive: true });
console.log(JSON.stringify({ same: kept() === look(), answers: kept() }));
`;

linuxTest('a file system mounted on the way to kept answers drops them', () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'p', 'dist'), { recursive: true });
    const r = spawnSync('unshare', ['-rm', process.execPath, '-e', MOUNTED, nativeBindingPath() as string, t.ws], { encoding: 'utf8' });
    if (r.status !== 0 && /unshare/.test(r.stderr) && !/Error/.test(r.stderr)) {
      console.log(`skipped: no user and mount namespace here (${r.stderr.trim()})`);
      return;
    }
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { same: boolean; answers: string };
    assert.ok(out.same, out.answers);
    assert.match(out.answers, /^\["d[^"]*","d/, 'the .git on the mounted file system is seen');
  } finally {
    t.cleanup();
  }
});

test.run();
