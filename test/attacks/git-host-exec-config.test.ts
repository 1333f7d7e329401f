// Attack: an existing repository's config is writable during a run (so that `git remote add`,
// `git branch -u` or `git config user.name` work inside), and the command uses that to add a key
// that makes host git run a program, to point git elsewhere, or to swap the file for a link.
// Fix: the config's content is noted before the run; once the sandbox is gone, a config whose
// program-running entries (everything outside the safe data keys, plus core.worktree) differ
// from before is put back byte for byte, reported in protectedPathViolations and as a denial, and
// the run exits 1. Each test then runs the real git on the host.
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { hookScript, hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';

sandboxTest('attack: program-running keys added to an existing .git/config are undone, the file restored byte for byte', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    hostGit(t.ws, ['config', 'core.editor', 'true']); // the user's own program key stays
    const before = readFileSync(join(t.ws, '.git', 'config'));
    const r = await sh(t, [
      'git remote add origin /nowhere',
      `git config core.fsmonitor "${plant(t.outside, 'fsmonitor')}"`,
      `git config alias.st "!${plant(t.outside, 'alias')}"`,
      `printf ${hookScript(t.outside, 'hooks')} > evil-hook; chmod +x evil-hook; mkdir -p evilhooks; mv evil-hook evilhooks/pre-commit`,
      'git config core.hooksPath "$PWD/evilhooks"',
      'echo configured',
    ].join(' && '));
    assert.match(r.stdout, /configured/, r.stderr);
    assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.is(r.exitCode, 1);
    const denial = r.denials.find((d) => d.capability.kind === 'protected_metadata');
    assert.match(denial?.reason ?? '', /core\.fsmonitor/);
    assert.match(denial?.reason ?? '', /as it was before the run/);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    hostGit(t.ws, ['status']);
    hostGit(t.ws, ['st']);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: an existing config changed in place of the user\'s program key, or moved by core.worktree, is undone', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    hostGit(t.ws, ['config', 'core.pager', 'cat']);
    const before = readFileSync(join(t.ws, '.git', 'config'));
    const pager = await sh(t, `git config core.pager "${plant(t.outside, 'pager')}"`);
    assert.equal(pager.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    const worktree = await sh(t, 'mkdir -p elsewhere && git config core.worktree "$PWD/elsewhere"');
    assert.equal(worktree.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    assert.is(hostGit(t.ws, ['var', 'GIT_PAGER']).stdout.trim(), 'cat');
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: .git/config swapped for a link to a planted config (or removed) is put back as the regular file it was', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const before = readFileSync(join(t.ws, '.git', 'config'));
    writeFileSync(join(t.base, 'evil.gitconfig'), `[core]\n\tfsmonitor = "${plant(t.outside, 'linked')}"\n`);
    const linked = await sh(t, `rm .git/config && ln -s ${join(t.base, 'evil.gitconfig')} .git/config`);
    assert.equal(linked.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    const removed = await sh(t, 'rm .git/config');
    assert.equal(removed.protectedPathViolations, [join(t.ws, '.git', 'config')]);
    assert.equal(readFileSync(join(t.ws, '.git', 'config')), before);
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
    // Control: the planted config does run when git reads it.
    symlinkSync(join(t.base, 'evil.gitconfig'), join(t.base, 'probe'));
    hostGit(t.ws, ['-c', `include.path=${join(t.base, 'probe')}`, 'status']);
    assert.equal(markers(t.outside), ['pwned-linked']);
  } finally {
    t.cleanup();
  }
});

test.run();
