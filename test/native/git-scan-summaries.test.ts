// SPDX-License-Identifier: MIT
// The repository scan's summaries of unchanged trees (native/posix/git_scan.cc): a tree whose
// listings were all remembered, watched and unchanged is answered whole at the next scan, without
// a look at each directory. What must hold: a summary is used (the count says so), and anything
// the command could do below it (a repository made deep down, a gitfile, a directory swapped for
// a link, a tree renamed in, a repository removed) is seen by the very next scan; a summary is
// used only where its walk would give the same answer (the same named asks, the same skipped
// names above it, within the limits of directories, repositories and depth).
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { toBytes } from '../../lib/sandbox/beneath.js';
import { makeTree } from '../helpers/sandbox.js';
import { bare, makeModules, moduleLib, nativeScan, settle } from '../helpers/scan-trees.js';

// Summaries need directory watches (inotify): Linux.
const test = process.platform === 'linux' ? uvuTest : uvuTest.skip;

interface Scan {
  worktrees: string[];
  gitDirs: string[];
  named: string[];
  incomplete: boolean;
  dirs: number;
  summarised: number;
}

function scan(root: string, options: Parameters<typeof nativeScan>[1] = {}): Scan {
  const s = nativeScan(root, options);
  return { worktrees: [...s.worktrees].sort(), gitDirs: [...s.gitDirs].sort(), named: [...(s.named ?? [])].sort(), incomplete: s.truncated === true, dirs: s.dirs, summarised: s.summarised ?? 0 };
}

/** Scans until the whole tree is answered by summaries (the first lists it, the next walks it clean). */
function summarised(root: string, options: Parameters<typeof scan>[1] = {}): Scan {
  let last = scan(root, options);
  for (let i = 0; i < 3 && last.summarised < last.dirs; i++) last = scan(root, options);
  return last;
}

const bytes = (paths: string[]) => paths.map(toBytes).sort();

test('an unchanged tree is answered whole; a repository, a gitfile, a link, a tree renamed in or a repository removed below it is seen by the next scan', async () => {
  const t = makeTree();
  try {
    makeModules(t.ws, 10);
    bare(join(t.ws, 'node_modules', 'pkg1', 'd1', 'lib', 'vendored.git'));
    bare(join(t.outside, 'evil', 'repo', '.git'));
    await settle();
    const first = scan(t.ws);
    const whole = summarised(t.ws);
    assert.is(whole.summarised, whole.dirs, 'every directory answered by the summary');
    assert.equal({ ...whole, summarised: 0 }, { ...first, summarised: 0 }, 'the same answer as the walk');
    const step = (what: string, change: () => void, worktrees: string[], gitDirs: string[]) => {
      change();
      const next = scan(t.ws);
      assert.ok(next.summarised < next.dirs, `${what}: the changed tree is walked`);
      assert.equal([next.worktrees, next.gitDirs], [bytes(worktrees), bytes(gitDirs)], what);
      assert.equal([summarised(t.ws).worktrees, summarised(t.ws).gitDirs], [bytes(worktrees), bytes(gitDirs)], `${what}, summarised again`);
    };
    const lib = (p: number, d: number) => moduleLib(t.ws, p, d);
    const vendored = join(lib(1, 1), 'vendored.git');
    step('a repository made deep down', () => bare(join(lib(3, 2), '.git')), [lib(3, 2)], [vendored]);
    step('a gitfile', () => writeFileSync(join(lib(5, 1), '.git'), 'gitdir: /elsewhere\n'), [lib(3, 2), lib(5, 1)], [vendored]);
    step(
      'a directory swapped for a link to a repository outside',
      () => {
        rmSync(lib(6, 4), { recursive: true });
        symlinkSync(join(t.outside, 'evil', 'repo'), lib(6, 4));
      },
      [lib(3, 2), lib(5, 1)],
      [vendored],
    );
    step('a tree holding a repository renamed in', () => renameSync(join(t.outside, 'evil'), join(lib(7, 3), 'evil')), [lib(3, 2), lib(5, 1), join(lib(7, 3), 'evil', 'repo')], [vendored]);
    step('a repository removed', () => rmSync(join(lib(3, 2), '.git'), { recursive: true }), [lib(5, 1), join(lib(7, 3), 'evil', 'repo')], [vendored]);
  } finally {
    t.cleanup();
  }
});

test('a summary is used only with the asks it was made with: named entries are reported after plain scans, and inside a skipped directory scanned as a root', async () => {
  const t = makeTree();
  try {
    makeModules(t.ws, 4);
    const inModules = join(t.ws, 'node_modules', 'pkg2', 'd3', '.vscode');
    mkdirSync(inModules);
    for (let d = 0; d < 20; d++) mkdirSync(join(t.ws, 'packages', 'app', `m${d}`), { recursive: true });
    const inApp = join(t.ws, 'packages', 'app', 'm7', '.vscode');
    mkdirSync(inApp);
    await settle();
    const named = summarised(t.ws, { named: true });
    assert.is(named.summarised, named.dirs);
    assert.equal(named.named, bytes([inApp]), 'none below node_modules');
    const plain = summarised(t.ws);
    assert.is(plain.summarised, plain.dirs);
    assert.equal(plain.named, [], 'a plain scan reports no named entry');
    assert.equal(scan(t.ws, { named: true }).named, bytes([inApp]), 'named again after the plain summaries');
    const pkg = dirname(dirname(inModules));
    summarised(t.ws, { named: true });
    assert.equal(scan(pkg, { named: true }).named, bytes([inModules]), 'reported in a skipped directory scanned as a root');
  } finally {
    t.cleanup();
  }
});

test('a summary is not used beyond the limits: too many directories or repositories, or a tree deeper than the walk goes from a root above, is still an incomplete answer', async () => {
  const t = makeTree();
  try {
    makeModules(t.ws, 3);
    for (let p = 0; p < 3; p++) bare(join(moduleLib(t.ws, p, 0), '.git'));
    // A chain as deep as the walk goes from the workspace, one level too deep from its parent.
    let deep = join(t.ws, 'deep');
    for (let i = 0; i < 399; i++) deep = join(deep, 'd');
    mkdirSync(deep, { recursive: true });
    await settle();
    const whole = summarised(t.ws);
    assert.is(whole.summarised, whole.dirs);
    assert.not.ok(whole.incomplete);
    assert.ok(scan(t.ws, { maxDirs: whole.dirs - 1 }).incomplete, 'directories');
    assert.not.ok(scan(t.ws, { maxDirs: whole.dirs }).incomplete);
    assert.ok(scan(t.ws, { maxRepos: 2 }).incomplete, 'repositories');
    assert.not.ok(scan(t.ws, { maxRepos: 3 }).incomplete);
    assert.ok(scan(t.base).incomplete, 'depth from the root above');
    assert.not.ok(scan(t.ws).incomplete);
  } finally {
    t.cleanup();
  }
});

test('a tree whose finds are too long to copy is walked at its top, its parts still answered by their own summaries, with the same answer', async () => {
  const t = makeTree();
  try {
    // 120 repositories under names of 150 bytes: about 20 KB of paths, more than one summary keeps.
    const long = 'x'.repeat(150);
    const repos = Array.from({ length: 120 }, (_, i) => join(t.ws, 'r', `p${i}`, long));
    for (const repo of repos) bare(join(repo, '.git'));
    for (let d = 0; d < 20; d++) mkdirSync(join(t.ws, 'r', 'p0', `m${d}`));
    await settle();
    let last = scan(t.ws, { maxRepos: 1000 });
    for (let i = 0; i < 3; i++) last = scan(t.ws, { maxRepos: 1000 });
    assert.not.ok(last.incomplete);
    assert.equal(last.worktrees, bytes(repos));
    assert.ok(last.summarised > 0 && last.summarised < last.dirs, `parts summarised, not the whole (${last.summarised} of ${last.dirs})`);
  } finally {
    t.cleanup();
  }
});

uvuTest.run();
