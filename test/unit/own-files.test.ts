// zero-sandbox's own files inside a write root are found (the package, the packages it loads, the
// Node binary), and the mount plan binds them read-only with every directory on the way pinned.
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildMountPlan } from '../../lib/backend/linux/mounts.js';
import { PACKAGE_ROOT } from '../../lib/native/load.js';
import { ownFilesInside } from '../../lib/sandbox/own-files.js';
import { buildWritableRoot } from '../../lib/sandbox/plan.js';

const pkg = realpathSync(PACKAGE_ROOT);

test('a root holding the package gets the package and its run-time dependencies; an unrelated root gets nothing', () => {
  const parent = dirname(pkg);
  const own = ownFilesInside([parent]);
  assert.ok(own.includes(pkg), 'the package itself');
  // This checkout's dependencies live in its own node_modules, inside the package directory.
  const zod = realpathSync(join(pkg, 'node_modules', 'zod'));
  assert.ok(own.includes(zod), 'a run-time dependency');
  assert.not.ok(own.includes(parent), 'never the root itself');
  assert.equal(ownFilesInside(['/nonexistent-zs-root']), []);
  const node = realpathSync(process.execPath);
  assert.ok(ownFilesInside([dirname(dirname(node))]).includes(node), 'the Node binary');
});

test('the mount plan binds an own file read-only and pins each directory between it and the root', () => {
  const root = '/w';
  const target = '/w/node_modules/zero-sandbox';
  const plan = { writeRoots: [buildWritableRoot(root, [target])], denyRead: [], denyWrite: [] };
  const dirs = new Set(['/w', '/w/node_modules', target]);
  const { ops } = buildMountPlan(plan, { kind: (p) => (dirs.has(p) ? 'dir' : 'missing'), procReadonly: [] });
  const kinds = ops.filter((op) => op.path.startsWith('/w/')).map((op) => `${op.kind} ${op.path}`);
  assert.equal(kinds, ['pin /w/node_modules', `readonly_bind ${target}`]);
});

test.run();
