// SPDX-License-Identifier: MIT
// The AppContainer read set beyond ALL APPLICATION PACKAGES, with Windows path semantics
// (path.win32) on any OS: traverse-only on the directories above each root (Node's module loader
// and realpath lstat them), read of PATH directories and node.exe's directory (tools under the
// user's profile), read of the git config files; never a volume root, the user's profile or a
// directory above it, never a system directory (already readable, owned by the system).
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import type { SandboxPlan } from '../../lib/backend/types.js';
import { buildWindowsReadGrants } from '../../lib/backend/windows/read-grants.js';
import { buildAppContainerSpec, buildNativeWindowsSpec } from '../../lib/backend/windows/spec.js';
import { buildReadGrantFacts } from '../../lib/backend/windows/launch-spec.js';

const HOME = 'C:\\Users\\dev';
const WS = `${HOME}\\src\\project`;
const TMP = `${HOME}\\AppData\\Local\\Temp\\zero-sandbox-42`;
const SYSTEM = ['C:\\Windows', 'C:\\Program Files', 'C:\\Program Files (x86)'];

const grants = (path: string, extra: Partial<Parameters<typeof buildWindowsReadGrants>[0]> = {}) =>
  buildWindowsReadGrants({ roots: [WS, TMP], path, home: HOME, execDir: 'C:\\Program Files\\nodejs', systemDirs: SYSTEM, ...extra });
const pairs = (entries: ReturnType<typeof buildWindowsReadGrants>) => entries.map((e) => `${e.kind} ${e.path}`);

test('ancestors of every root: traverse only, this folder only, below the volume root', () => {
  const got = pairs(grants(''));
  for (const dir of ['C:\\Users', HOME, `${HOME}\\src`, `${HOME}\\AppData`, `${HOME}\\AppData\\Local`, `${HOME}\\AppData\\Local\\Temp`]) {
    assert.ok(got.includes(`allow-traverse ${dir}`), dir);
  }
  assert.not.ok(got.some((g) => g.endsWith(' C:\\') || g.endsWith(' C:')), 'never the volume root');
  // The user's profile itself is traversable, never readable.
  assert.not.ok(got.includes(`allow-read ${HOME}`));
  assert.ok(grants('').every((e) => e.ifMissing === 'best-effort'));
});

test('PATH directories and node.exe\'s directory are readable; system dirs, volume roots and the profile are not', () => {
  const path = [
    `${HOME}\\AppData\\Roaming\\npm`,
    `"${HOME}\\.cargo\\bin"`,
    'C:\\hostedtoolcache\\windows\\node\\20.11.0\\x64\\',
    'C:\\Windows\\System32',
    'C:\\Program Files\\Git\\cmd',
    'C:\\',
    HOME,
    'C:\\Users',
    'relative\\bin',
    '%USERPROFILE%\\bin',
    'C:\\tools\\..\\Users\\dev',
    '',
  ].join(';');
  const got = pairs(grants(path, { execDir: `${HOME}\\.nvm\\v20` }));
  assert.ok(got.includes(`allow-read ${HOME}\\AppData\\Roaming\\npm`));
  assert.ok(got.includes(`allow-read ${HOME}\\.cargo\\bin`), 'quotes removed');
  assert.ok(got.includes('allow-read C:\\hostedtoolcache\\windows\\node\\20.11.0\\x64'), 'trailing backslash removed');
  assert.ok(got.includes(`allow-read ${HOME}\\.nvm\\v20`), 'node.exe directory');
  assert.ok(got.includes(`allow-traverse ${HOME}\\.cargo`), 'parents of a granted dir: traverse only');
  const reads = got.filter((g) => g.startsWith('allow-read ')).map((g) => g.slice('allow-read '.length).toLowerCase());
  for (const bad of ['c:\\windows\\system32', 'c:\\program files\\git\\cmd', 'c:\\', 'c:\\users\\dev', 'c:\\users', 'relative\\bin']) {
    assert.not.ok(reads.includes(bad), bad);
  }
  assert.not.ok(reads.some((r) => r.includes('%') || r.includes('..')), reads.join());
  // Case-insensitive de-duplication.
  assert.is(pairs(grants(`${HOME}\\bin;${HOME.toUpperCase()}\\BIN`)).filter((g) => g.startsWith('allow-read') && g.toLowerCase().endsWith('\\bin')).length, 1);
});

test('attack: a PATH entry inside a denied directory is not granted (an explicit allow would beat the inherited deny)', () => {
  const got = pairs(grants(`${HOME}\\.ssh\\bin;${HOME}\\bin`, { denied: [`${HOME}\\.ssh`, `${HOME}\\.gitconfig`] }));
  assert.not.ok(got.some((g) => g.toLowerCase().includes('\\.ssh')), got.join());
  assert.not.ok(got.some((g) => g.includes('.gitconfig')), 'a denied git config is not granted');
  assert.ok(got.includes(`allow-read ${HOME}\\bin`));
  // In the spec, the plan's denyRead is what is excluded.
  const plan: SandboxPlan = {
    argv: ['C:\\Windows\\System32\\cmd.exe'], cwd: WS, workspace: WS, network: 'deny',
    env: { PATH: `${HOME}\\.aws\\tools` },
    writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: [] }], readRoots: [],
    denyRead: [`${HOME}\\.aws`], denyWrite: [], blockUnixSockets: true, limits: {},
  };
  const spec = buildAppContainerSpec(plan, { tmpDir: TMP, readGrants: { home: HOME, systemDirs: SYSTEM } });
  assert.not.ok(spec.aclPlan.some((e) => e.kind.startsWith('allow') && e.path.toLowerCase().includes('\\.aws')));
  assert.ok(spec.aclPlan.some((e) => e.kind === 'deny-read' && e.path === `${HOME}\\.aws`));
});

test('git config files of the user are readable (identity), nothing else in the profile', () => {
  const got = pairs(grants(''));
  assert.ok(got.includes(`allow-read ${HOME}\\.gitconfig`));
  assert.ok(got.includes(`allow-read ${HOME}\\.config\\git\\config`));
  assert.ok(got.includes(`allow-traverse ${HOME}\\.config\\git`));
  const reads = got.filter((g) => g.startsWith('allow-read '));
  assert.is(reads.length, 2, reads.join());
  // Without a known profile there are no git config grants.
  assert.not.ok(pairs(buildWindowsReadGrants({ roots: [WS], path: '' })).some((g) => g.includes('.gitconfig')));
});

test('in the spec: after the root grants, before the denies; denyRead still wins; native kinds carry ~', () => {
  const plan: SandboxPlan = {
    argv: ['C:\\Windows\\System32\\cmd.exe'], cwd: WS, workspace: WS, network: 'deny',
    env: { PATH: `${HOME}\\.cargo\\bin;C:\\Windows\\System32` },
    writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: [] }], readRoots: [],
    denyRead: [`${HOME}\\.cargo\\credentials.toml`], denyWrite: [], blockUnixSockets: true, limits: {},
  };
  const spec = buildAppContainerSpec(plan, { tmpDir: TMP, readGrants: { home: HOME, systemDirs: SYSTEM } });
  const kinds = spec.aclPlan.map((e) => e.kind);
  assert.ok(kinds.indexOf('allow-traverse') > kinds.indexOf('allow-write'));
  assert.ok(kinds.lastIndexOf('allow-read') < kinds.indexOf('deny-read'));
  assert.ok(spec.aclPlan.some((e) => e.kind === 'deny-read' && e.path === `${HOME}\\.cargo\\credentials.toml` && e.ifMissing === 'fail'));
  const native = buildNativeWindowsSpec(spec);
  assert.ok(native.aclKinds.includes('allow-traverse~'));
  assert.ok(native.aclKinds.includes('allow-read~'));
  assert.is(native.aclKinds.filter((k) => k.endsWith('~')).length, spec.aclPlan.filter((e) => e.ifMissing === 'best-effort').length);
  // Without read-grant facts the plan is the root grants only.
  assert.not.ok(buildAppContainerSpec(plan, { tmpDir: TMP }).aclPlan.some((e) => e.kind === 'allow-traverse'));
  // The grants are part of the policy: a different PATH is a different container.
  const other = buildAppContainerSpec({ ...plan, env: { PATH: 'C:\\Windows\\System32' } }, { tmpDir: TMP, readGrants: { home: HOME, systemDirs: SYSTEM } });
  assert.is.not(other.containerName, spec.containerName);
});

test('host facts: profile, node.exe directory and system directories from the environment, any case', () => {
  const facts = buildReadGrantFacts({ USERPROFILE: HOME, SYSTEMROOT: 'C:\\Windows', ProgramFiles: 'C:\\Program Files', 'ProgramFiles(x86)': 'C:\\Program Files (x86)' }, 'C:\\Program Files\\nodejs\\node.exe');
  assert.equal(facts, { home: HOME, execDir: 'C:\\Program Files\\nodejs', systemDirs: ['C:\\Windows', 'C:\\Program Files', 'C:\\Program Files (x86)'] });
});

test.run();
