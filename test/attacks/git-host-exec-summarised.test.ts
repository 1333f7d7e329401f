// SPDX-License-Identifier: MIT
// Attack: the workspace holds a large tree that no run changed (node_modules), which the
// repository scan answers whole from its summary instead of looking at each directory; a
// sandboxed command makes a repository, a gitfile pointing outside and a bare repository deep
// inside it, with config and hooks that would run code at the user's next git command there on
// the host. Fix: every directory of a summarised tree is watched, and a change anywhere in it
// drops the summary of every tree it lies in before the after-run scan, which then walks the
// changed part and finds the new repositories. The test first checks the tree is answered from
// its summary (so the attack meets it), and ends by running the real git on the host.
import { join, relative } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { makeModules, moduleLib, nativeScan, settle } from '../helpers/scan-trees.js';
import { hookScript, hostGit, hostGitTty, markers, plant } from '../helpers/git-host.js';

/** The scan as a run asks it (the named asks of the nested-config check). */
const scanAsRuns = (root: string) => nativeScan(root, { named: true });

sandboxTest('attack: repositories made deep inside a tree the scan answers from its summary keep only what git itself writes', async () => {
  const t = makeTree();
  try {
    makeModules(t.ws, 6);
    await settle();
    for (let i = 0; i < 2; i++) assert.is((await sh(t, 'true')).exitCode, 0);
    let before = scanAsRuns(t.ws);
    for (let i = 0; i < 3 && (before.summarised ?? 0) < before.dirs; i++) before = scanAsRuns(t.ws);
    assert.is(before.summarised, before.dirs, 'the tree is answered from its summary');
    const lib = (p: number, d: number) => relative(t.ws, moduleLib(t.ws, p, d));
    const G = 'git -c user.email=t@example.com -c user.name=t';
    const r = await sh(t, [
      `${G} init -q ${lib(3, 2)}/made && ${G} -C ${lib(3, 2)}/made config core.fsmonitor "${plant(t.outside, 'made')}"`,
      `printf ${hookScript(t.outside, 'madehook')} > ${lib(3, 2)}/made/.git/hooks/pre-commit; chmod +x ${lib(3, 2)}/made/.git/hooks/pre-commit`,
      `${G} init -q --bare ${lib(5, 7)}/made.git && ${G} -C ${lib(5, 7)}/made.git config core.pager "${plant(t.outside, 'bare')}"`,
    ].join('; '));
    assert.equal([...r.protectedPathViolations].sort(), [
      join(t.ws, lib(3, 2), 'made', '.git', 'config'),
      join(t.ws, lib(3, 2), 'made', '.git', 'hooks', 'pre-commit'),
      join(t.ws, lib(5, 7), 'made.git', 'config'),
    ]);
    hostGit(join(t.ws, lib(3, 2), 'made'), ['status']);
    hostGit(join(t.ws, lib(3, 2), 'made'), ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGitTty(join(t.ws, lib(5, 7), 'made.git'), ['-p', 'log']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test.run();
