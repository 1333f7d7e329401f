// Attack: a directory that git takes for a bare repository although it does not look like the
// usual one: git accepts `objects` and `refs` when access() lets it through them, so a link to a
// directory (or an executable file) will do. The repository scan only knew real directories, so
// such a git dir was neither guarded before a run nor checked after it, and a config the command
// left there (core.pager) ran when the user typed `git log` in it on the host. Fix: the scan
// reports a directory with HEAD, objects and refs of any kind as a git dir (and still walks into
// it, in case git does not take it for one): its config and hooks are guarded before the run and
// held to what git itself writes after it. Each test ends by running the real git on a terminal.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { hookScript, hostGit, hostGitTty, hostRepo, markers, plant } from '../helpers/git-host.js';

/** Shell that makes `dir` a git dir whose objects is a link and whose refs is an executable file. */
function lookalike(dir: string, config: string): string {
  return [
    `mkdir -p ${dir}-objects ${dir}`,
    `echo 'ref: refs/heads/main' > ${dir}/HEAD`,
    `ln -s ../${dir.split('/').pop() as string}-objects ${dir}/objects`,
    `printf '#!/bin/sh\\n' > ${dir}/refs && chmod +x ${dir}/refs`,
    `printf '${config}' > ${dir}/config`,
  ].join(' && ');
}

sandboxTest('attack: a git dir whose objects is a link and refs a file, made by the command: its pager and hooks do not run on the host', async () => {
  const t = makeTree();
  try {
    const pager = `[core]\\n\\tpager = "${plant(t.outside, 'made')}"\\n`;
    const r = await sh(t, [
      lookalike('deep/look', pager),
      // A second shape: refs a directory, objects a link; with a hook.
      'mkdir -p other-objects other/refs other/hooks && echo "ref: refs/heads/main" > other/HEAD && ln -s ../other-objects other/objects',
      `printf '[core]\\n\\tpager = "${plant(t.outside, 'other')}"\\n' > other/config`,
      `printf ${hookScript(t.outside, 'hook')} > other/hooks/pre-receive && chmod +x other/hooks/pre-receive`,
      'echo made',
    ].join(' && '));
    assert.match(r.stdout, /made/, r.stderr);
    assert.equal([...r.protectedPathViolations].sort(), [join(t.ws, 'deep', 'look', 'config'), join(t.ws, 'other', 'config'), join(t.ws, 'other', 'hooks', 'pre-receive')]);
    assert.is(r.exitCode, 1);
    for (const dir of [join(t.ws, 'deep', 'look'), join(t.ws, 'other')]) {
      assert.match(hostGit(dir, ['rev-parse', '--git-dir']).stdout, /^\.$/m, `host git takes ${dir} for a git dir`);
      hostGitTty(dir, ['-p', 'branch', '-a']);
      hostGitTty(dir, ['log']);
    }
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: an existing git dir whose objects is a link keeps its config and hooks through a run', async () => {
  const t = makeTree();
  try {
    const dir = join(t.ws, 'mirror');
    mkdirSync(join(t.ws, 'store', 'objects'), { recursive: true });
    mkdirSync(join(dir, 'refs', 'heads'), { recursive: true });
    mkdirSync(join(dir, 'hooks'));
    writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    symlinkSync('../store/objects', join(dir, 'objects'));
    writeFileSync(join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    assert.match(hostGit(dir, ['rev-parse', '--git-dir']).stdout, /^\.$/m);
    const r = await sh(t, [
      `git -C mirror config core.pager "${plant(t.outside, 'pager')}"`,
      `printf ${hookScript(t.outside, 'hook')} > mirror/hooks/pre-receive; chmod +x mirror/hooks/pre-receive`,
    ].join('; '));
    assert.ok(r.protectedPathViolations.includes(join(dir, 'config')), JSON.stringify(r.protectedPathViolations));
    hostGitTty(dir, ['-p', 'branch', '-a']);
    const up = hostRepo(join(t.base, 'up'));
    hostGit(up, ['push', '-q', dir, 'HEAD:refs/heads/main']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test('control: host git on a terminal runs the pager of such a git dir (the checks above can fail)', () => {
  const t = makeTree();
  try {
    const dir = join(t.ws, 'look');
    mkdirSync(join(t.ws, 'look-objects'));
    mkdirSync(join(dir, 'refs'), { recursive: true });
    writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
    symlinkSync('../look-objects', join(dir, 'objects'));
    writeFileSync(join(dir, 'config'), `[core]\n\tpager = "${plant(t.outside, 'control')}"\n`);
    hostGitTty(dir, ['-p', 'branch', '-a']);
    assert.equal(markers(t.outside), ['pwned-control']);
  } finally {
    t.cleanup();
  }
});

test.run();
