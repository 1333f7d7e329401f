// Attack: runs of one policy with a thousand nested write roots (`packages/*/dist`) keep, across
// runs, what the looks at each root found (its listing, its stamp, the names missing at its top)
// while inotify reports no change there (native/linux/watched_looks.cc), and answer the next runs'
// looks from that memo, before and after the command. The command then changes exactly that state
// after a few runs warmed the memo: it plants a repository, a hook, a config, `.zero` or `.agents`
// at the top of some of the roots, directly, through a hard link made from another write root,
// under an ancestor it renamed, or after flooding the inotify queue with more events than it holds.
// Each must be removed and reported after the run, as without the memo; what the host makes
// between runs must be read-only in the next one. Each test runs real sandboxes and then looks at
// the host's files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';
import { watchedLookCounts } from '../../lib/sandbox/beneath.js';
import { rootListingCounts } from '../../lib/sandbox/root-walk.js';
import { test } from 'uvu';

const ROOTS = 1000;
const HOOK = 'printf "#!/bin/sh\\necho pwned\\n" >';

/** ROOTS nested write roots, after two runs of them (the second answered from the memo). */
async function warmRoots(t: Tree): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < ROOTS; i++) {
    const dist = join(t.ws, 'packages', `p${i}`, 'dist');
    mkdirSync(dist, { recursive: true });
    out.push(dist);
  }
  for (let run = 0; run < 2; run++) {
    const answered = watchedLookCounts.answered;
    const listed = rootListingCounts.answered;
    const warm = await sh(t, 'true', { allowWrite: out });
    assert.is(warm.exitCode, 0, warm.stderr);
    if (process.platform === 'linux' && run === 1) {
      assert.ok(watchedLookCounts.answered - answered >= ROOTS, 'the looks at the roots were answered from the memo');
      assert.ok(rootListingCounts.answered - listed >= ROOTS, 'the listings of the roots were answered from the memo');
    }
  }
  return out;
}

const dist = (t: Tree, i: number) => join(t.ws, 'packages', `p${i}`, 'dist');

function violated(r: { protectedPathViolations: string[] }, path: string): void {
  assert.ok(r.protectedPathViolations.some((v) => v === path || v.startsWith(`${path}/`)), `${path} not in:\n${r.protectedPathViolations.join('\n')}`);
}

sandboxTest('attack: a repository, a hook, a config, .zero and .agents planted at the top of warmed nested roots are removed after the run', async () => {
  const t = makeTree();
  try {
    const roots = await warmRoots(t);
    const r = await sh(t, [
      `mkdir -p packages/p500/dist/.git/hooks && ${HOOK} packages/p500/dist/.git/hooks/pre-commit`,
      'mkdir packages/p501/dist/.git && printf "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n" > packages/p501/dist/.git/config',
      'mkdir packages/p502/dist/.zero && echo x > packages/p502/dist/.zero/config.json',
      'mkdir -p packages/p503/dist/.agents/skills && echo x > packages/p503/dist/.agents/skills/evil.md',
      'echo planted',
    ].join(' && '), { allowWrite: roots });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(dist(t, 500), '.git', 'hooks', 'pre-commit')), 'the hook is removed');
    assert.not.ok(existsSync(join(dist(t, 501), '.git', 'config')), 'the config is removed');
    assert.not.ok(existsSync(join(dist(t, 502), '.zero')), '.zero is removed');
    assert.not.ok(existsSync(join(dist(t, 503), '.agents')), '.agents is removed');
    violated(r, join(dist(t, 502), '.zero'));
    violated(r, join(dist(t, 503), '.agents'));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a config and .zero planted in warmed nested roots as hard links of a file made in another write root are removed', async () => {
  const t = makeTree();
  try {
    const roots = await warmRoots(t);
    const r = await sh(t, [
      'printf "[core]\\n\\thooksPath = /tmp\\n" > packages/p0/dist/cfg',
      'mkdir packages/p600/dist/.git && ln packages/p0/dist/cfg packages/p600/dist/.git/config',
      'ln packages/p0/dist/cfg packages/p601/dist/.zero',
      'ln packages/p0/dist/cfg packages/p602/dist/.agents',
      'echo planted',
    ].join(' && '), { allowWrite: roots });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(dist(t, 600), '.git', 'config')), 'the linked config is removed');
    assert.not.ok(existsSync(join(dist(t, 601), '.zero')), 'the linked .zero is removed');
    assert.not.ok(existsSync(join(dist(t, 602), '.agents')), 'the linked .agents is removed');
    violated(r, join(dist(t, 601), '.zero'));
    violated(r, join(dist(t, 602), '.agents'));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository and .zero planted under a renamed ancestor of warmed nested roots are removed', async () => {
  const t = makeTree();
  try {
    const roots = await warmRoots(t);
    const r = await sh(t, [
      // The ancestor moves away with its root; a fresh one in its place holds what is planted.
      `mv packages/p700 packages/p700-old && mkdir -p packages/p700/dist/.git/hooks && ${HOOK} packages/p700/dist/.git/hooks/pre-commit`,
      'mv packages/p701 packages/p701-old && mkdir -p packages/p701/dist/.zero && echo x > packages/p701/dist/.zero/config.json',
      'echo planted',
    ].join(' && '), { allowWrite: roots });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(dist(t, 700), '.git', 'hooks', 'pre-commit')), 'the hook is removed');
    assert.not.ok(existsSync(join(dist(t, 701), '.zero')), '.zero is removed');
    violated(r, join(dist(t, 701), '.zero'));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: .zero and a hook planted after the command overflowed the inotify queue are removed', async () => {
  const t = makeTree();
  try {
    const roots = await warmRoots(t);
    const looked = watchedLookCounts.looked;
    const r = await sh(t, [
      // More entries made in a watched root than the queue holds (16384 events by default): the
      // events after them, the plants included, are lost.
      'i=0; while [ $i -lt 20000 ]; do : > packages/p800/dist/f$i; i=$((i+1)); done',
      'mkdir packages/p801/dist/.zero && echo x > packages/p801/dist/.zero/config.json',
      `mkdir -p packages/p802/dist/.git/hooks && ${HOOK} packages/p802/dist/.git/hooks/pre-commit`,
      'echo planted',
    ].join(' && '), { allowWrite: roots });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(dist(t, 801), '.zero')), '.zero is removed');
    assert.not.ok(existsSync(join(dist(t, 802), '.git', 'hooks', 'pre-commit')), 'the hook is removed');
    violated(r, join(dist(t, 801), '.zero'));
    if (process.platform === 'linux') assert.ok(watchedLookCounts.looked - looked >= ROOTS, 'the lost events dropped the memo: every root was looked at');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a .zero and a repository the host made between two warmed runs are read-only in the next one', async () => {
  const t = makeTree();
  try {
    const roots = await warmRoots(t);
    // The host, right before the run (no time to settle): what the memo held as missing now exists.
    mkdirSync(join(dist(t, 900), '.zero'));
    writeFileSync(join(dist(t, 900), '.zero', 'config.json'), '{}');
    mkdirSync(join(dist(t, 901), '.git', 'hooks'), { recursive: true });
    mkdirSync(join(dist(t, 901), '.git', 'objects'));
    mkdirSync(join(dist(t, 901), '.git', 'refs'));
    writeFileSync(join(dist(t, 901), '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(dist(t, 901), '.git', 'config'), '[core]\n');
    const r = await sh(t, [
      '(echo x > packages/p900/dist/.zero/config.json) 2>/dev/null && echo zero-written',
      `(${HOOK} packages/p901/dist/.git/hooks/pre-commit) 2>/dev/null && echo hook-written`,
      '(echo "[core] fsmonitor = evil" >> packages/p901/dist/.git/config) 2>/dev/null && echo config-written',
      'echo done',
    ].join('; '), { allowWrite: roots });
    assert.match(r.stdout, /done/, r.stderr);
    assert.not.match(r.stdout, /zero-written/, 'the host\'s .zero is read-only');
    assert.not.match(r.stdout, /hook-written/, 'the host\'s hooks directory is read-only');
    assert.is(readFileSync(join(dist(t, 900), '.zero', 'config.json'), 'utf8'), '{}');
    assert.not.ok(existsSync(join(dist(t, 901), '.git', 'hooks', 'pre-commit')));
    assert.is(readFileSync(join(dist(t, 901), '.git', 'config'), 'utf8'), '[core]\n', 'the config is as the host left it');
  } finally {
    t.cleanup();
  }
});

test.run();
