// The plan and the Linux sandbox spec of a repeated policy, kept across runs (plan-memo.ts,
// spec-memo.ts): given again only while the watch set over everything they looked at is quiet and
// every file they read reads the same. Each test warms the memo until it answers, changes one
// thing it depends on, and checks that the next answer is what a fresh computation gives on the
// same state: a deny entry turned into a directory, a link, removed or created; a write root
// swapped for a link; an ancestor renamed; an environment variable changed; a .git file rewritten
// in place; the caller's array changed in place; and a random walk of such changes.
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { HostFacts } from '../../lib/host-facts.js';
import { buildLinuxSandbox, hostViewOf, type LinuxNativeSpec, type LinuxSpecContext } from '../../lib/backend/linux/spec.js';
import { rememberedSandbox } from '../../lib/backend/linux/spec-memo.js';
import { checkOptions, type SandboxOptions } from '../../lib/sandbox/options.js';
import { resolvePlan, type ResolvedPlanInput } from '../../lib/sandbox/plan.js';
import { rememberedPlan } from '../../lib/sandbox/plan-memo.js';
import { watchedMemoCounts } from '../../lib/sandbox/watched-memo.js';
import { watchDirs } from '../../lib/sandbox/watch-set.js';
import { makeTree, TREE_BASE, type Tree } from '../helpers/sandbox.js';

// process.platform: watch sets exist on Linux only (elsewhere nothing is kept, and nothing to test).
const WATCHED = process.platform === 'linux' && (() => {
  const set = watchDirs(['/var/tmp']);
  set?.release();
  return set !== undefined;
})();
const linuxTest = WATCHED ? test : test.skip;

const CONTEXT: LinuxSpecContext = { landlockAbi: 3, isRoot: false, arch: process.arch, bindingPath: '/opt/zs/zero_sandbox.node' };

type Outcome = { plan: unknown; linux: unknown } | string;

/**
 * Landlock rules without the other entries of the shared test base: the read tree lists it on the
 * way to the fixture's home, and other tests make and remove their trees there meanwhile.
 */
function ownRules(rules: LinuxNativeSpec['linux']['landlockRules']): unknown[] {
  const base = `${realpathSync(TREE_BASE)}/`;
  return rules.filter((rule) => !rule.path.startsWith(base) || rule.path.slice(base.length).startsWith('zs-planmemo-'));
}

/** The plan and sandbox for `input`, through the memos or computed afresh (or the error). */
function outcome(input: ResolvedPlanInput, memo: boolean): Outcome {
  const facts = new HostFacts();
  try {
    const plan = memo ? rememberedPlan({ ...input, facts }) : resolvePlan({ ...input, facts });
    const view = hostViewOf(facts);
    const linux = memo ? rememberedSandbox(plan, CONTEXT, view, facts.epoch) : buildLinuxSandbox(plan, CONTEXT, view);
    return { plan: JSON.parse(JSON.stringify(plan)), linux: JSON.parse(JSON.stringify({ ...linux, landlockRules: ownRules(linux.landlockRules), seccomp: Array.from(linux.seccomp, String) })) };
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
}

/** The memo's answer equals a fresh computation's on the same state; how many parts it answered. */
function check(input: () => ResolvedPlanInput, label: string): number {
  const before = watchedMemoCounts.answered;
  const kept = outcome(input(), true);
  const answered = watchedMemoCounts.answered - before;
  const fresh = outcome(input(), false);
  assert.equal(kept, fresh, label);
  return answered;
}

/**
 * Runs until the memo answers both the plan and the sandbox: a few runs, more when other tests
 * make and remove their trees in the shared test base, which the sandbox's read tree lists.
 */
function warm(input: () => ResolvedPlanInput, label: string): void {
  for (let i = 0; i < 40; i++) if (check(input, `${label}: warming ${i}`) === 2) return;
  assert.unreachable(`${label}: the memo never answered`);
}

interface Fixture {
  t: Tree;
  home: string;
  options: SandboxOptions & { allowWrite: string[]; denyRead: string[]; denyWrite: string[] };
  env: Record<string, string | undefined>;
  input: () => ResolvedPlanInput;
}

function fixture(): Fixture {
  const t = makeTree('zs-planmemo-');
  const ws = realpathSync(t.ws);
  const home = join(realpathSync(t.base), 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'key');
  writeFileSync(join(ws, 'secret.env'), 'A=1');
  mkdirSync(join(ws, 'keep'));
  writeFileSync(join(ws, 'keep', 'locked.txt'), 'x');
  mkdirSync(join(ws, 'pkgs', 'a', 'dist'), { recursive: true });
  mkdirSync(join(ws, 'gitdirs', 'one', 'hooks'), { recursive: true });
  writeFileSync(join(ws, 'gitdirs', 'one', 'config'), '');
  mkdirSync(join(ws, 'gitdirs', 'two', 'hooks'), { recursive: true });
  writeFileSync(join(ws, 'gitdirs', 'two', 'config'), '');
  mkdirSync(join(ws, 'sub'));
  writeFileSync(join(ws, 'sub', '.git'), 'gitdir: ../gitdirs/one\n');
  const options = { workspace: ws, allowWrite: [join(ws, 'pkgs', 'a', 'dist')], denyRead: [join(ws, 'secret.env')], denyWrite: [join(ws, 'keep', 'locked.txt')] };
  const env: Record<string, string | undefined> = { HOME: home, PATH: '/usr/bin:/bin' };
  const input = (): ResolvedPlanInput => ({ argv: ['/bin/true'], options: checkOptions(options), envs: [process.env, env], commandEnv: { A: '1' }, scrubbedEnv: [], runtimeWriteRoots: [] });
  return { t, home, options, env, input };
}

linuxTest('plan memo: a deny entry turned into a directory, a link, removed and made again is seen by the next run', () => {
  const f = fixture();
  try {
    const secret = f.options.denyRead[0] as string;
    warm(f.input, 'first');
    rmSync(secret);
    mkdirSync(secret);
    writeFileSync(join(secret, 'key'), 'k');
    assert.is(check(f.input, 'a directory now'), 0, 'nothing was kept over the change');
    warm(f.input, 'after the directory');
    rmSync(secret, { recursive: true });
    writeFileSync(join(f.t.outside, 'target'), 'x');
    symlinkSync(join(f.t.outside, 'target'), secret);
    check(f.input, 'a link now');
    // Resolved through a link: off the memo, computed on every run.
    assert.is(check(f.input, 'a link, again'), 0);
    rmSync(secret);
    assert.match(outcome(f.input(), true) as string, /does not exist/, 'removed: refused');
    check(f.input, 'removed');
    writeFileSync(secret, 'B=2');
    check(f.input, 'made again');
    warm(f.input, 'after it was made again');
  } finally {
    f.t.cleanup();
  }
});

linuxTest('plan memo: a write root swapped for a link, and an ancestor renamed, are seen by the next run', () => {
  const f = fixture();
  try {
    const dist = f.options.allowWrite[0] as string;
    warm(f.input, 'first');
    renameSync(dist, `${dist}.old`);
    symlinkSync(`${dist}.old`, dist);
    assert.match(outcome(f.input(), true) as string, /symlink|link/, 'a write root through a link is refused');
    check(f.input, 'root swapped for a link');
    rmSync(dist);
    renameSync(`${dist}.old`, dist);
    warm(f.input, 'root back');
    const pkgs = join(realpathSync(f.t.ws), 'pkgs');
    renameSync(pkgs, `${pkgs}.moved`);
    mkdirSync(join(pkgs, 'a'), { recursive: true });
    writeFileSync(join(pkgs, 'a', 'dist'), 'a file where the root was');
    assert.match(outcome(f.input(), true) as string, /not a directory/);
    check(f.input, 'ancestor renamed, a file in its place');
  } finally {
    f.t.cleanup();
  }
});

linuxTest('plan memo: an environment variable the plan reads, a .git file rewritten in place and a credential file rewritten in place', () => {
  const f = fixture();
  try {
    warm(f.input, 'first');
    const aws = join(f.t.outside, 'aws-credentials');
    writeFileSync(aws, '[default]\n');
    f.env.AWS_SHARED_CREDENTIALS_FILE = aws;
    assert.is(check(f.input, 'AWS_SHARED_CREDENTIALS_FILE set'), 0);
    const planned = outcome(f.input(), true) as { plan: { denyRead: string[] } };
    assert.ok(planned.plan.denyRead.includes(realpathSync(aws)), 'the file the variable names is denied');
    warm(f.input, 'after the variable');
    // Content, written in place (no rename: no event): read again and compared on every use.
    const dotGit = join(realpathSync(f.t.ws), 'sub', '.git');
    writeFileSync(dotGit, 'gitdir: ../gitdirs/two\n');
    assert.is(check(f.input, '.git file rewritten'), 0, 'a .git file read by the plan changed: nothing kept');
    const roots = (outcome(f.input(), true) as { plan: { writeRoots: Array<{ readOnlySubpaths: string[] }> } }).plan.writeRoots;
    assert.ok(roots[0]?.readOnlySubpaths.some((path) => path.endsWith('/gitdirs/two/hooks')), 'the new git directory is read-only');
    warm(f.input, 'after the .git file');
    // A credential store's content is not what the plan depends on: the plan stays right either way.
    writeFileSync(join(f.home, '.ssh', 'id_ed25519'), 'another key');
    check(f.input, 'credential file rewritten in place');
  } finally {
    f.t.cleanup();
  }
});

linuxTest('plan memo: the caller changing its options arrays in place is a new key', () => {
  const f = fixture();
  try {
    warm(f.input, 'first');
    const ws = realpathSync(f.t.ws);
    writeFileSync(join(ws, 'other.env'), 'x');
    f.options.denyRead[0] = join(ws, 'other.env');
    assert.is(check(f.input, 'element replaced'), 0);
    warm(f.input, 'after the element');
    f.options.denyWrite.push(join(ws, 'secret.env'));
    assert.is(check(f.input, 'element added'), 0);
    f.options.allowWrite.length = 0;
    assert.is(check(f.input, 'emptied'), 0);
  } finally {
    f.t.cleanup();
  }
});

linuxTest('plan memo: after a random walk of changes each answer is a fresh computation', () => {
  const f = fixture();
  try {
    const ws = realpathSync(f.t.ws);
    const names = ['a', 'b', 'c'];
    for (const name of names) writeFileSync(join(ws, 'keep', name), name);
    f.options.denyRead.push(...names.map((name) => join(ws, 'keep', name)));
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const changes: Array<(path: string) => void> = [
      (path) => rmSync(path, { recursive: true, force: true }),
      (path) => {
        rmSync(path, { recursive: true, force: true });
        mkdirSync(path);
        writeFileSync(join(path, 'inner'), 'x');
      },
      (path) => {
        rmSync(path, { recursive: true, force: true });
        writeFileSync(path, 'x');
      },
      (path) => {
        rmSync(path, { recursive: true, force: true });
        symlinkSync(join(ws, 'secret.env'), path);
      },
      () => writeFileSync(join(ws, 'sub', '.git'), `gitdir: ../gitdirs/${random(2) === 0 ? 'one' : 'two'}\n`),
      () => {
        rmSync(join(ws, 'keep.tmp'), { recursive: true, force: true });
        renameSync(join(ws, 'keep'), join(ws, 'keep.tmp'));
        mkdirSync(join(ws, 'keep'));
        for (const name of names) if (random(2) === 0) writeFileSync(join(ws, 'keep', name), name);
      },
    ];
    let answered = 0;
    for (let step = 0; step < 120; step++) {
      if (random(5) === 0) changes[random(changes.length)]?.(join(ws, 'keep', names[random(names.length)] as string));
      // Now and then what went missing is made again (most states then plan rather than refuse).
      else if (random(4) === 0) {
        for (const name of [...names, 'locked.txt']) if (!existsSync(join(ws, 'keep', name))) writeFileSync(join(ws, 'keep', name), name);
      }
      answered += check(f.input, `step ${step}`);
    }
    assert.ok(answered > 0, 'the memo answered between the changes');
  } finally {
    f.t.cleanup();
  }
});

test.run();
