// The first names the mount plan takes from buildWritableRoot (standard-subpaths.ts) give the
// plan it builds by reading each protected subpath, and an entry changed after it was made is read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildMountPlan, type HostView } from '../../lib/backend/linux/mounts.js';
import { buildWritableRoot } from '../../lib/sandbox/plan.js';
import { agentToolConfigPaths } from '../../lib/protected-names.js';
import type { WritableRoot } from '../../lib/backend/types.js';

/** A host of these kinds, whose listed directories hold these names (folded as a case-folding one). */
function host(existing: Record<string, 'file' | 'dir'>, listings: Record<string, string[]>): HostView {
  return {
    kind: (path) => existing[path] ?? 'missing',
    procReadonly: [],
    listedIn: (dir) => {
      const names = listings[dir];
      return names === undefined ? undefined : { size: names.length, mayHold: (name) => names.some((listed) => listed.toLowerCase() === name.toLowerCase()) };
    },
  };
}

/** The same roots with new arrays of new strings (nothing buildWritableRoot noted). */
const copied = (roots: WritableRoot[]): WritableRoot[] => JSON.parse(JSON.stringify(roots)) as WritableRoot[];

const bound = (roots: WritableRoot[], view: HostView) =>
  buildMountPlan({ writeRoots: roots, denyRead: [], denyWrite: [] }, view)
    .ops.filter((op) => op.kind === 'readonly_bind')
    .map((op) => op.path);

test('buildWritableRoot: .git/hooks, .git/config and the agent configs of the root, then the extra paths', () => {
  for (const root of ['/', '/w', '/a/b c/d']) {
    const extra = [`${root === '/' ? '' : root}/sub/.git/hooks`];
    const git = `${root === '/' ? '' : root}/.git`;
    assert.equal(buildWritableRoot(root, extra).readOnlySubpaths, [`${git}/hooks`, `${git}/config`, ...agentToolConfigPaths(root), ...extra]);
  }
  // An unclean root is joined as before.
  assert.equal(buildWritableRoot('/w/../v').readOnlySubpaths.slice(0, 2), ['/v/.git/hooks', '/v/.git/config']);
});

test('mount plan: noted first names give the targets reading every subpath gives', () => {
  const existing: Record<string, 'file' | 'dir'> = {
    '/w/.vscode': 'dir', '/w/.vscode/tasks.json': 'file', '/w/.git': 'dir', '/w/.git/hooks': 'dir', '/w/.git/config': 'file',
    '/v/.claude': 'dir', '/v/sub': 'dir', '/v/sub/.git': 'dir', '/v/sub/.git/hooks': 'dir',
  };
  const listings = { '/w': ['.VSCode', '.git', 'src'], '/v': ['.claude', 'sub'], '/e': [] };
  const roots = [buildWritableRoot('/w'), buildWritableRoot('/v', ['/v/sub/.git/hooks', '/w/.git/config']), buildWritableRoot('/e'), buildWritableRoot('/n')];
  const view = host(existing, listings);
  const fresh = bound(copied(roots), view);
  assert.ok(fresh.includes('/w/.vscode/tasks.json') && fresh.includes('/v/sub/.git/hooks'));
  assert.equal(bound(roots, view), fresh);
});

test('mount plan: a subpath replaced or added after buildWritableRoot made it is read itself', () => {
  const existing: Record<string, 'file' | 'dir'> = { '/w/src': 'dir', '/w/src/run.sh': 'file', '/w/lib': 'dir', '/w/lib/x': 'file' };
  const view = host(existing, { '/w': ['src', 'lib'] });
  const root = buildWritableRoot('/w');
  assert.equal(bound([root], view), []);
  // In place: the first entry (made as /w/.git/hooks, whose .git the listing lacks) now names a file that exists.
  root.readOnlySubpaths[0] = '/w/src/run.sh';
  root.readOnlySubpaths.push('/w/lib/x');
  assert.equal(bound([root], view), ['/w/src/run.sh', '/w/lib/x']);
  // Another root object with the same array: its root decides, not the one the array was made for
  // (/w/.git/config is outside /v: looked at, and found).
  const moved = { ...root, root: '/v' };
  assert.equal(bound([moved], host({ ...existing, '/w/.git': 'dir', '/w/.git/config': 'file' }, { '/v': [] })), ['/w/src/run.sh', '/w/.git/config', '/w/lib/x']);
});

test.run();
