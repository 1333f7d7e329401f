// Attack: the workspace already holds repositories that are not tracked by any parent (a clone
// two levels down, a bare repository), and a sandboxed command edits their config or hooks so that
// the user's next git command there, on the host, runs code. Fix: before every run the whole
// workspace is scanned for repositories (directories with a `.git`, and git dirs themselves) and
// each one's config, hooks and pointer files are guarded like the workspace's own; when the scan
// cannot finish (too many repositories or directories) the run is refused instead of running with
// something unguarded. A repository the command creates anywhere in the workspace is held, after
// the run, to what git itself writes. Each test ends by running the real git on the host (on a
// terminal where a planted pager is the attack: git starts a pager only there).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, rejection, sandboxTest, sh } from '../helpers/sandbox.js';
import { hookScript, hostGit, hostGitTty, hostRepo, markers, plant } from '../helpers/git-host.js';
import { MAX_GIT_DIRS } from '../../lib/sandbox/git-guard.js';

sandboxTest('attack: an untracked repository two levels down (vendor/tools/lib): its config and hooks stay as they were', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const nested = hostRepo(join(t.ws, 'vendor', 'tools', 'lib'));
    const deeper = hostRepo(join(t.ws, 'a', 'b', 'c', 'd', 'e'));
    const before = readFileSync(join(nested, '.git', 'config'), 'utf8');
    await sh(t, [
      `git -C vendor/tools/lib config core.fsmonitor "${plant(t.outside, 'fsmonitor')}"`,
      `printf ${hookScript(t.outside, 'hook')} > vendor/tools/lib/.git/hooks/pre-commit; chmod +x vendor/tools/lib/.git/hooks/pre-commit`,
      `git -C a/b/c/d/e config core.pager "${plant(t.outside, 'pager')}"`,
      `printf ${hookScript(t.outside, 'deep')} > a/b/c/d/e/.git/hooks/post-commit; chmod +x a/b/c/d/e/.git/hooks/post-commit`,
    ].join('; '));
    assert.is(readFileSync(join(nested, '.git', 'config'), 'utf8'), before);
    hostGit(nested, ['status']);
    hostGit(nested, ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGitTty(deeper, ['-p', 'log']);
    hostGit(deeper, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository the command creates two levels down keeps only what git itself writes (no fsmonitor, no hook)', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    const G = 'git -c user.email=t@example.com -c user.name=t';
    const r = await sh(t, [
      `${G} init -q tools/made && ${G} -C tools/made config core.fsmonitor "${plant(t.outside, 'made')}"`,
      `printf ${hookScript(t.outside, 'madehook')} > tools/made/.git/hooks/pre-commit; chmod +x tools/made/.git/hooks/pre-commit`,
      `${G} clone -q ${up} vendor/deep/clone && ${G} -C vendor/deep/clone config alias.st "!${plant(t.outside, 'alias')}"`,
      `${G} init -q --bare mirrors/made.git && ${G} -C mirrors/made.git config core.pager "${plant(t.outside, 'bare')}"`,
    ].join('; '));
    assert.equal([...r.protectedPathViolations].sort(), [
      join(t.ws, 'mirrors', 'made.git', 'config'),
      join(t.ws, 'tools', 'made', '.git', 'config'),
      join(t.ws, 'tools', 'made', '.git', 'hooks', 'pre-commit'),
      join(t.ws, 'vendor', 'deep', 'clone', '.git', 'config'),
    ]);
    hostGit(join(t.ws, 'tools', 'made'), ['status']);
    hostGit(join(t.ws, 'tools', 'made'), ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGit(join(t.ws, 'vendor', 'deep', 'clone'), ['st']);
    hostGitTty(join(t.ws, 'mirrors', 'made.git'), ['-p', 'log']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a missing hooks directory of an untracked nested repository is not filled', async () => {
  const t = makeTree();
  try {
    const nested = hostRepo(join(t.ws, 'x', 'y'));
    // A workspace that is no repository itself: only the nested one exists.
    const r = await sh(t, `rm -rf x/y/.git/hooks 2>/dev/null; mkdir -p x/y/.git/hooks && printf ${hookScript(t.outside, 'filled')} > x/y/.git/hooks/pre-commit && chmod +x x/y/.git/hooks/pre-commit`);
    hostGit(nested, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
    assert.ok(r.exitCode !== 0 || r.protectedPathViolations.length > 0, JSON.stringify(r));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a bare repository inside the workspace keeps its config and hooks', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    hostGit(t.base, ['clone', '-q', '--bare', up, join(t.ws, 'mirrors', 'up.git')]);
    const bare = join(t.ws, 'mirrors', 'up.git');
    await sh(t, [
      `git -C mirrors/up.git config core.pager "${plant(t.outside, 'pager')}"`,
      `printf ${hookScript(t.outside, 'receive')} > mirrors/up.git/hooks/pre-receive; chmod +x mirrors/up.git/hooks/pre-receive`,
    ].join('; '));
    hostGitTty(bare, ['-p', 'log']);
    const work = join(t.base, 'work');
    hostGit(t.base, ['clone', '-q', bare, work]);
    hostGit(work, ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGit(work, ['push', '-q', 'origin', 'HEAD']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest(`attack: more repositories than the guard looks at (${MAX_GIT_DIRS}): the run is refused, nothing runs unguarded`, async () => {
  const t = makeTree();
  try {
    // git init is slow at this count: the minimal repository git recognises (HEAD, objects, refs).
    for (let i = 0; i <= MAX_GIT_DIRS; i++) {
      const gitDir = join(t.ws, 'many', `r${i}`, '.git');
      mkdirSync(join(gitDir, 'objects'), { recursive: true });
      mkdirSync(join(gitDir, 'refs'));
      writeFileSync(join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    }
    const last = join(t.ws, 'many', `r${MAX_GIT_DIRS}`);
    assert.match(hostGit(last, ['rev-parse', '--git-dir']).stdout, /^\.git$/m, 'host git takes it for a repository');
    const error = await rejection(sh(t, `git -C many/r${MAX_GIT_DIRS} config core.pager "${plant(t.outside, 'cap')}"`));
    assert.is(error.code, 'protected_path');
    assert.match(error.message, /refusing to run/);
    assert.match(error.message, new RegExp(`${MAX_GIT_DIRS} repositories`));
    for (let i = 0; i <= MAX_GIT_DIRS; i += 64) hostGitTty(join(t.ws, 'many', `r${i}`), ['-p', 'log']);
    hostGitTty(last, ['-p', 'log']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test.run();
