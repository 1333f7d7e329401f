// Attack: an existing repository's config is writable during a run (git remote add, branch -u and
// config user.name work inside), and the command adds one of the keys through which git runs a
// program on an everyday command: a pager (core.pager, pager.<cmd>), the add -p filter, the
// git:// proxy, the ssh and gpg signing programs, the ssh command, the external diff, clean,
// smudge and process filters, the credential helper, editors, fsmonitor, an alias, the
// submodule update command. Fix: once the sandbox is gone, a config whose program-running entries
// changed is put back byte for byte, reported and fails the run. Each case then runs the host git
// command that would run the planted program (on a terminal where git only runs it there), and a
// control plants the same key on the host to show that command does run it.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';
import { hostGit, hostGitTty, hostRepo, markers } from '../helpers/git-host.js';

interface Case {
  key: string;
  /** `shell`: a command line git runs with sh; `script`: git runs the value as a program path. */
  kind: 'shell' | 'script';
  /** The user's own configuration on the host before the run (git config arguments). */
  host?: string[][];
  /** What the command does in the workspace before setting the key. */
  prepare?: string;
  /** Host git commands that would run it; `tty` ones on a terminal. */
  trigger: Array<{ args: string[]; tty?: boolean; input?: string }>;
}

const CASES: Case[] = [
  { key: 'core.pager', kind: 'shell', trigger: [{ args: ['log'], tty: true }] },
  { key: 'pager.log', kind: 'shell', trigger: [{ args: ['log'], tty: true }] },
  { key: 'pager.status', kind: 'shell', trigger: [{ args: ['status'], tty: true }] },
  { key: 'interactive.diffFilter', kind: 'shell', prepare: 'echo b >> a', trigger: [{ args: ['add', '-p'], tty: true }] },
  { key: 'core.gitProxy', kind: 'script', trigger: [{ args: ['ls-remote', 'git://127.0.0.1/nothing'] }] },
  { key: 'gpg.program', kind: 'script', trigger: [{ args: ['commit', '-S', '--allow-empty', '-m', 'signed'] }] },
  { key: 'gpg.ssh.program', kind: 'script', host: [['gpg.format', 'ssh'], ['user.signingkey', '/dev/null'], ['commit.gpgsign', 'true']], trigger: [{ args: ['commit', '--allow-empty', '-m', 'signed'] }] },
  { key: 'core.sshCommand', kind: 'shell', trigger: [{ args: ['ls-remote', 'ssh://127.0.0.1/nothing'] }] },
  { key: 'diff.external', kind: 'shell', prepare: 'echo b >> a', trigger: [{ args: ['diff'] }] },
  { key: 'filter.x.clean', kind: 'shell', prepare: 'echo c > c', trigger: [{ args: ['add', 'c'] }] },
  { key: 'filter.x.smudge', kind: 'shell', prepare: 'rm a', trigger: [{ args: ['checkout', '--', 'a'] }] },
  { key: 'filter.x.process', kind: 'shell', prepare: 'echo c > c', trigger: [{ args: ['add', 'c'] }] },
  { key: 'credential.helper', kind: 'shell', trigger: [{ args: ['credential', 'fill'], input: 'protocol=https\nhost=example.com\n\n' }] },
  { key: 'core.editor', kind: 'shell', trigger: [{ args: ['commit', '--allow-empty'] }] },
  { key: 'core.fsmonitor', kind: 'shell', trigger: [{ args: ['status'] }] },
  { key: 'alias.st', kind: 'shell', trigger: [{ args: ['st'] }] },
];

/** The value that runs the marker script for this case (`!` for the keys that need it). */
function value(c: Case, t: Tree): string {
  const script = join(t.ws, 'evil.sh');
  if (c.kind === 'script') return script;
  return ['credential.helper', 'alias.st'].includes(c.key) ? `!${script}` : `${script};:`;
}

/** The command's part: a marker script in the workspace, the preparation, the key. */
function attack(c: Case, t: Tree): string {
  return [
    `printf '#!/bin/sh\\ntouch ${t.outside}/pwned-${c.key.replace(/[^a-z]/gi, '')}\\ncat >/dev/null 2>&1 </dev/null\\n' > evil.sh && chmod +x evil.sh`,
    c.prepare ?? ':',
    `git config '${c.key}' '${value(c, t)}' && echo set`,
  ].join(' && ');
}

/** A repository as a user has it: a tracked file under a filter attribute, the user's own config. */
function userRepo(c: Case, t: Tree): void {
  hostRepo(t.ws);
  writeFileSync(join(t.ws, 'a'), 'a\n');
  writeFileSync(join(t.ws, '.gitattributes'), c.key.startsWith('filter.') ? '* filter=x\n' : '');
  hostGit(t.ws, ['add', 'a', '.gitattributes']);
  hostGit(t.ws, ['commit', '-q', '-m', 'files']);
  for (const args of c.host ?? []) hostGit(t.ws, ['config', ...args]);
}

function trigger(c: Case, t: Tree): void {
  for (const { args, tty, input } of c.trigger) {
    if (tty) hostGitTty(t.ws, args);
    else hostGit(t.ws, args, input);
  }
}

sandboxTest('attack: program-running keys added to an existing repository\'s config do not run on the host', async () => {
  for (const c of CASES) {
    const t = makeTree();
    try {
      userRepo(c, t);
      const before = readFileSync(join(t.ws, '.git', 'config'));
      const r = await sh(t, attack(c, t));
      assert.match(r.stdout, /set/, `${c.key}: ${r.stderr}`);
      assert.equal(r.protectedPathViolations, [join(t.ws, '.git', 'config')], c.key);
      assert.is(r.exitCode, 1, c.key);
      assert.equal(readFileSync(join(t.ws, '.git', 'config')), before, c.key);
      trigger(c, t);
      assert.equal(markers(t.outside), [], `${c.key} ran on the host`);
    } finally {
      t.cleanup();
    }
  }
});

test('control: each key, planted on the host, runs on its trigger (the checks above can fail)', () => {
  for (const c of CASES) {
    const t = makeTree();
    try {
      userRepo(c, t);
      const planted = spawnSync('/bin/sh', ['-c', attack(c, t)], { cwd: t.ws, encoding: 'utf8' });
      assert.match(planted.stdout, /set/, `${c.key}: ${planted.stderr}`);
      trigger(c, t);
      assert.equal(markers(t.outside).length, 1, `${c.key} did not run`);
    } finally {
      t.cleanup();
    }
  }
});

test.run();
