// The pure Linux builders, checked exactly on every OS: the Landlock ruleset, the mount plan, the
// resource limits. (The seccomp program has its own files.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { FS, SCOPE, buildHandledAccess, buildLandlockPlan, buildScoped, rightsOf } from '../../lib/backend/linux/landlock.js';
import { MASK_DIR_STANDINS, SNAPSHOT_PINS, MAX_SEPARATE_WRITE_ROOTS, buildMountPlan, maskedPaths, outermostRoots, type HostView } from '../../lib/backend/linux/mounts.js';
import { buildRlimits } from '../../lib/backend/linux/spec.js';
import { underHardLimits } from '../../lib/sandbox/default-limits.js';
import { buildWritableRoot } from '../../lib/sandbox/plan.js';
import { SandboxError } from '../../lib/errors.js';

test('handled rights follow the ABI', () => {
  assert.equal(rightsOf(buildHandledAccess(1)).includes('REFER'), false);
  assert.ok(rightsOf(buildHandledAccess(2)).includes('REFER'));
  assert.not.ok(rightsOf(buildHandledAccess(2)).includes('TRUNCATE'));
  assert.ok(rightsOf(buildHandledAccess(3)).includes('TRUNCATE'));
  assert.not.ok(rightsOf(buildHandledAccess(4)).includes('IOCTL_DEV'));
  assert.equal(rightsOf(buildHandledAccess(7)), Object.keys(FS));
  assert.is(buildScoped(5), 0);
  assert.is(buildScoped(6), SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL);
});

const ENTRIES = [
  { name: 'bin', directory: true }, { name: 'dev', directory: true }, { name: 'etc', directory: true },
  { name: 'proc', directory: true }, { name: 'vmlinuz', directory: false },
];

test('Landlock: read everywhere but /dev, a few safe devices, write only in write roots', () => {
  const plan = buildLandlockPlan({ writeRoots: [buildWritableRoot('/work/ws')] }, { abi: 7, rootEntries: ENTRIES, privateTmp: true });
  const byPath = new Map(plan.rules.map((rule) => [rule.path, rule]));
  assert.equal(rightsOf(byPath.get('/')!.access), ['READ_DIR']);
  assert.equal(rightsOf(byPath.get('/etc')!.access), ['EXECUTE', 'READ_FILE', 'READ_DIR']);
  assert.equal(rightsOf(byPath.get('/vmlinuz')!.access), ['EXECUTE', 'READ_FILE'], 'files get file rights only');
  assert.not.ok(byPath.has('/dev'), '/dev as a whole is not readable: raw disks stay closed');
  assert.equal(rightsOf(byPath.get('/dev/null')!.access), ['WRITE_FILE', 'READ_FILE', 'TRUNCATE', 'IOCTL_DEV']);
  const ws = rightsOf(byPath.get('/work/ws')!.access);
  assert.ok(ws.includes('WRITE_FILE') && ws.includes('MAKE_DIR') && ws.includes('REFER') && ws.includes('TRUNCATE'));
  assert.not.ok(ws.includes('MAKE_CHAR') || ws.includes('MAKE_BLOCK'), 'no device nodes in write roots');
  assert.ok(byPath.get('/tmp')!.afterMounts, 'the private /tmp is ruled once it exists');
  assert.not.ok(byPath.get('/work/ws')!.afterMounts);
  assert.equal(rightsOf(byPath.get('/proc')!.access), ['READ_FILE', 'READ_DIR']);
  for (const rule of plan.rules) assert.is(rule.access & ~plan.handledFs, 0, `${rule.path} only uses handled rights`);
});

test('the addon names the hidden paths opened by their order among the watched masks', () => {
  const mounts = [
    { kind: 'mask_dir' as const, path: '/home/u/.aws', names: ['config', 'credentials'] },
    { kind: 'mask_file' as const, path: '/home/u/.netrc' },
    { kind: 'readonly_bind' as const, path: '/w/.git/hooks' },
    { kind: 'mask_dir' as const, path: '/home/u/.kube' },
    { kind: 'mask_file' as const, path: '/etc/shadow' },
  ];
  assert.equal(maskedPaths(mounts, [1, 3]), [{ path: '/home/u/.aws/credentials', mask: '/home/u/.aws' }, { path: '/etc/shadow', mask: '/etc/shadow' }]);
  assert.equal(maskedPaths(mounts, [2, 9]).map((m) => m.path), ['/home/u/.netrc'], 'an index past the masks is dropped');
  assert.equal(maskedPaths(mounts, undefined), []);
});

test('Landlock read tree: entries on the way to a denied path are granted one by one, except inside a write root (its own grant covers them)', () => {
  const listed: string[] = [];
  const tree: Record<string, Array<{ name: string; kind: 'file' | 'dir' }>> = {
    '/home': [{ name: 'u', kind: 'dir' }],
    '/home/u': [{ name: '.aws', kind: 'dir' }, { name: 'notes', kind: 'file' }, { name: 'ws', kind: 'dir' }],
  };
  const readTree = {
    denied: ['/home/u/.aws', '/home/u/ws/pkg/.env', '/home/u/ws/other/secret'],
    guarded: ['/home/u/ws/.ssh'],
    list: (dir: string) => {
      listed.push(dir);
      return tree[dir];
    },
  };
  const entries = [...ENTRIES, { name: 'home', directory: true }];
  const plan = buildLandlockPlan({ writeRoots: [buildWritableRoot('/home/u/ws')] }, { abi: 7, rootEntries: entries, privateTmp: true, readTree });
  const byPath = new Map(plan.rules.map((rule) => [rule.path, rule]));
  assert.equal(listed, ['/home', '/home/u'], 'nothing inside the write root is listed');
  assert.not.ok(byPath.has('/home/u/.aws'), 'the denied directory gets no grant');
  assert.equal(rightsOf(byPath.get('/home/u/notes')!.access), ['EXECUTE', 'READ_FILE']);
  assert.ok(rightsOf(byPath.get('/home/u/ws')!.access).includes('WRITE_FILE'));
  assert.not.ok(plan.rules.some((rule) => rule.path.startsWith('/home/u/ws/')), 'no rule below the write root');
});

test('Landlock at ABI 1 drops the rights the kernel does not know', () => {
  const plan = buildLandlockPlan({ writeRoots: [buildWritableRoot('/w')] }, { abi: 1, rootEntries: ENTRIES, privateTmp: false });
  const ws = plan.rules.find((rule) => rule.path === '/w')!;
  assert.not.ok(rightsOf(ws.access).includes('REFER'));
  assert.not.ok(plan.rules.some((rule) => rule.path === '/tmp'));
  assert.is(plan.scoped, 0);
});

test('Landlock: one write rule per separate write root; a nested root is covered by the outer rule', () => {
  const roots = ['/work/ws', '/work/ws/packages/a/dist', '/work/other', '/work/ws/b', '/work/wsx'].map((root) => buildWritableRoot(root));
  const plan = buildLandlockPlan({ writeRoots: roots }, { abi: 7, rootEntries: ENTRIES, privateTmp: true });
  const writable = plan.rules.filter((rule) => (rule.access & FS.WRITE_FILE) !== 0 && !rule.path.startsWith('/dev') && rule.path !== '/tmp');
  assert.equal(writable.map((rule) => rule.path).sort(), ['/work/other', '/work/ws', '/work/wsx']);
  const outer = writable.find((rule) => rule.path === '/work/ws')!;
  assert.is(outer.access, writable.find((rule) => rule.path === '/work/other')!.access, 'every write root gets the same rights');
});

function host(existing: Record<string, 'file' | 'dir'>): HostView {
  return { kind: (path) => existing[path] ?? 'missing', procReadonly: ['/proc/sys'] };
}

test('mount plan: clone roots, read-only host, private tmp, attach, protect, mask, proc, devpts — in that order', () => {
  const plan = {
    writeRoots: [buildWritableRoot('/work/ws'), buildWritableRoot('/tmp/extra')],
    // The host's /tmp and /dev/shm files are not visible in the sandbox: no masks there.
    denyRead: ['/home/u/.aws', '/home/u/.npmrc', '/tmp/gone', '/dev/shm/gone', '/work/ws/.env'],
    // Nor made read-only (there is no such path to mount onto), unless inside a write root there.
    denyWrite: ['/work/ws/locked', '/tmp/host-only', '/dev/shm/host-only', '/tmp/extra/kept'],
  };
  const { ops, privateTmp } = buildMountPlan(plan, host({
    '/work/ws/.git': 'dir', '/work/ws/.git/hooks': 'dir', '/work/ws/.git/config': 'file', '/work/ws/.zero': 'dir',
    '/home/u/.aws': 'dir', '/home/u/.npmrc': 'file', '/work/ws/.env': 'file', '/work/ws/locked': 'file', '/tmp/gone': 'file', '/dev/shm/gone': 'file',
    '/tmp/host-only': 'file', '/dev/shm/host-only': 'file', '/tmp/extra/kept': 'file',
  }));
  assert.ok(privateTmp);
  assert.equal(ops.map((op) => `${op.kind} ${op.path}${op.slot === undefined ? '' : ` #${op.slot}`}`), [
    'detach_clone /work/ws #0',
    'detach_clone /tmp/extra #1',
    'readonly_all /',
    'tmpfs /tmp',
    'tmpfs /dev/shm',
    'attach /work/ws #0',
    'mkdirs /tmp/extra',
    'attach /tmp/extra #1',
    'pin /work/ws/.git',
    'readonly_bind /work/ws/.git/hooks',
    'readonly_bind /work/ws/.git/config',
    'readonly_bind /work/ws/.zero',
    'readonly_real /work/ws/locked',
    'readonly_real /tmp/extra/kept',
    'mask_dir /home/u/.aws',
    'mask_file /home/u/.npmrc',
    'mask_file /work/ws/.env',
    'proc /proc',
    'readonly_bind /proc/sys',
    'devpts /dev/pts',
  ]);
});

test('mount plan: a name a root\'s listing lacks is missing without a look; one it holds (any case) is looked at', () => {
  const asked: string[] = [];
  const existing: Record<string, 'file' | 'dir'> = { '/w/.vscode': 'dir', '/w/.vscode/tasks.json': 'file', '/w/.zero': 'dir', '/w/e/.git': 'dir', '/w/e/.git/hooks': 'dir' };
  const listings: Record<string, string[]> = { '/w': ['.vscode', '.zero', 'src'], '/w/e': [] };
  const view: HostView = {
    kind: (path) => {
      asked.push(path);
      return existing[path] ?? 'missing';
    },
    procReadonly: [],
    listedIn: (dir) => {
      const names = listings[dir];
      return names === undefined ? undefined : { size: names.length, mayHold: (name) => names.some((listed) => listed.toLowerCase() === name.toLowerCase()) };
    },
  };
  const roots = [buildWritableRoot('/w'), buildWritableRoot('/w/e'), buildWritableRoot('/u', ['/w/e/.git/hooks'])];
  const { ops } = buildMountPlan({ writeRoots: roots, denyRead: [], denyWrite: [] }, view);
  const bound = ops.filter((op) => op.kind === 'readonly_bind' && !op.path.startsWith('/proc')).map((op) => op.path);
  assert.equal(bound, ['/w/.vscode/tasks.json', '/w/.zero', '/w/e/.git/hooks'], 'a path of another root is still looked at');
  assert.not.ok(asked.some((path) => path.startsWith('/w/.git') || path.startsWith('/w/.claude') || path === '/w/.agents'), 'names the listing lacks are not looked at');
  assert.ok(asked.includes('/u/.git') && asked.includes('/u/.zero'), 'a root without a listing is looked at');
  // A case-folding directory: `.VSCode` is listed, `.vscode/...` must be looked at.
  listings['/w'] = ['.VSCode'];
  asked.length = 0;
  buildMountPlan({ writeRoots: [buildWritableRoot('/w')], denyRead: [], denyWrite: [] }, view);
  assert.ok(asked.includes('/w/.vscode'));
});

test('mount plan: directories shared by many read-only targets are pinned once each, outer ones first', () => {
  // 60 denied files two and three levels down, under directories in an order that sorting must fix.
  const denyWrite = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? `/w/pkg/p${59 - i}/lock` : `/w/pkg/p${59 - i}/deep/lock`));
  const existing: Record<string, 'file' | 'dir'> = { '/w/pkg': 'dir' };
  for (const path of denyWrite) {
    existing[path] = 'file';
    for (let dir = path.slice(0, path.lastIndexOf('/')); dir !== '/w'; dir = dir.slice(0, dir.lastIndexOf('/'))) existing[dir] = 'dir';
  }
  const { ops } = buildMountPlan({ writeRoots: [buildWritableRoot('/w')], denyRead: ['/tmp/w-secret', '/tmp/other'], denyWrite }, host({ ...existing, '/tmp/w-secret': 'file', '/tmp/other': 'file' }));
  const pins = ops.filter((op) => op.kind === 'pin').map((op) => op.path);
  const expected = Object.keys(existing).filter((path) => existing[path] === 'dir');
  expected.sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  assert.equal(pins, expected);
  assert.is(new Set(pins).size, pins.length, 'each directory once');
  // The pins come from one snapshot of their root, taken right before them, each by its path in it.
  const first = ops.findIndex((op) => op.kind === 'pin');
  assert.equal(ops[first - 1], { kind: 'snapshot', path: '/w' });
  assert.equal(ops.filter((op) => op.kind === 'snapshot').length, 1);
  assert.ok(ops.filter((op) => op.kind === 'pin').every((op) => op.from === op.path.slice('/w/'.length)));
  // Two roots: each root's pins together; from a snapshot of the root taken right before them
  // when it has SNAPSHOT_PINS or more, each from its own path when fewer.
  const many = Array.from({ length: SNAPSHOT_PINS }, (_, i) => `/v/d${String(i).padStart(2, '0')}`);
  const kinds: Record<string, 'file' | 'dir'> = { '/w/a': 'dir', '/w/a/d': 'dir', '/w/a/f': 'file', '/w/a/d/f': 'file' };
  for (const dir of many) Object.assign(kinds, { [dir]: 'dir', [`${dir}/f`]: 'file' });
  const two = buildMountPlan({ writeRoots: [buildWritableRoot('/w'), buildWritableRoot('/v')], denyRead: [], denyWrite: ['/w/a/f', ...many.map((dir) => `${dir}/f`), '/w/a/d/f'] }, host(kinds));
  const pinned = two.ops.filter((op) => op.kind === 'snapshot' || op.kind === 'pin').map((op) => `${op.kind} ${op.path} ${op.from ?? ''}`.trim());
  assert.equal(pinned, ['snapshot /v', ...many.map((dir) => `pin ${dir} ${dir.slice(3)}`), 'pin /w/a', 'pin /w/a/d']);
  assert.equal(ops.filter((op) => op.kind === 'readonly_real' && op.path.startsWith('/w/')).map((op) => op.path), denyWrite);
  // Under the private /tmp a denied path outside every write root is not visible: nothing to mask.
  assert.not.ok(ops.some((op) => op.kind === 'mask_file'));
  const inRoot = buildMountPlan({ writeRoots: [buildWritableRoot('/w'), buildWritableRoot('/tmp/r')], denyRead: ['/tmp/r/secret', '/tmp/rs'], denyWrite: [] }, host({ '/tmp/r/secret': 'file', '/tmp/rs': 'file' }));
  assert.equal(inRoot.ops.filter((op) => op.kind === 'mask_file').map((op) => op.path), ['/tmp/r/secret'], 'masked inside a write root under /tmp only');
});

test('mount plan: a file both denyRead and denyWrite gets its mask only (marked real), its pins stay; a denyWrite-only sibling keeps its read-only bind', () => {
  const both = '/w/pkg/p1/secret.env';
  const only = '/w/pkg/p1/lock';
  const { ops } = buildMountPlan({ writeRoots: [buildWritableRoot('/w')], denyRead: [both, '/home/u/.npmrc'], denyWrite: [both, only] }, host({ '/w/pkg': 'dir', '/w/pkg/p1': 'dir', [both]: 'file', [only]: 'file', '/home/u/.npmrc': 'file' }));
  const shown = ops.filter((op) => (op.path === '/w' || op.path.startsWith('/w/') || op.path.startsWith('/home/'))).map((op) => `${op.kind} ${op.path}${op.real === true ? ' real' : ''}`);
  assert.equal(shown, ['detach_clone /w', 'attach /w', 'pin /w/pkg', 'pin /w/pkg/p1', `readonly_real ${only}`, `mask_file ${both} real`, 'mask_file /home/u/.npmrc']);
});

test('mount plan: a hidden directory gets sorted stand-ins for its files, at most MASK_DIR_STANDINS', () => {
  const files = (path: string): string[] => (path === '/home/u/.aws' ? ['credentials', 'config'] : path === '/home/u/big' ? Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, '0')}`) : []);
  const view: HostView = { kind: (path) => (path.startsWith('/home/u/') ? 'dir' : 'missing'), procReadonly: [], files };
  const { ops } = buildMountPlan({ writeRoots: [buildWritableRoot('/w')], denyRead: ['/home/u/.aws', '/home/u/big', '/home/u/empty'], denyWrite: [] }, view);
  const masks = ops.filter((op) => op.kind === 'mask_dir');
  assert.equal(masks[0]!.names, ['config', 'credentials']);
  assert.is(masks[1]!.names!.length, MASK_DIR_STANDINS);
  assert.is(masks[1]!.names![0], 'f000');
  assert.is(masks[2]!.names, undefined, 'no files: no stand-ins');
});

test('mount plan: a write root holding /tmp keeps the host /tmp; nested roots are not cloned twice', () => {
  assert.equal(outermostRoots(['/a/b', '/a', '/c', '/ab']), ['/a', '/c', '/ab']);
  const { ops, privateTmp } = buildMountPlan({ writeRoots: [buildWritableRoot('/tmp')], denyRead: [], denyWrite: [] }, host({}));
  assert.not.ok(privateTmp);
  assert.not.ok(ops.some((op) => op.kind === 'tmpfs' && op.path === '/tmp'));
});

test('mount plan: one slot per separate write root up to the limit; beyond it an invalid_argument naming allowWrite', () => {
  const separate = (n: number) => Array.from({ length: n }, (_, i) => buildWritableRoot(`/w/r${i}`));
  const { ops } = buildMountPlan({ writeRoots: separate(MAX_SEPARATE_WRITE_ROOTS), denyRead: [], denyWrite: [] }, host({}));
  const slots = ops.filter((op) => op.kind === 'detach_clone').map((op) => op.slot);
  assert.equal(slots, Array.from({ length: MAX_SEPARATE_WRITE_ROOTS }, (_, i) => i));
  // Nested roots take no slot of their own.
  const nested = [buildWritableRoot('/w'), ...separate(MAX_SEPARATE_WRITE_ROOTS + 1)];
  assert.is(buildMountPlan({ writeRoots: nested, denyRead: [], denyWrite: [] }, host({})).ops.filter((op) => op.kind === 'detach_clone').length, 1);
  try {
    buildMountPlan({ writeRoots: separate(MAX_SEPARATE_WRITE_ROOTS + 1), denyRead: [], denyWrite: [] }, host({}));
    assert.unreachable('more separate roots than slots must be refused');
  } catch (error) {
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'invalid_argument');
    assert.match((error as SandboxError).message, /allowWrite.*at most 256/);
  }
});

test('resource limits map onto rlimits; a process limit refuses for a root caller', () => {
  assert.equal(buildRlimits({ cpuSeconds: 5, memoryBytes: 1 << 30, fileSizeBytes: 1024, openFiles: 64, processes: 32 }, false), [
    { resource: 0, soft: 5, hard: 5 },
    { resource: 2, soft: 1 << 30, hard: 1 << 30 },
    { resource: 1, soft: 1024, hard: 1024 },
    { resource: 7, soft: 64, hard: 64 },
    { resource: 6, soft: 32, hard: 32 },
  ]);
  assert.throws(() => buildRlimits({ processes: 10 }, true), /cannot be enforced for a root caller/);
  assert.equal(buildRlimits({ processes: 10 }, true, true), [], 'a pids cgroup enforces it instead');
  assert.equal(buildRlimits({}, true), []);
});

test('no rlimit is above the caller\'s hard limit, which the sandbox could not raise', () => {
  const hard: Record<number, number> = { 6: 1200, 7: 1024 };
  const hardOf = (resource: number) => hard[resource] ?? Number.POSITIVE_INFINITY;
  assert.equal(buildRlimits({ cpuSeconds: 5, openFiles: 4096, processes: 4096 }, false, false, hardOf), [
    { resource: 0, soft: 5, hard: 5 },
    { resource: 7, soft: 1024, hard: 1024 },
    { resource: 6, soft: 1200, hard: 1200 },
  ]);
  assert.equal(buildRlimits({ openFiles: 64, processes: 32 }, false, false, hardOf), [
    { resource: 7, soft: 64, hard: 64 },
    { resource: 6, soft: 32, hard: 32 },
  ], 'a cap under the hard limit stays as asked');
});

test('policy\'s caps are lowered to the caller\'s hard limits as the spawn lowers them, with the caller as their source', () => {
  const hardOf = (resource: number) => ({ 6: 1200, 7: 1024 } as Record<number, number>)[resource] ?? Number.POSITIVE_INFINITY;
  const limits = { processes: 4096, openFiles: 2048, cpuSeconds: 60, tmpBytes: 1 << 30 };
  const sources: Record<string, string> = { processes: 'default', openFiles: 'flag', cpuSeconds: 'config', tmpBytes: 'default' };
  underHardLimits(limits, sources, hardOf, true);
  assert.equal(limits, { processes: 1200, openFiles: 1024, cpuSeconds: 60, tmpBytes: 1 << 30 });
  assert.equal(sources, { processes: 'caller', openFiles: 'caller', cpuSeconds: 'config', tmpBytes: 'default' });
  const byCgroup = { processes: 4096 };
  underHardLimits(byCgroup, {}, hardOf, false);
  assert.equal(byCgroup, { processes: 4096 }, 'a process cap a pids cgroup enforces is no rlimit');
  assert.equal(buildRlimits(limits, false, false, hardOf).map((r) => r.soft), [60, 1024, 1200], 'the same values the spawn sets');
});

test.run();
