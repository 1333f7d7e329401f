// The write roots of a plan are opened and listed in one addon call (fsListRoots, root-walk.ts)
// instead of an lstat per path component and a readdir per root through node:fs. The verb must
// refuse every root reached through a link (a link inside a write root may have been planted by an
// earlier sandboxed command), and the plan built from its answers must be the plan node:fs gives,
// errors included: the same roots, read-only .git hooks and config of nested repositories (a .git
// file's real ones too), the same refusals naming the option and the path.
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { hostView, hostViewOf } from '../../lib/backend/linux/spec.js';
import { HostFacts } from '../../lib/host-facts.js';
import { loadNative, nativeBindingPath } from '../../lib/native/load.js';
import { resolvePlan } from '../../lib/sandbox/plan.js';
import { makeTree, type Tree } from '../helpers/sandbox.js';

// process.platform: the verb walks POSIX paths; Windows plans take node:fs (no fsListRoots).
const POSIX = process.platform !== 'win32';

/** A workspace with nested repositories, a worktree's .git file, links, a file and many subdirectories. */
function buildTree(t: Tree): void {
  const ws = t.ws;
  mkdirSync(join(ws, 'repoA', '.git', 'hooks'), { recursive: true });
  writeFileSync(join(ws, 'repoA', '.git', 'config'), '[core]\n');
  mkdirSync(join(ws, 'repoA', '.git', 'worktrees', 'wt'), { recursive: true });
  writeFileSync(join(ws, 'repoA', '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
  mkdirSync(join(ws, 'wt'));
  writeFileSync(join(ws, 'wt', '.git'), `gitdir: ${join(ws, 'repoA', '.git', 'worktrees', 'wt')}\n`);
  mkdirSync(join(ws, 'plain', 'sub'), { recursive: true });
  writeFileSync(join(ws, 'plain', 'file.txt'), 'x');
  mkdirSync(join(ws, 'node_modules', 'dep', '.git'), { recursive: true });
  mkdirSync(join(ws, 'gitlink'));
  symlinkSync(join(ws, 'repoA', '.git'), join(ws, 'gitlink', '.git'));
  mkdirSync(join(ws, 'Ünï', '.git'), { recursive: true });
  mkdirSync(join(ws, '.claude'));
  writeFileSync(join(ws, '.claude', 'settings.json'), '{}');
  symlinkSync(join(ws, 'plain'), join(ws, 'link'));
  writeFileSync(join(ws, 'file.txt'), 'x');
  // More subdirectories than the nested scan looks at: the repositories past it are not looked for.
  for (let i = 0; i < 600; i++) mkdirSync(join(ws, 'many', `d${String(i).padStart(3, '0')}`, ...(i % 100 === 99 ? ['.git'] : [])), { recursive: true });
  mkdirSync(join(t.outside, 'home'));
}

/** resolvePlan's answers for `cases` in a child, with the addon as built or without fsListRoots. */
function plans(t: Tree, cases: object[], withVerb: boolean): { verb: string; answers: unknown[] } {
  const env = { ...process.env };
  if (!withVerb) {
    // The addon minus fsListRoots (ZERO_SANDBOX_BINDING may name any module that exports the verbs).
    const shim = join(t.base, 'no-list-roots.cjs');
    writeFileSync(shim, `const real = require(${JSON.stringify(nativeBindingPath())});\nfor (const k of Object.getOwnPropertyNames(real)) if (k !== 'fsListRoots') exports[k] = real[k];\n`);
    env.ZERO_SANDBOX_BINDING = shim;
  }
  const script = fileURLToPath(new URL('../helpers/plan-json.js', import.meta.url));
  return JSON.parse(execFileSync(process.execPath, [script, JSON.stringify(cases)], { env, encoding: 'utf8' })) as { verb: string; answers: unknown[] };
}

test('fsListRoots: sorted entries with their kinds and the .git of the first subdirectories', () => {
  if (!POSIX) return;
  const t = makeTree();
  try {
    buildTree(t);
    const list = loadNative().fsListRoots as (paths: string[], max: number) => Array<string | number>;
    const [top] = list([t.ws], 512);
    assert.type(top, 'string');
    const entries = (top as string).split('/').slice(0, -1);
    assert.equal(entries, ['dm.claude', 'f-file.txt', 'dogitlink', 'l-link', 'dmmany', 'd-node_modules', 'dmplain', 'ddrepoA', 'dfwt', `dd${Buffer.from('Ünï').toString('latin1')}`]);
    // Past the first `maxLooks` entries no .git is looked at.
    const [many] = list([join(t.ws, 'many')], 200);
    const looks = (many as string).split('/').slice(0, -1).map((entry) => entry.slice(0, 2));
    assert.is(looks.length, 600);
    assert.equal(looks.slice(98, 101), ['dm', 'dd', 'dm']);
    assert.equal(looks.slice(199, 201), ['dd', 'd-']);
    assert.ok(looks.slice(200).every((look) => look === 'd-'));
    // A link as the root or on the way, a file, a missing path, a relative or unclean one: errno.
    const errno = (path: string) => list([path], 512)[0];
    // (ELOOP or ENOTDIR, as the kernel says: either way no listing, and node:fs decides.)
    const refused = [constants.errno.ELOOP, constants.errno.ENOTDIR];
    assert.ok(refused.includes(errno(join(t.ws, 'link')) as number));
    assert.ok(refused.includes(errno(join(t.ws, 'link', 'sub')) as number));
    assert.ok(refused.includes(errno(join(t.ws, 'plain', 'file.txt')) as number));
    assert.is(errno(join(t.ws, 'file.txt', 'x')), constants.errno.ENOTDIR);
    assert.is(errno(join(t.ws, 'missing')), constants.errno.ENOENT);
    assert.is(errno('ws/plain'), constants.errno.EINVAL);
    assert.is(errno(`${t.ws}/plain/../repoA`), constants.errno.EINVAL);
    assert.is(errno(`${t.ws}//plain`), constants.errno.EINVAL);
    assert.is(list([join(t.ws, 'plain', 'sub')], 512)[0], '');
  } finally {
    t.cleanup();
  }
});

test('a plan from the one-call walk is the plan node:fs gives, refusals included', () => {
  if (!POSIX) return;
  const t = makeTree();
  try {
    buildTree(t);
    const ws = t.ws;
    const home = join(t.outside, 'home');
    const at = (...parts: string[]) => join(ws, ...parts);
    const cases = [
      { workspace: ws, home, allowWrite: [at('plain'), 'repoA', at('Ünï'), at('many'), at('wt'), at('many', 'd599'), `${ws}/plain/../repoA`, at('gitlink'), at('node_modules')] },
      { workspace: ws, home, allowWrite: [at('plain'), at('link')] },
      { workspace: ws, home, allowWrite: [at('link', 'sub')] },
      { workspace: ws, home, allowWrite: ['link'] },
      { workspace: ws, home, allowWrite: [at('plain'), at('missing'), at('file.txt')] },
      { workspace: ws, home, allowWrite: [at('file.txt')] },
      { workspace: ws, home, allowWrite: [at('file.txt', 'x')] },
      { workspace: ws, home, allowWrite: ['/'] },
      { workspace: ws, home, allowWrite: ['/usr/lib'] },
      { workspace: at('link'), home, allowWrite: [at('plain', 'sub')] },
      // Deny entries beside and below the roots: resolved through the walk's facts, links and all.
      { workspace: ws, home, allowWrite: [at('plain', 'sub'), at('repoA')], denyRead: [at('plain', 'file.txt'), at('link', 'file.txt'), 'file.txt'], denyWrite: [at('repoA', '.git', 'config'), at('link')] },
      { workspace: ws, home, allowWrite: [at('plain', 'sub')], denyRead: [at('plain', 'gone.txt')] },
    ];
    const walked = plans(t, cases, true);
    const fallback = plans(t, cases, false);
    assert.is(walked.verb, 'function');
    assert.is(fallback.verb, 'undefined');
    assert.equal(walked.answers, fallback.answers);
    // The answers are what the cases are about (not, say, the same failure everywhere).
    const [first, ...refused] = walked.answers as Array<{ plan?: { writeRoots: Array<{ root: string; readOnlySubpaths: string[] }>; denyRead: string[]; denyWrite: string[] }; code?: string; message?: string }>;
    const roots = first?.plan?.writeRoots ?? [];
    assert.equal(roots.map((r) => r.root), [ws, at('plain'), at('repoA'), at('Ünï'), at('many'), at('wt'), at('many', 'd599'), at('gitlink'), at('node_modules')]);
    const top = roots[0]?.readOnlySubpaths ?? [];
    for (const path of [at('repoA', '.git', 'hooks'), at('Ünï', '.git', 'config'), at('wt', '.git'), at('repoA', '.git', 'config')]) assert.ok(top.includes(path), path);
    assert.not.ok(top.some((path) => path.startsWith(at('node_modules', 'dep'))));
    const inMany = roots[4]?.readOnlySubpaths ?? [];
    assert.ok(inMany.includes(at('many', 'd099', '.git', 'hooks')));
    assert.not.ok(inMany.some((path) => path.startsWith(at('many', 'd599'))), 'past the scan limit');
    assert.match(refused[0]?.message ?? '', /allowWrite .*link reaches .*plain through a symlink/);
    assert.match(refused[1]?.message ?? '', /through a symlink/);
    assert.match(refused[3]?.message ?? '', /missing does not exist/);
    assert.match(refused[4]?.message ?? '', /file\.txt is not a directory/);
    assert.match(refused[6]?.message ?? '', /^allowWrite \/ is the root of a file system/);
    assert.ok(refused.slice(0, 8).every((answer) => answer.code === 'invalid_argument'));
    const denied = refused[9]?.plan;
    assert.ok(denied?.denyRead.includes(at('plain', 'file.txt')) && denied.denyRead.includes(at('file.txt')));
    assert.equal(denied?.denyWrite, [at('repoA', '.git', 'config'), at('plain')]);
    assert.match(refused[10]?.message ?? '', /denyRead .*gone\.txt does not exist/);
  } finally {
    t.cleanup();
  }
});

// The deny entries are looked at in one batched no-follow walk (plan.ts lookAtDenyEntries): an
// entry with no link on the way is its own real path, and the mount plan takes its kind (and its
// directories') from that walk. Both must be what realpath and stat say, whatever the shape.
test('deny entries looked at in one walk resolve and stat as node:fs says', () => {
  if (!POSIX) return;
  const t = makeTree();
  try {
    const ws = t.ws;
    mkdirSync(join(ws, 'a', 'b'), { recursive: true });
    writeFileSync(join(ws, 'a', 'b', 'file'), 'x');
    symlinkSync(join(ws, 'a'), join(ws, 'a-link'));
    symlinkSync(join(ws, 'a', 'b', 'file'), join(ws, 'file-link'));
    symlinkSync(join(ws, 'a', 'b'), join(ws, 'a', 'b-link'));
    execFileSync('mkfifo', [join(ws, 'a', 'fifo')]);
    const entries = [
      join(ws, 'a', 'b', 'file'), join(ws, 'a', 'b'), join(ws, 'a-link', 'b', 'file'), join(ws, 'file-link'), join(ws, 'a', 'b-link'),
      join(ws, 'a', 'b-link', 'file'), join(ws, 'a', 'fifo'), 'a/b/file', `${ws}/a/./b/file`, `${ws}//a/b`,
    ];
    const facts = new HostFacts();
    const options = { workspace: ws, cwd: undefined, network: 'deny' as const, allowWrite: [], allowRead: [], denyRead: entries, denyReadIfAppears: [], denyWrite: entries, envPass: [], limits: {}, timeoutMs: undefined };
    const plan = resolvePlan({ argv: ['/bin/true'], options, envs: [{ HOME: join(t.outside, 'home') }], commandEnv: {}, runtimeWriteRoots: [], facts });
    const real = [...new Set(entries.map((path) => realpathSync(resolve(ws, path))))];
    assert.equal(plan.denyWrite, entries.map((path) => realpathSync(resolve(ws, path))));
    for (const path of real) assert.ok(plan.denyRead.includes(path), path);
    const viaFacts = hostViewOf(facts);
    const looked = [...entries.map((path) => resolve(ws, path)), ...real.flatMap((path) => [path, dirname(path), dirname(dirname(path))]), join(ws, 'a-link'), join(ws, 'a', 'b-link')];
    for (const path of looked) assert.is(viaFacts.kind(path), hostView.kind(path), path);
    // The batched walk answered for the plain entries (and not for those reached through a link).
    assert.is(facts.lookedKind(join(ws, 'a', 'b', 'file')), 'file');
    assert.is(facts.lookedKind(join(ws, 'a')), 'dir');
    assert.is(facts.lookedKind(join(ws, 'a', 'fifo')), 'file');
    assert.is(facts.lookedKind(join(ws, 'file-link')), undefined);
    assert.is(facts.lookedKind(join(ws, 'a-link', 'b', 'file')), undefined);
  } finally {
    t.cleanup();
  }
});

test.run();
