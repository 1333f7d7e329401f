// The repository scan that runs before every sandboxed run (beneath.ts over the addon): it finds
// every repository a workspace holds at any depth (a `.git` of any kind, or a bare git dir), never
// follows a link, does not enter git dirs, reports an incomplete answer at its limits (the run is
// then refused), and a remembered listing is dropped as soon as its directory changes.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants } from 'node:os';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { aheadScanCounts, removeEntry, scanRepositories, scanRepositoriesAsync, ScansAhead, toBytes } from '../../lib/sandbox/beneath.js';
import { loadNative } from '../../lib/native/load.js';
import { discoverGit } from '../../lib/sandbox/git-guard.js';
import { ScannedRoots } from '../../lib/sandbox/scanned-roots.js';
import { NESTED_CONFIG_SCAN } from '../../lib/protected-names.js';
import { makeTree } from '../helpers/sandbox.js';
import { bare } from '../helpers/scan-trees.js';

function scan(root: string, maxDirs = 10_000, maxRepos = 100) {
  const r = scanRepositories(toBytes(root), maxDirs, maxRepos);
  return { worktrees: [...r.worktrees].sort(), gitDirs: [...r.gitDirs].sort(), incomplete: r.incomplete };
}

test('finds repositories at any depth and bare git dirs; links and git dirs are not entered', () => {
  const t = makeTree();
  try {
    bare(join(t.ws, '.git'));
    bare(join(t.ws, 'a', 'b', 'c', '.git'));
    mkdirSync(join(t.ws, 'sub'));
    writeFileSync(join(t.ws, 'sub', '.git'), 'gitdir: ../.git/modules/sub\n');
    bare(join(t.ws, 'mirrors', 'x.git'));
    bare(join(t.ws, 'mirrors', 'x.git', 'inner', '.git')); // inside a git dir: the guard's own look
    bare(join(t.ws, '.git', 'modules', 'sub'));
    bare(join(t.outside, 'elsewhere', '.git'));
    symlinkSync(join(t.outside, 'elsewhere'), join(t.ws, 'linked'));
    assert.equal(scan(t.ws), {
      worktrees: [t.ws, join(t.ws, 'a', 'b', 'c'), join(t.ws, 'sub')].map(toBytes).sort(),
      gitDirs: [toBytes(join(t.ws, 'mirrors', 'x.git'))],
      incomplete: false,
    });
  } finally {
    t.cleanup();
  }
});

function named(root: string, max: number = NESTED_CONFIG_SCAN.max) {
  const r = scanRepositories(toBytes(root), 10_000, 100, { ...NESTED_CONFIG_SCAN, max });
  return { named: [...r.named].sort(), incomplete: r.incomplete };
}

test('agent and editor config entries are reported at any depth (any kind, workspace files by suffix), none below node_modules, at most max', () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'packages', 'app', '.vscode'), { recursive: true });
    mkdirSync(join(t.ws, 'packages', 'lib', '.gemini', 'extensions'), { recursive: true });
    writeFileSync(join(t.ws, 'packages', 'app', 'app.code-workspace'), '{}');
    writeFileSync(join(t.ws, 'team.code-workspace'), '{}');
    writeFileSync(join(t.ws, '.code-workspace'), '{}'); // the suffix alone is not a workspace file
    symlinkSync(join(t.outside), join(t.ws, 'packages', 'lib', '.zed'));
    writeFileSync(join(t.ws, 'packages', 'lib', '.mcp.json'), '{}');
    mkdirSync(join(t.ws, 'node_modules', 'dep', '.vscode'), { recursive: true });
    writeFileSync(join(t.ws, 'node_modules', 'dep', 'x.code-workspace'), '{}');
    mkdirSync(join(t.ws, 'vendor', 'node_modules', 'deeper', 'pkg', '.claude'), { recursive: true });
    bare(join(t.ws, 'repo', '.git'));
    mkdirSync(join(t.ws, 'repo', '.git', '.vscode')); // inside a git dir: not walked
    const want = ['packages/app/.vscode', 'packages/lib/.gemini', 'packages/app/app.code-workspace', 'team.code-workspace', 'packages/lib/.zed', 'packages/lib/.mcp.json'];
    assert.equal(named(t.ws), { named: want.map((p) => toBytes(join(t.ws, ...p.split('/')))).sort(), incomplete: false });
    assert.equal(named(t.ws).named.length, want.length, 'a repeated scan (remembered listings) reports the same');
    assert.equal(named(t.ws, 5).incomplete, true, 'more than max: incomplete');
    assert.equal(scanRepositories(toBytes(t.ws), 10_000, 100).named, [], 'a scan that asks for no names reports none');
    assert.equal(named(t.ws).named.length, want.length, 'and leaves the remembered names in place');
  } finally {
    t.cleanup();
  }
});

test('a config entry created in a remembered directory is reported by the next scan', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'packages', 'app', 'src'), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 2200));
    assert.equal(named(t.ws).named, []);
    assert.equal(named(t.ws).named, []);
    mkdirSync(join(t.ws, 'packages', 'app', '.vscode'));
    writeFileSync(join(t.ws, 'packages', 'app', 'src', 'a.code-workspace'), '{}');
    assert.equal(named(t.ws).named, [join(t.ws, 'packages', 'app', '.vscode'), join(t.ws, 'packages', 'app', 'src', 'a.code-workspace')].map(toBytes));
  } finally {
    t.cleanup();
  }
});

test('limits: too many directories or repositories is an incomplete answer, a missing root an empty one', () => {
  const t = makeTree();
  try {
    for (let i = 0; i < 5; i++) bare(join(t.ws, `r${i}`, '.git'));
    assert.ok(scan(t.ws, 10_000, 4).incomplete);
    assert.not.ok(scan(t.ws, 10_000, 5).incomplete);
    assert.ok(scan(t.ws, 3, 100).incomplete);
    assert.equal(scan(join(t.ws, 'missing')), { worktrees: [], gitDirs: [], incomplete: false });
  } finally {
    t.cleanup();
  }
});

test('a remembered listing is not reused once its directory changed (new repository in a leaf, deep down)', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'node_modules', 'p', 'lib'), { recursive: true });
    mkdirSync(join(t.ws, 'deep', 'er', 'still'), { recursive: true });
    // Listings are remembered only once their directory is older than the clock's coarse tick.
    await new Promise((resolve) => setTimeout(resolve, 2200));
    assert.equal(scan(t.ws).worktrees, []);
    assert.equal(scan(t.ws).worktrees, []);
    bare(join(t.ws, 'node_modules', 'p', 'lib', '.git'));
    bare(join(t.ws, 'deep', 'er', 'still', 'repo', '.git'));
    assert.equal(scan(t.ws).worktrees, [join(t.ws, 'deep', 'er', 'still', 'repo'), join(t.ws, 'node_modules', 'p', 'lib')].map(toBytes));
  } finally {
    t.cleanup();
  }
});

test('remembered directories are looked through without being opened: a change deep below is seen, a directory swapped for a link is not followed', async () => {
  const t = makeTree();
  try {
    for (const name of ['a', 'b']) mkdirSync(join(t.ws, 'n', name, 'x', 'y', 'z'), { recursive: true });
    bare(join(t.outside, 'planted', 'x', 'y', 'z', '.git'));
    await new Promise((resolve) => setTimeout(resolve, 2200));
    assert.equal(scan(t.ws).worktrees, []);
    assert.equal(scan(t.ws).worktrees, []);
    // Below three remembered levels: a new repository and a changed leaf.
    bare(join(t.ws, 'n', 'a', 'x', 'y', 'z', 'r', '.git'));
    // A remembered directory replaced by a link to a tree holding a repository.
    rmSync(join(t.ws, 'n', 'b'), { recursive: true });
    symlinkSync(join(t.outside, 'planted'), join(t.ws, 'n', 'b'));
    assert.equal(scan(t.ws), { worktrees: [toBytes(join(t.ws, 'n', 'a', 'x', 'y', 'z', 'r'))], gitDirs: [], incomplete: false });
    await new Promise((resolve) => setTimeout(resolve, 2200));
    assert.equal(scan(t.ws).worktrees, [toBytes(join(t.ws, 'n', 'a', 'x', 'y', 'z', 'r'))]);
    rmSync(join(t.ws, 'n', 'a', 'x', 'y', 'z', 'r', '.git'), { recursive: true });
    assert.equal(scan(t.ws).worktrees, []);
  } finally {
    t.cleanup();
  }
});

test('a remembered tree replaced by a renamed one is read again: the same paths now lead to other directories, one holding a repository', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'n', 'a', 'x', 'y', 'z'), { recursive: true });
    mkdirSync(join(t.outside, 'planted', 'a', 'x', 'y', 'z'), { recursive: true });
    bare(join(t.outside, 'planted', 'a', 'x', 'y', 'z', '.git'));
    await new Promise((resolve) => setTimeout(resolve, 2200));
    // Remembered and watched; the deepest directories themselves see no change below.
    assert.equal(scan(t.ws).worktrees, []);
    assert.equal(scan(t.ws).worktrees, []);
    renameSync(join(t.ws, 'n'), join(t.outside, 'old'));
    renameSync(join(t.outside, 'planted'), join(t.ws, 'n'));
    assert.equal(scan(t.ws).worktrees, [toBytes(join(t.ws, 'n', 'a', 'x', 'y', 'z'))]);
    // The tree moved out is not looked at, whatever happens in it; the one moved in stays seen.
    bare(join(t.outside, 'old', 'a', 'x', 'y', 'z', '.git'));
    assert.equal(scan(t.ws).worktrees, [toBytes(join(t.ws, 'n', 'a', 'x', 'y', 'z'))]);
    // Swapped back: the old paths are remembered with directories that have moved twice.
    renameSync(join(t.ws, 'n'), join(t.outside, 'planted'));
    renameSync(join(t.outside, 'old'), join(t.ws, 'n'));
    assert.equal(scan(t.ws).worktrees, [toBytes(join(t.ws, 'n', 'a', 'x', 'y', 'z'))]);
    rmSync(join(t.ws, 'n', 'a', 'x', 'y', 'z', '.git'), { recursive: true });
    assert.equal(scan(t.ws).worktrees, []);
  } finally {
    t.cleanup();
  }
});

test('nested write roots: each directory is scanned once, and every repository in them is guarded', () => {
  const t = makeTree();
  try {
    const inner = join(t.ws, 'a', 'b');
    bare(join(inner, 'r', '.git'));
    // A root inside a git dir is not walked by the outer scan (git dirs are not entered): its
    // own scan finds what it holds.
    const inBare = join(t.ws, 'm.git', 'work');
    bare(join(t.ws, 'm.git'));
    bare(join(inBare, 'q', '.git'));
    const roots = [inner, inBare, t.ws];
    const guard = discoverGit(roots, roots, { HOME: t.outside });
    assert.not.ok(guard.truncated, guard.truncatedAt);
    assert.ok(guard.worktrees.has(toBytes(join(inner, 'r'))));
    assert.ok(guard.worktrees.has(toBytes(join(inBare, 'q'))));
    assert.ok(guard.gitDirs.has(toBytes(join(t.ws, 'm.git'))));
    assert.equal(guard.scanRoots, [t.ws, inner, inBare].map(toBytes));
    const scanned = new ScannedRoots();
    scanned.add(toBytes(t.ws), [toBytes(join(t.ws, 'm.git'))]);
    assert.ok(scanned.covers(toBytes(inner)));
    assert.not.ok(scanned.covers(toBytes(inBare)));
    assert.not.ok(scanned.covers(toBytes(join(t.ws, 'x', '.git', 'y'))));
    assert.not.ok(scanned.covers(toBytes(t.outside)));
    // The config entries of a root's top are reported by the outer scan unless a skipped
    // directory (node_modules, any case) lies between them: then the root is looked at itself.
    assert.equal(guard.namesCovered, [toBytes(inner)]);
    assert.ok(scanned.covers(toBytes(inner), NESTED_CONFIG_SCAN.skip));
    assert.ok(scanned.covers(toBytes(join(t.ws, 'node_modules', 'x', 'dist'))), 'walked for repositories');
    assert.not.ok(scanned.covers(toBytes(join(t.ws, 'node_modules', 'x', 'dist')), NESTED_CONFIG_SCAN.skip));
    assert.not.ok(scanned.covers(toBytes(join(t.ws, 'a', 'Node_Modules')), NESTED_CONFIG_SCAN.skip));
    assert.not.ok(scanned.covers(toBytes(inBare), NESTED_CONFIG_SCAN.skip));
  } finally {
    t.cleanup();
  }
});

test('a git dir whose objects or refs is a link or a file (git accepts both) is found, and walked into as well', () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'store'));
    const linked = join(t.ws, 'linked-objects');
    mkdirSync(join(linked, 'refs'), { recursive: true });
    writeFileSync(join(linked, 'HEAD'), 'ref: refs/heads/main\n');
    symlinkSync('../store', join(linked, 'objects'));
    bare(join(linked, 'refs', 'inside', '.git'));
    const fileRefs = join(t.ws, 'file-refs');
    mkdirSync(join(fileRefs, 'objects'), { recursive: true });
    writeFileSync(join(fileRefs, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(fileRefs, 'refs'), '', { mode: 0o755 });
    const noHead = join(t.ws, 'no-head');
    mkdirSync(join(noHead, 'refs'), { recursive: true });
    symlinkSync('../store', join(noHead, 'objects'));
    for (let round = 0; round < 2; round++) {
      // The second round reads remembered listings: the answer is the same.
      assert.equal(scan(t.ws), {
        worktrees: [toBytes(join(linked, 'refs', 'inside'))],
        gitDirs: [fileRefs, linked].map(toBytes).sort(),
        incomplete: false,
      });
    }
  } finally {
    t.cleanup();
  }
});

function sorted(r: { worktrees: string[]; gitDirs: string[]; named: string[]; incomplete: boolean }) {
  return { worktrees: [...r.worktrees].sort(), gitDirs: [...r.gitDirs].sort(), named: [...r.named].sort(), incomplete: r.incomplete };
}

test('the scan off the thread gives the answers of the scan on it: repositories, named entries, limits, a missing root', async () => {
  const t = makeTree();
  try {
    bare(join(t.ws, '.git'));
    bare(join(t.ws, 'a', 'b', '.git'));
    bare(join(t.ws, 'mirrors', 'x.git'));
    mkdirSync(join(t.ws, 'packages', 'app', '.vscode'), { recursive: true });
    writeFileSync(join(t.ws, 'team.code-workspace'), '{}');
    const root = toBytes(t.ws);
    for (const [maxDirs, maxRepos] of [[10_000, 100], [3, 100], [10_000, 1]] as const) {
      const sync = sorted(scanRepositories(root, maxDirs, maxRepos, NESTED_CONFIG_SCAN));
      assert.equal(sorted(await scanRepositoriesAsync(root, maxDirs, maxRepos, NESTED_CONFIG_SCAN)), sync, `limits ${maxDirs}/${maxRepos}`);
    }
    assert.ok(sorted(await scanRepositoriesAsync(root, 3, 100)).incomplete);
    assert.equal(await scanRepositoriesAsync(toBytes(join(t.ws, 'missing')), 10_000, 100), { worktrees: [], gitDirs: [], named: [], incomplete: false });
    // Many at once: each its own answer.
    const all = await Promise.all(Array.from({ length: 8 }, () => scanRepositoriesAsync(root, 10_000, 100)));
    for (const r of all) assert.equal(sorted(r).gitDirs, [toBytes(join(t.ws, 'mirrors', 'x.git'))]);
  } finally {
    t.cleanup();
  }
});

test('the scan off the thread sees a repository made after the last scan remembered the tree', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'deep', 'er'), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 2200));
    assert.equal((await scanRepositoriesAsync(toBytes(t.ws), 10_000, 100)).worktrees, []);
    assert.equal(scanRepositories(toBytes(t.ws), 10_000, 100).worktrees, []);
    bare(join(t.ws, 'deep', 'er', 'repo', '.git'));
    assert.equal((await scanRepositoriesAsync(toBytes(t.ws), 10_000, 100)).worktrees, [toBytes(join(t.ws, 'deep', 'er', 'repo'))]);
  } finally {
    t.cleanup();
  }
});

test('scans made ahead: each handed once to the same ask within use, none for another ask, none after a change made through the walk', async () => {
  const t = makeTree();
  try {
    bare(join(t.ws, 'r1', '.git'));
    mkdirSync(join(t.ws, 'nested'));
    const root = toBytes(t.ws);
    // The nested root is walked with the first: not scanned ahead (the pass does not scan it either).
    const ahead = await ScansAhead.make([root, toBytes(join(t.ws, 'nested'))], 10_000, 100, NESTED_CONFIG_SCAN, new ScannedRoots());
    // Made ahead, then the tree changes: the answer handed is the one from before the change (as
    // a scan made at that moment), once; a second ask looks afresh.
    bare(join(t.ws, 'r2', '.git'));
    ahead.use(() => {
      assert.equal(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN).worktrees, [toBytes(join(t.ws, 'r1'))], 'the answer made ahead');
      assert.equal(sorted(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN)).worktrees, [join(t.ws, 'r1'), join(t.ws, 'r2')].map(toBytes), 'asked again: a fresh look');
    });
    const again = await ScansAhead.make([root], 10_000, 100, NESTED_CONFIG_SCAN, new ScannedRoots());
    again.use(() => {
      assert.equal(sorted(scanRepositories(root, 10_000, 7, NESTED_CONFIG_SCAN)).worktrees.length, 2, 'other limits: a fresh look');
      assert.ok(removeEntry(toBytes(join(t.ws, 'r2'))));
      assert.equal(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN).worktrees, [toBytes(join(t.ws, 'r1'))], 'after a removal: a fresh look');
    });
    const unused = await ScansAhead.make([root], 10_000, 100, NESTED_CONFIG_SCAN, new ScannedRoots());
    bare(join(t.ws, 'r3', '.git'));
    unused.use(() => undefined);
    assert.equal(sorted(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN)).worktrees, [join(t.ws, 'r1'), join(t.ws, 'r3')].map(toBytes), 'outside use: a fresh look');
  } finally {
    t.cleanup();
  }
});

test('a tree last seen small is scanned ahead on the caller\'s thread with the scan thread\'s answers; grown past the limit, it goes back to the scan thread', async () => {
  const t = makeTree();
  try {
    bare(join(t.ws, 'r1', '.git'));
    mkdirSync(join(t.ws, 'packages', 'app', '.vscode'), { recursive: true });
    const root = toBytes(t.ws);
    const made = async () => {
      const before = { ...aheadScanCounts };
      const ahead = await ScansAhead.make([root], 10_000, 100, NESTED_CONFIG_SCAN, new ScannedRoots());
      const scan = ahead.use(() => sorted(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN)));
      return { scan, here: aheadScanCounts.here - before.here, offThread: aheadScanCounts.offThread - before.offThread };
    };
    const first = await made();
    assert.equal([first.here, first.offThread], [0, 1], 'never seen: on the scan thread');
    assert.equal(first.scan, sorted(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN)));
    assert.equal(first.scan.worktrees, [toBytes(join(t.ws, 'r1'))]);
    assert.equal(first.scan.named, [toBytes(join(t.ws, 'packages', 'app', '.vscode'))]);
    bare(join(t.ws, 'r2', '.git'));
    const second = await made();
    assert.equal([second.here, second.offThread], [1, 0], 'seen small: on the caller\'s thread');
    assert.equal(second.scan.worktrees, [join(t.ws, 'r1'), join(t.ws, 'r2')].map(toBytes), 'a repository made since is found');
    // Grown past the limit, with a repository in the last directory walked: the walk here stops
    // short, so the scan thread walks the whole tree and finds it.
    for (let i = 0; i < 80; i++) mkdirSync(join(t.ws, 'wide', `d${String(i).padStart(3, '0')}`), { recursive: true });
    bare(join(t.ws, 'wide', 'd079', 'deep', '.git'));
    const grown = await made();
    assert.equal([grown.here, grown.offThread], [0, 1], 'grown: on the scan thread');
    assert.equal(grown.scan, sorted(scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN)));
    assert.ok(grown.scan.worktrees.includes(toBytes(join(t.ws, 'wide', 'd079', 'deep'))));
    assert.equal((await made()).offThread, 1, 'known large: on the scan thread again');
  } finally {
    t.cleanup();
  }
});

test('a tree scanned on the caller\'s thread is known by its size: small, the next scan made ahead of it runs here; large, on the scan thread', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'small'), { recursive: true });
    bare(join(t.ws, 'small', 'r', '.git'));
    for (let i = 0; i < 80; i++) mkdirSync(join(t.ws, 'large', `d${String(i).padStart(3, '0')}`), { recursive: true });
    const ahead = async (root: string) => {
      const before = { ...aheadScanCounts };
      const made = await ScansAhead.make([root], 10_000, 100, NESTED_CONFIG_SCAN, new ScannedRoots());
      const scan = made.use(() => scanRepositories(root, 10_000, 100, NESTED_CONFIG_SCAN));
      return { scan, here: aheadScanCounts.here - before.here, offThread: aheadScanCounts.offThread - before.offThread };
    };
    const small = toBytes(join(t.ws, 'small'));
    const large = toBytes(join(t.ws, 'large'));
    const smallHere = scanRepositories(small, 10_000, 100, NESTED_CONFIG_SCAN);
    scanRepositories(large, 10_000, 100, NESTED_CONFIG_SCAN);
    const afterSmall = await ahead(small);
    assert.equal([afterSmall.here, afterSmall.offThread], [1, 0], 'small: on the caller\'s thread');
    assert.equal(afterSmall.scan, smallHere, 'the same answer');
    const afterLarge = await ahead(large);
    assert.equal([afterLarge.here, afterLarge.offThread], [0, 1], 'large: on the scan thread');
  } finally {
    t.cleanup();
  }
});

test('the caller\'s thread never waits for the scan thread: asked ifFree while it walks, the scan answers EBUSY; asked plainly, it waits and answers', async () => {
  const binding = loadNative();
  const t = makeTree();
  try {
    for (let i = 0; i < 40; i++) for (let j = 0; j < 50; j++) mkdirSync(join(t.ws, 'big', `a${i}`, `b${j}`), { recursive: true });
    mkdirSync(join(t.ws, 'small', 'x'), { recursive: true });
    bare(join(t.ws, 'small', 'x', '.git'));
    const small = toBytes(join(t.ws, 'small'));
    let busy = 0;
    let answered = 0;
    for (let tries = 0; tries < 20 && busy === 0; tries++) {
      // A fresh name set each time: the walk forgets its remembered listings and reads the big tree again.
      const walking = binding.fsScanGitAsync?.(toBytes(t.ws), '', 100_000, 100, [`n${tries}`], [], [], 10);
      const until = Date.now() + 2000;
      while (busy === 0 && Date.now() < until) {
        const r = binding.fsScanGit?.(small, '', 64, 100, [], [], [], 0, true);
        if (r !== null && r !== undefined && 'errno' in r && r.errno === constants.errno.EBUSY && !('worktrees' in r)) busy++;
        else if (r !== null && r !== undefined && 'worktrees' in r) answered++;
      }
      await walking;
    }
    assert.ok(busy > 0, `no busy answer while the scan thread walked (${answered} answered)`);
    const plain = binding.fsScanGit?.(small, '', 64, 100, [], [], [], 0);
    assert.ok(plain !== null && plain !== undefined && 'worktrees' in plain);
    assert.equal(plain.worktrees, [toBytes(join(t.ws, 'small', 'x'))]);
  } finally {
    t.cleanup();
  }
});

test.run();
