// Attack: a sandboxed command plants code that the user's next git command on the host runs
// (a hook, core.fsmonitor, a redirected commondir, a new repository host git enters). Fix: before
// the run every git file through which host git runs code is read-only or noted; after the run,
// once the sandbox is gone, what the command created there is removed, new repositories keep only
// what git itself writes (safe config keys, sample hooks), and the run fails with the violations.
// Each test runs the attack in a real sandbox, then runs the real git on the host: planted code
// would leave a marker outside every write root, which only the host could write.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { hookScript, hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';

const G = 'git -c user.email=t@example.com -c user.name=t -c protocol.file.allow=always';

sandboxTest('attack: git init with core.fsmonitor and a hook in a workspace without .git: host git runs neither, the repository stays', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, [
      `${G} init -q .`,
      `${G} config core.fsmonitor "${plant(t.outside, 'fsmonitor')}"`,
      `printf ${hookScript(t.outside, 'hook')} > .git/hooks/post-commit && chmod +x .git/hooks/post-commit`,
      `echo a > a && ${G} add a && ${G} commit -qm one && echo committed`,
    ].join('; '));
    assert.match(r.stdout, /committed/);
    assert.ok(r.protectedPathViolations.includes(join(t.ws, '.git', 'config')), JSON.stringify(r.protectedPathViolations));
    assert.ok(r.protectedPathViolations.includes(join(t.ws, '.git', 'hooks', 'post-commit')));
    assert.is(r.exitCode, 1);
    const denied = r.denials.filter((d) => d.capability.kind === 'protected_metadata');
    assert.equal(denied.map((d) => d.capability.scope), r.protectedPathViolations);
    assert.match(denied.find((d) => d.capability.scope === join(t.ws, '.git', 'config'))?.reason ?? '', /core\.fsmonitor/);
    hostGit(t.ws, ['status']);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'host']);
    assert.equal(markers(t.outside), []);
    assert.match(hostGit(t.ws, ['log', '--oneline']).stdout, /one/, 'the repository itself is kept');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: config and hooks of a submodule git dir two levels down (.git/modules/libs/inner) stay read-only', async () => {
  const t = makeTree();
  try {
    const up = hostRepo(join(t.base, 'up'));
    hostRepo(t.ws);
    hostGit(t.ws, ['submodule', 'add', '-q', up, 'libs/inner']);
    hostGit(t.ws, ['commit', '-qm', 'sub']);
    const mod = '.git/modules/libs/inner';
    await sh(t, [
      `git config -f ${mod}/config core.fsmonitor "${plant(t.outside, 'fsmonitor')}"`,
      `printf ${hookScript(t.outside, 'hook')} > ${mod}/hooks/pre-commit; chmod +x ${mod}/hooks/pre-commit`,
    ].join('; '));
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
    // Moving the guarded git dir away to put a changed copy in its place fails too.
    await sh(t, `cp -a ${mod} .git/modules/copy; git config -f .git/modules/copy/config core.fsmonitor "${plant(t.outside, 'copy')}"; mv ${mod} .git/modules/old; mv .git/modules/copy ${mod}`);
    hostGit(t.ws, ['status']);
    hostGit(join(t.ws, 'libs', 'inner'), ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a linked worktree outside the workspace cannot be redirected through its admin dir (commondir, gitdir, config)', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const wt = join(t.base, 'wt');
    hostGit(t.ws, ['worktree', 'add', '-q', wt]);
    const admin = '.git/worktrees/wt';
    const r = await sh(t, [
      `git init -q --bare evil.git; git -C evil.git config core.fsmonitor "${plant(t.outside, 'common')}"`,
      `printf ${hookScript(t.outside, 'hook')} > evil.git/hooks/pre-commit; chmod +x evil.git/hooks/pre-commit`,
      `echo "$PWD/evil.git" > ${admin}/commondir; rm -f ${admin}/commondir ${admin}/gitdir`,
      `git config -f ${admin}/config core.fsmonitor "${plant(t.outside, 'admin')}"`,
      `mkdir -p ${admin}/hooks; printf ${hookScript(t.outside, 'adminhook')} > ${admin}/hooks/pre-commit; chmod +x ${admin}/hooks/pre-commit`,
    ].join('; '));
    assert.ok(r.protectedPathViolations.includes(join(t.ws, admin, 'config')), JSON.stringify(r.protectedPathViolations));
    hostGit(wt, ['status']);
    hostGit(wt, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
    assert.is(readFileSync(join(t.ws, admin, 'commondir'), 'utf8'), '../..\n');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: config.worktree is not kept when extensions.worktreeConfig is on (main and linked worktree)', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    hostGit(t.ws, ['config', 'extensions.worktreeConfig', 'true']);
    const wt = join(t.base, 'wt');
    hostGit(t.ws, ['worktree', 'add', '-q', wt]);
    const r = await sh(t, [
      `git config --worktree core.fsmonitor "${plant(t.outside, 'main')}"`,
      `git config -f .git/worktrees/wt/config.worktree core.fsmonitor "${plant(t.outside, 'linked')}"`,
    ].join('; '));
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, '.git', 'config.worktree'), join(t.ws, '.git', 'worktrees', 'wt', 'config.worktree')]);
    hostGit(t.ws, ['status']);
    hostGit(wt, ['status']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository created in a subdirectory and added as a gitlink is not entered with its fsmonitor', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const r = await sh(t, [
      `${G} init -q sub && ${G} -C sub config core.fsmonitor "${plant(t.outside, 'gitlink')}"`,
      `${G} -C sub commit -q --allow-empty -m x && ${G} add sub && echo added`,
    ].join('; '));
    assert.match(r.stdout, /added/);
    assert.ok(r.protectedPathViolations.includes(join(t.ws, 'sub', '.git', 'config')), JSON.stringify(r.protectedPathViolations));
    hostGit(t.ws, ['status']);
    hostGit(t.ws, ['commit', '-q', '-m', 'with gitlink']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a workspace inside a repository (repo/pkg): a new pkg/.git does not make host git run anything', async () => {
  const t = makeTree();
  try {
    const repo = hostRepo(join(t.base, 'repo'));
    const pkg = join(repo, 'pkg');
    mkdirSync(pkg);
    const r = await sh({ ...t, ws: pkg }, [
      `${G} init -q . && ${G} config core.fsmonitor "${plant(t.outside, 'fsmonitor')}"`,
      `printf ${hookScript(t.outside, 'hook')} > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`,
    ].join('; '));
    assert.ok(r.protectedPathViolations.length >= 2, JSON.stringify(r.protectedPathViolations));
    hostGit(pkg, ['status']);
    hostGit(pkg, ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGit(repo, ['status']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: core.hooksPath into the workspace (husky .husky/_): the hooks and what they run stay as they were', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    mkdirSync(join(t.ws, '.husky', '_'), { recursive: true });
    writeFileSync(join(t.ws, '.husky', 'pre-commit'), 'true\n');
    writeFileSync(join(t.ws, '.husky', '_', 'pre-commit'), '#!/bin/sh\nsh "$(dirname "$0")/../pre-commit"\n');
    chmodSync(join(t.ws, '.husky', '_', 'pre-commit'), 0o755);
    hostGit(t.ws, ['config', 'core.hooksPath', '.husky/_']);
    await sh(t, [
      `echo "touch ${join(t.outside, 'pwned-husky')}" >> .husky/pre-commit`,
      `echo "touch ${join(t.outside, 'pwned-stub')}" >> .husky/_/pre-commit`,
      `rm -rf .husky/_; mkdir -p .husky/_; printf ${hookScript(t.outside, 'new')} > .husky/_/pre-commit; chmod +x .husky/_/pre-commit`,
    ].join('; '));
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
    assert.is(readFileSync(join(t.ws, '.husky', 'pre-commit'), 'utf8'), 'true\n');
    // A hooksPath whose target is missing (a fresh clone before npm install): what appears is removed.
    rmSync(join(t.ws, '.husky'), { recursive: true });
    const r = await sh(t, `mkdir -p .husky/_ && printf ${hookScript(t.outside, 'missing')} > .husky/_/pre-commit && chmod +x .husky/_/pre-commit`);
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, '.husky'), join(t.ws, '.husky', '_')]);
    // The denial names the path and what to do instead (hooks are installed on the host).
    const denial = r.denials.find((d) => d.capability.kind === 'protected_metadata' && d.capability.scope === join(t.ws, '.husky', '_'));
    assert.match(denial?.reason ?? '', new RegExp(`${join(t.ws, '.husky', '_')}: new git hooks are never kept`));
    assert.match(denial?.reason ?? '', /npx husky/);
    assert.is(r.exitCode, 1);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'y']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a dangling .git/hooks symlink is neither filled nor replaced by a real hooks directory', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    rmSync(join(t.ws, '.git', 'hooks'), { recursive: true });
    symlinkSync('../githooks', join(t.ws, '.git', 'hooks'));
    const fill = await sh(t, `mkdir githooks && printf ${hookScript(t.outside, 'fill')} > githooks/pre-commit && chmod +x githooks/pre-commit`);
    assert.equal(fill.protectedPathViolations, [join(t.ws, 'githooks')]);
    const replace = await sh(t, `rm .git/hooks && mkdir .git/hooks && printf ${hookScript(t.outside, 'replace')} > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`);
    assert.equal(replace.protectedPathViolations, [join(t.ws, '.git', 'hooks')]);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a dangling .zero or .agents symlink replaced by a real directory is undone', async () => {
  const t = makeTree();
  try {
    symlinkSync('zero-config', join(t.ws, '.zero'));
    symlinkSync('agents-dir', join(t.ws, '.agents'));
    const r = await sh(t, 'rm .zero .agents && mkdir .zero .agents && echo evil > .zero/config.json && echo evil > .agents/rules.md');
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, '.agents'), join(t.ws, '.zero')]);
    assert.not.ok(existsSync(join(t.ws, '.zero', 'config.json')));
    assert.not.ok(existsSync(join(t.ws, '.agents', 'rules.md')));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a gitlink whose .git file leads through a symlinked modules/ entry to a planted git dir', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const r = await sh(t, [
      `${G} init -q evil && ${G} -C evil commit -q --allow-empty -m x && ${G} -C evil config core.fsmonitor "${plant(t.outside, 'linked')}"`,
      'mkdir -p .git/modules sub && ln -s ../../evil/.git .git/modules/sub && echo "gitdir: ../.git/modules/sub" > sub/.git',
      `${G} add sub && echo added`,
    ].join('; '));
    assert.match(r.stdout, /added/, r.stderr);
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
    assert.ok(r.protectedPathViolations.length > 0);
  } finally {
    t.cleanup();
  }
});

/**
 * Config keys that make git run a program, each with a host git command that would run it (or,
 * where running it needs a terminal, a server or a signing key, one that shows the key is gone).
 */
const KEYS: Array<{ key: string; setup?: string | ((outside: string) => string); value?: (marker: string, ws: string) => string; trigger: string[][]; input?: string }> = [
  { key: 'core.fsmonitor', trigger: [['status']] },
  { key: 'core.sshCommand', trigger: [['ls-remote', 'ssh://127.0.0.1/nothing']] },
  { key: 'core.pager', trigger: [['var', 'GIT_PAGER']] },
  { key: 'core.editor', trigger: [['var', 'GIT_EDITOR'], ['commit', '--allow-empty']] },
  { key: 'diff.external', setup: 'echo b >> a', trigger: [['diff']] },
  { key: 'filter.x.clean', setup: 'echo "* filter=x" > .gitattributes; echo c > c', trigger: [['add', 'c']] },
  { key: 'diff.x.textconv', setup: 'echo "* diff=x" > .gitattributes; echo b >> a', trigger: [['diff']] },
  { key: 'uploadpack.packObjectsHook', trigger: [['clone', '-q', '--no-local', '.', 'clone-dest']] },
  { key: 'alias.st', value: (m) => `!${m}`, trigger: [['st']] },
  { key: 'credential.helper', value: (m) => `!${m}`, trigger: [['credential', 'fill']], input: 'protocol=https\nhost=example.com\n\n' },
  { key: 'gpg.program', setup: 'git config commit.gpgsign true', trigger: [['commit', '--allow-empty', '-m', 'signed']] },
  { key: 'core.hooksPath', setup: 'mkdir -p evilhooks', value: (_m, ws) => `${ws}/evilhooks`, trigger: [['commit', '--allow-empty', '-m', 'x']] },
  { key: 'remote.origin.uploadpack', setup: 'git remote add origin "$PWD"', trigger: [['fetch', '-q', 'origin']] },
  { key: 'include.path', value: (_m, ws) => `${ws}/inc.gitconfig`, trigger: [['status']] },
  { key: 'includeIf.gitdir:/.path', value: (_m, ws) => `${ws}/inc.gitconfig`, trigger: [['status']] },
  { key: 'sequence.editor', trigger: [['rebase', '-q', '-i', '--root']] },
  { key: 'pager.log', trigger: [['config', '--list', '--local']] },
  { key: 'interactive.diffFilter', trigger: [['config', '--list', '--local']] },
  { key: 'diff.x.command', setup: 'echo "* diff=x" > .gitattributes; echo b >> a', trigger: [['diff']] },
  { key: 'core.gitProxy', trigger: [['config', '--list', '--local']] },
  { key: 'remote.origin.receivepack', setup: 'git remote add origin "$PWD"', trigger: [['push', '-q', 'origin', 'HEAD:refs/heads/other']] },
  // The ext:: transport runs its URL as a command once the repository's config allows it.
  { key: 'protocol.ext.allow', value: () => 'always', setup: (outside) => `git remote add origin "ext::touch ${outside}/pwned-ext"`, trigger: [['fetch', '-q', 'origin']] },
  { key: 'gpg.ssh.program', trigger: [['config', '--list', '--local']] },
  { key: 'submodule.x.update', value: (m) => `!${m}`, trigger: [['config', '--list', '--local']] },
  { key: 'core.alternateRefsCommand', trigger: [['config', '--list', '--local']] },
];

sandboxTest('attack: config keys that run programs are not kept in a repository the command creates', async () => {
  for (const { key, setup, value, trigger, input } of KEYS) {
    const t = makeTree();
    try {
      const marker = plant(t.outside, key.replace(/[^a-z]/gi, ''));
      const v = value === undefined ? marker : value(marker, t.ws);
      const r = await sh(t, [
        `${G} init -q . && echo a > a && ${G} add a && ${G} commit -qm one`,
        // What the include and the hooks path would bring in: a fsmonitor and a hook.
        `printf '[core]\\n\\tfsmonitor = "${marker}"\\n' > inc.gitconfig`,
        `mkdir -p evilhooks && printf ${hookScript(t.outside, 'hookspath')} > evilhooks/pre-commit && chmod +x evilhooks/pre-commit`,
        (typeof setup === 'function' ? setup(t.outside) : setup) ?? ':',
        `git config '${key}' '${v}' && echo set`,
      ].join('; '));
      assert.match(r.stdout, /set/, `${key}: ${r.stderr}`);
      assert.ok(r.protectedPathViolations.includes(join(t.ws, '.git', 'config')), `${key}: ${JSON.stringify(r.protectedPathViolations)}`);
      for (const args of trigger) {
        const out = hostGit(t.ws, args, input);
        assert.not.match(out.stdout, /pwned/, `${key}: git ${args.join(' ')} still sees the planted value`);
      }
      assert.equal(markers(t.outside), [], `${key} ran on the host`);
    } finally {
      t.cleanup();
    }
  }
});

sandboxTest('attack: objects/info/alternates cannot be added to an existing repository', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const other = hostRepo(join(t.base, 'other'));
    const r = await sh(t, `mkdir -p .git/objects/info && echo ${other}/.git/objects > .git/objects/info/alternates`);
    assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'objects', 'info', 'alternates')]);
    assert.not.ok(existsSync(join(t.ws, '.git', 'objects', 'info', 'alternates')));
  } finally {
    t.cleanup();
  }
});

test('the marker helpers see a planted marker (the checks above can fail)', () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    writeFileSync(join(t.ws, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\n${plant(t.outside, 'control')}\n`);
    chmodSync(join(t.ws, '.git', 'hooks', 'pre-commit'), 0o755);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), ['pwned-control']);
  } finally {
    t.cleanup();
  }
});

test.run();
