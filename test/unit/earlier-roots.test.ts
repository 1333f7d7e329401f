// SPDX-License-Identifier: MIT
// The markers of earlier write roots: a root noted once in a process is not noted again in the same
// marker directory, and a root noted for one user cache dir is still noted in another.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { noteExtraWriteRoots, noteWriteRoots, wasWriteRoot } from '../../lib/sandbox/earlier-roots.js';

/** An environment whose user cache dir is `dir` on every OS (XDG on Linux, LOCALAPPDATA, HOME). */
function envAt(dir: string): Record<string, string> {
  return { XDG_CACHE_HOME: dir, LOCALAPPDATA: dir, HOME: dir };
}

function markers(env: Record<string, string>): string[] {
  const cache = process.platform === 'darwin' ? join(env.HOME as string, 'Library', 'Caches') : (env.XDG_CACHE_HOME as string);
  try {
    return readdirSync(join(cache, 'zero', 'write-roots'));
  } catch {
    return [];
  }
}

test('a noted root is noted once per marker directory; another directory or a new root is noted again', () => {
  const base = mkdtempSync(join(tmpdir(), 'zs-earlier-'));
  try {
    const a = envAt(join(base, 'a'));
    const b = envAt(join(base, 'b'));
    const roots = [join(base, 'r1'), join(base, 'r2')];
    noteWriteRoots(roots, a);
    assert.ok(roots.every((root) => wasWriteRoot(root, a)));
    assert.is(markers(a).length, 2);
    // The same roots again in the same directory: no file work (a marker removed meanwhile stays gone).
    rmSync(join(base, 'a'), { recursive: true });
    noteWriteRoots(roots, a);
    assert.is(markers(a).length, 0, 'noted already in this process');
    // Another user cache dir never takes the first one's answer.
    noteWriteRoots(roots, b);
    assert.ok(roots.every((root) => wasWriteRoot(root, b)));
    assert.not.ok(wasWriteRoot(join(base, 'r3'), b));
    // A changed list: only the new root is new.
    noteWriteRoots([...roots, join(base, 'r3')], a);
    assert.equal(markers(a).length, 1);
    assert.ok(wasWriteRoot(join(base, 'r3'), a));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('many roots noted at once are found by the marker name a single look gives', () => {
  const base = mkdtempSync(join(tmpdir(), 'zs-earlier-'));
  try {
    const env = envAt(join(base, 'c'));
    // A policy's many roots are hashed together (node:crypto), a look hashes one (plain JS).
    const roots = Array.from({ length: 100 }, (_, i) => join(base, 'packages', `p${i}`, i % 2 === 0 ? 'dist' : 'bü'));
    noteWriteRoots(roots, env);
    assert.is(markers(env).length, 100);
    assert.ok(roots.every((root) => wasWriteRoot(root, env)));
    assert.not.ok(wasWriteRoot(join(base, 'packages'), env));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('the extra roots of a kept list are noted without the ones left out, again for another directory or another list left out', () => {
  const base = mkdtempSync(join(tmpdir(), 'zs-earlier-'));
  try {
    const a = envAt(join(base, 'a'));
    const b = envAt(join(base, 'b'));
    const [ws, cache, r1, r2] = ['ws', 'cache', 'ws/r1', 'ws/r2'].map((name) => join(base, name)) as [string, string, string, string];
    // Frozen as the plan memo hands it out, run after run.
    const list = Object.freeze([ws, cache, r1, r2].map((root) => Object.freeze({ root })));
    noteExtraWriteRoots(list, [ws, cache], a);
    assert.ok(wasWriteRoot(r1, a) && wasWriteRoot(r2, a));
    assert.not.ok(wasWriteRoot(ws, a) || wasWriteRoot(cache, a), 'the roots left out are not noted');
    noteExtraWriteRoots(list, [ws, cache], a);
    assert.is(markers(a).length, 2);
    noteExtraWriteRoots(list, [ws, cache], b);
    assert.ok(wasWriteRoot(r1, b) && wasWriteRoot(r2, b), 'another marker directory is noted too');
    noteExtraWriteRoots(list, [ws], a);
    assert.ok(wasWriteRoot(cache, a), 'a root no longer left out is noted');
    assert.not.ok(wasWriteRoot(ws, a));
    // A list that is not frozen is filtered every time, with the same answers.
    const open = [{ root: ws }, { root: join(base, 'ws/r3') }];
    noteExtraWriteRoots(open, [ws], a);
    assert.ok(wasWriteRoot(join(base, 'ws/r3'), a));
    (open[1] as { root: string }).root = join(base, 'ws/r4');
    noteExtraWriteRoots(open, [ws], a);
    assert.ok(wasWriteRoot(join(base, 'ws/r4'), a), 'a changed root of a list that is not frozen is noted');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test.run();
