// Attack: runs of one policy with many nested write roots (`packages/*/dist`) remember, under each
// root's stamp, that `.git`, `.zero` and `.agents` were missing at its top, and skip those looks
// while the stamp is the same (lib/sandbox/root-tops.ts). The command (or the host between runs)
// then changes exactly that state: it creates the remembered-missing names at the top of a root
// whose absence the run took from the memo, or replaces the root by a fresh directory that has
// them. Each run must still remove what the command planted, and a `.zero` or repository the host
// made between runs must be read-only inside the next one, as without the memo.
// Each test runs real sandboxes and then looks at the host's files.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';
import { topLookCounts } from '../../lib/sandbox/root-tops.js';

/** A directory's stamp is trusted only when it was last changed more than 2 s before. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2200));

/** `count` nested write roots, settled, after one run of them (which fills the memo). */
async function warmRoots(t: Tree, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const dist = join(t.ws, 'packages', `p${i}`, 'dist');
    mkdirSync(dist, { recursive: true });
    out.push(dist);
  }
  await settle();
  const warm = await sh(t, 'true', { allowWrite: out });
  assert.is(warm.exitCode, 0, warm.stderr);
  return out;
}

const HOOK = 'printf "#!/bin/sh\\necho pwned\\n" >';

sandboxTest('attack: .zero, .agents and a repository made at the top of nested roots whose absence the run remembered are removed after the run', async () => {
  const t = makeTree();
  try {
    const dists = await warmRoots(t, 3);
    const answered = topLookCounts.answered;
    const r = await sh(t, [
      'mkdir packages/p0/dist/.zero && echo x > packages/p0/dist/.zero/config.json',
      'mkdir -p packages/p1/dist/.agents/skills && echo x > packages/p1/dist/.agents/skills/evil.md',
      `mkdir -p packages/p2/dist/.git/hooks && ${HOOK} packages/p2/dist/.git/hooks/pre-commit`,
      'echo planted',
    ].join(' && '), { allowWrite: dists });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.ok(topLookCounts.answered > answered, 'the run took the names at the tops from the memo');
    assert.not.ok(existsSync(join(dists[0] as string, '.zero')), '.zero is removed');
    assert.not.ok(existsSync(join(dists[1] as string, '.agents')), '.agents is removed');
    assert.not.ok(existsSync(join(dists[2] as string, '.git', 'hooks', 'pre-commit')), 'the new hook is removed');
    assert.ok(r.protectedPathViolations.includes(join(dists[0] as string, '.zero')), r.protectedPathViolations.join('\n'));
    assert.ok(r.protectedPathViolations.includes(join(dists[1] as string, '.agents')), r.protectedPathViolations.join('\n'));
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository made beside a nested root (in its parent), read with the root\'s stamp after the run, is checked as new', async () => {
  const t = makeTree();
  try {
    const dists = await warmRoots(t, 2);
    const r = await sh(t, `mkdir -p packages/p1/.git/hooks && ${HOOK} packages/p1/.git/hooks/pre-commit && echo planted`, { allowWrite: dists });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.not.ok(existsSync(join(t.ws, 'packages', 'p1', '.git', 'hooks', 'pre-commit')), 'the new hook is removed');
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a nested root replaced by a fresh directory holding .zero and .git is checked as a new one after the run', async () => {
  const t = makeTree();
  try {
    const dists = await warmRoots(t, 2);
    // The workspace is writable: the command moves a nested root away and puts another in its place.
    const r = await sh(t, [
      'mv packages/p0/dist packages/p0/old && mkdir -p packages/p0/dist/.zero packages/p0/dist/.git/hooks',
      'echo x > packages/p0/dist/.zero/config.json',
      `${HOOK} packages/p0/dist/.git/hooks/pre-commit`,
      'echo planted',
    ].join(' && '), { allowWrite: dists });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.not.ok(existsSync(join(dists[0] as string, '.zero')), '.zero is removed');
    assert.not.ok(existsSync(join(dists[0] as string, '.git', 'hooks', 'pre-commit')), 'the new hook is removed');
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a .zero and a repository the host made between two runs (then settled) are read-only in the next run despite the memo', async () => {
  const t = makeTree();
  try {
    const dists = await warmRoots(t, 2);
    // The host, between the runs: what the memo said was missing now exists, and is old enough for
    // the root's new stamp to be trusted.
    mkdirSync(join(dists[0] as string, '.zero'));
    writeFileSync(join(dists[0] as string, '.zero', 'config.json'), '{}');
    mkdirSync(join(dists[1] as string, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(dists[1] as string, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    mkdirSync(join(dists[1] as string, '.git', 'objects'));
    mkdirSync(join(dists[1] as string, '.git', 'refs'));
    await settle();
    const r = await sh(t, [
      '(echo x > packages/p0/dist/.zero/evil.json) 2>/dev/null && echo zero-written',
      // The root changes, so the check after the run looks at its top again.
      'echo x > packages/p0/dist/other.txt',
      `(${HOOK} packages/p1/dist/.git/hooks/pre-commit) 2>/dev/null && echo hook-written`,
      // Not there to make read-only: it points host git at a config and hooks of the command's choosing.
      `mkdir -p evil/hooks && echo ${join(t.ws, 'evil')} > packages/p1/dist/.git/commondir && echo commondir-written`,
      'echo done',
    ].join('; '), { allowWrite: dists });
    assert.match(r.stdout, /done/, r.stderr);
    assert.not.match(r.stdout, /zero-written/, 'the existing .zero is read-only');
    assert.not.match(r.stdout, /hook-written/, 'the existing hooks directory is read-only');
    assert.not.ok(existsSync(join(dists[0] as string, '.zero', 'evil.json')));
    assert.not.ok(existsSync(join(dists[1] as string, '.git', 'hooks', 'pre-commit')));
    assert.match(r.stdout, /commondir-written/);
    assert.not.ok(existsSync(join(dists[1] as string, '.git', 'commondir')), 'the planted commondir is removed after the run');
    assert.ok(r.protectedPathViolations.includes(join(dists[1] as string, '.git', 'commondir')), r.protectedPathViolations.join('\n'));
    // Noted as missing (a stale memo) it would have been taken for the command's and removed.
    assert.ok(existsSync(join(dists[0] as string, '.zero', 'config.json')), 'the host\'s own .zero stays');
    assert.not.ok(r.protectedPathViolations.includes(join(dists[0] as string, '.zero')), r.protectedPathViolations.join('\n'));
  } finally {
    t.cleanup();
  }
});

test.run();
