// The host's /tmp is not writable (the command gets a private one), and the .git/hooks and
// .git/config of a repository in a write root cannot be changed while git add/commit work.
// Setting up the sandbox must leave nothing behind on the host.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = statSync(path);
      out.push(`${rel}${name} ${st.mode.toString(8)} ${st.isDirectory() ? '' : st.size}`);
      if (st.isDirectory()) walk(path, `${rel}${name}/`);
    }
  };
  walk(dir, '');
  return out;
}

sandboxTest("the host's /tmp is not writable; a private /tmp and TMPDIR work inside", async () => {
  const t = makeTree();
  const marker = `zs-host-tmp-${process.pid}-${Date.now()}`;
  const hostFile = join(tmpdir(), `${marker}.host`);
  writeFileSync(hostFile, 'host');
  try {
    const r = await sh(t, `echo inside > /tmp/${marker}; cat /tmp/${marker}; echo "$TMPDIR"; ls /tmp; test -e ${hostFile} && echo SEES-HOST-TMP; echo evil > ${hostFile}; mktemp -d`);
    assert.match(r.stdout, /^inside\n\/tmp\n/);
    assert.not.match(r.stdout, /SEES-HOST-TMP/);
    assert.match(r.stdout, /\/tmp\/tmp\./, 'mktemp works inside');
    assert.not.ok(existsSync(join(tmpdir(), marker)), 'the write to /tmp stayed private');
    assert.is(readFileSync(hostFile, 'utf8'), 'host');
  } finally {
    rmSync(hostFile, { force: true });
    t.cleanup();
  }
});

sandboxTest('a workspace under the host /tmp stays visible and writable inside the private /tmp', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'zs-ws-in-tmp-'));
  try {
    const r = await sh({ base: ws, ws, outside: ws, cleanup: () => {} }, 'pwd; echo hi > f; cat f; ls /tmp');
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^${ws}\\nhi\\n`));
    assert.is(readFileSync(join(ws, 'f'), 'utf8'), 'hi\n');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
}

sandboxTest('.git/hooks and .git/config are read-only while git add and commit work; nothing is left on the host', async () => {
  const t = makeTree();
  try {
    git(t.ws, 'init', '-q');
    writeFileSync(join(t.ws, 'a.txt'), 'a');
    git(t.ws, 'add', 'a.txt');
    git(t.ws, 'commit', '-qm', 'first');
    const config = readFileSync(join(t.ws, '.git', 'config'), 'utf8');
    const before = listTree(join(t.ws, '.git', 'hooks'));
    const rootBefore = readdirSync(t.ws).sort();
    const r = await sh(t, [
      'echo "#!/bin/sh" > .git/hooks/pre-commit',
      'chmod +x .git/hooks/pre-commit',
      'echo "[core] hooksPath = /tmp/evil" >> .git/config',
      'git config core.fsmonitor "evil"',
      'rm -rf .git/hooks',
      'mv .git/config .git/config.bak',
      'echo b > b.txt',
      'git -c user.email=t@example.com -c user.name=t add b.txt',
      'git -c user.email=t@example.com -c user.name=t commit -qm second && echo COMMITTED',
    ].join('; '));
    assert.match(r.stdout, /COMMITTED/, r.stderr);
    assert.is(readFileSync(join(t.ws, '.git', 'config'), 'utf8'), config);
    assert.equal(listTree(join(t.ws, '.git', 'hooks')), before);
    assert.match(git(t.ws, 'log', '--oneline'), /second/);
    assert.equal(readdirSync(t.ws).sort(), [...rootBefore, 'b.txt'].sort(), 'no placeholder files or mount points left behind');
  } finally {
    t.cleanup();
  }
});

sandboxTest('an existing .zero directory in the workspace cannot be changed', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.ws, 'keep'), '');
    execFileSync('mkdir', ['-p', join(t.ws, '.zero')]);
    writeFileSync(join(t.ws, '.zero', 'config.json'), '{}');
    await sh(t, 'echo \'{"sandbox":{"network":"allow"}}\' > .zero/config.json; rm -rf .zero; touch .zero/new');
    assert.is(readFileSync(join(t.ws, '.zero', 'config.json'), 'utf8'), '{}');
    assert.equal(readdirSync(join(t.ws, '.zero')), ['config.json']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: filling a dangling .zero symlink planted on the host (e.g. by a checkout) is undone and reported', async () => {
  const t = makeTree();
  try {
    // The link is the host's (a cloned repository can carry one); its target does not exist yet.
    symlinkSync('zero-config', join(t.ws, '.zero'));
    symlinkSync('.zero-chain', join(t.ws, '.agents'));
    symlinkSync('nested/agents-dir', join(t.ws, '.zero-chain'));
    const r = await sh(t, 'mkdir -p zero-config nested/agents-dir; echo evil > .zero/config.json; echo evil > .agents/rules.md; echo ok');
    assert.match(r.stdout, /ok/);
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, 'nested', 'agents-dir'), join(t.ws, 'zero-config')].sort());
    assert.not.ok(existsSync(join(t.ws, '.zero', 'config.json')), 'nothing readable through .zero');
    assert.not.ok(existsSync(join(t.ws, '.agents', 'rules.md')), 'nothing readable through .agents');
    // The host's own links are left as they were.
    assert.is(readlinkSync(join(t.ws, '.zero')), 'zero-config');
    assert.is(readlinkSync(join(t.ws, '.agents')), '.zero-chain');
  } finally {
    t.cleanup();
  }
});

sandboxTest('creating .zero, .agents or a missing .git/hooks is undone and reported; nothing persists', async () => {
  const t = makeTree();
  try {
    git(t.ws, 'init', '-q');
    execFileSync('rm', ['-rf', join(t.ws, '.git', 'hooks')]);
    const r = await sh(t, 'mkdir -p .zero .agents .git/hooks; echo evil > .zero/config.json; echo "#!/bin/sh" > .git/hooks/pre-commit; echo ok');
    assert.match(r.stdout, /ok/);
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, '.agents'), join(t.ws, '.git', 'hooks'), join(t.ws, '.zero')].sort());
    assert.not.ok(existsSync(join(t.ws, '.zero')));
    assert.not.ok(existsSync(join(t.ws, '.agents')));
    assert.not.ok(existsSync(join(t.ws, '.git', 'hooks')));
    const fresh = makeTree();
    try {
      // A repository the command creates is kept as git writes it, but a hook in it never is:
      // host git would run it at the next commit in the workspace.
      const created = await sh(fresh, 'git init -q && mkdir -p .git/hooks && echo "#!/bin/sh" > .git/hooks/post-commit && echo made');
      assert.match(created.stdout, /made/);
      assert.equal(created.protectedPathViolations, [join(fresh.ws, '.git', 'hooks', 'post-commit')]);
      assert.is(created.exitCode, 1, 'a run that left a hook behind fails');
      assert.not.ok(existsSync(join(fresh.ws, '.git', 'hooks', 'post-commit')));
      assert.ok(existsSync(join(fresh.ws, '.git', 'HEAD')), 'the repository itself stays');
    } finally {
      fresh.cleanup();
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('in a linked git worktree the real hooks and config stay read-only, and commits work', async () => {
  const t = makeTree();
  try {
    const main = join(t.ws, 'main');
    execFileSync('mkdir', ['-p', main]);
    git(main, 'init', '-q');
    writeFileSync(join(main, 'a.txt'), 'a');
    git(main, 'add', 'a.txt');
    git(main, 'commit', '-qm', 'first');
    git(main, 'worktree', 'add', '-q', join(t.ws, 'wt'), '-b', 'feature');
    const config = readFileSync(join(main, '.git', 'config'), 'utf8');
    const wt = { ...t, ws: join(t.ws, 'wt') };
    const swap = await sh(wt, 'mv .git .git-file; rm -f .git; mkdir -p .git/hooks; echo "#!/bin/sh" > .git/hooks/pre-commit; echo tried', { allowWrite: [main] });
    assert.match(swap.stdout, /tried/);
    assert.match(readFileSync(join(t.ws, 'wt', '.git'), 'utf8'), /^gitdir: /, 'the worktree .git file cannot be replaced by a directory');
    const r = await sh(wt, [
      'echo "#!/bin/sh" > ../main/.git/hooks/pre-commit',
      'echo "[core] hooksPath = /tmp/evil" >> ../main/.git/config',
      'echo b > b.txt',
      'git -c user.email=t@example.com -c user.name=t add b.txt',
      'git -c user.email=t@example.com -c user.name=t commit -qm in-worktree && echo COMMITTED',
    ].join('; '), { allowWrite: [main] });
    assert.match(r.stdout, /COMMITTED/, r.stderr);
    assert.not.ok(existsSync(join(main, '.git', 'hooks', 'pre-commit')));
    assert.is(readFileSync(join(main, '.git', 'config'), 'utf8'), config);
  } finally {
    t.cleanup();
  }
});

// Attack: the read-only .git/hooks and .git/config are mounts inside .git; renaming .git away
// carries them along and leaves room for `git init` with hooks of the command's choosing, which
// the user's own git would later run on the host. Fix: each existing git dir is pinned (a mount
// point cannot be renamed or removed).
sandboxTest('renaming .git away to plant a fresh repository with hooks is blocked', async () => {
  const t = makeTree();
  try {
    git(t.ws, 'init', '-q');
    git(t.ws, 'commit', '-q', '--allow-empty', '-m', 'first');
    const r = await sh(t, [
      'mv .git .git-old; echo "mv=$?"',
      'rmdir .git 2>/dev/null; echo "rmdir=$?"',
      'git init -q 2>/dev/null; mkdir -p .git/hooks; printf "#!/bin/sh\\necho PWNED\\n" > .git/hooks/pre-commit 2>/dev/null; echo done',
    ].join('; '));
    assert.match(r.stdout, /mv=1/);
    assert.match(r.stdout, /rmdir=1/);
    assert.match(r.stderr, /Device or resource busy/);
    assert.equal(readdirSync(t.ws).sort(), ['.git']);
    assert.not.ok(existsSync(join(t.ws, '.git', 'hooks', 'pre-commit')));
    assert.match(git(t.ws, 'log', '--oneline'), /first/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a repository one level down in the workspace has its hooks and config protected too', async () => {
  const t = makeTree();
  try {
    const sub = join(t.ws, 'service');
    execFileSync('mkdir', ['-p', sub]);
    git(sub, 'init', '-q');
    const config = readFileSync(join(sub, '.git', 'config'), 'utf8');
    const r = await sh(t, 'echo "#!/bin/sh" > service/.git/hooks/pre-commit; echo "[core] hooksPath = /tmp/x" >> service/.git/config; mv service/.git service/.git-old; echo tried');
    assert.match(r.stdout, /tried/);
    assert.not.ok(existsSync(join(sub, '.git', 'hooks', 'pre-commit')));
    assert.is(readFileSync(join(sub, '.git', 'config'), 'utf8'), config);
    assert.ok(existsSync(join(sub, '.git')));
  } finally {
    t.cleanup();
  }
});

// Attack: .git/commondir redirects git to another directory's config and hooks. It is not there
// in an ordinary repository, so it cannot be made read-only without creating it: one planted by
// the command is removed when it ends and reported.
sandboxTest('a commondir planted in .git to redirect config and hooks is removed and reported', async () => {
  const t = makeTree();
  try {
    git(t.ws, 'init', '-q');
    const r = await sh(t, `mkdir -p ${t.ws}/evil/hooks; echo ${t.ws}/evil > .git/commondir; echo planted`);
    assert.match(r.stdout, /planted/);
    assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'commondir')]);
    assert.not.ok(existsSync(join(t.ws, '.git', 'commondir')));
  } finally {
    t.cleanup();
  }
});

test.run();
