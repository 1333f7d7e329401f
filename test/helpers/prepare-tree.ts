// SPDX-License-Identifier: MIT
// A host tree for the preparation-equivalence test (repositories nested and linked, symlinks,
// credentials in a fake home) and a snapshot of everything the Linux preparation derives from it.
import { createHash } from 'node:crypto';
import { mkdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { buildLinuxSpec, hostViewOf, type LinuxNativeSpec } from '../../lib/backend/linux/spec.js';
import type { RootEntry } from '../../lib/backend/linux/landlock.js';
import type { SandboxPlan, WritableRoot } from '../../lib/backend/types.js';
import { HostFacts } from '../../lib/host-facts.js';
import { buildPrewarmKey } from '../../lib/sandbox/prewarm.js';
import { prepareLinux } from '../../lib/backend/linux/start.js';
import type { SandboxOptions } from '../../lib/sandbox/options.js';

/** A fixed view of `/` so the snapshot does not depend on the machine. */
export const FIXED_ROOT_ENTRIES: RootEntry[] = [
  { name: 'bin', directory: true }, { name: 'dev', directory: true }, { name: 'etc', directory: true },
  { name: 'proc', directory: true }, { name: 'tmp', directory: true }, { name: 'usr', directory: true },
];

function write(path: string, text = '\n'): void {
  writeFileSync(path, text);
}

/**
 * Builds the tree under `base`: `home/` (ssh keys, an npmrc with a token, a symlinked netrc, a
 * dangling kube config, Zero's config dir), `ws/` (a repository with .agents, a nested repository,
 * a linked worktree whose .git file points into the main repository, a symlinked directory,
 * node_modules), `extra/` (a second write root that is a repository) and `secrets/`.
 */
export function buildPrepareTree(base: string): { home: string; ws: string; extra: string } {
  const home = join(base, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  write(join(home, '.ssh', 'id_ed25519'), 'private\n');
  write(join(home, '.ssh', 'id_ed25519.pub'));
  write(join(home, '.ssh', 'known_hosts'));
  mkdirSync(join(home, '.aws'));
  write(join(home, '.npmrc'), 'registry=https://npm.example.com/\n//npm.example.com/:_authToken=secret\n');
  mkdirSync(join(base, 'secrets'));
  write(join(base, 'secrets', 'netrc'), 'machine example.com password x\n');
  symlinkSync(join(base, 'secrets', 'netrc'), join(home, '.netrc'));
  mkdirSync(join(home, '.kube'));
  symlinkSync(join(base, 'nowhere'), join(home, '.kube', 'config'));
  mkdirSync(join(home, '.config', 'zero', 'plugins'), { recursive: true });
  write(join(home, '.config', 'zero', 'grants.json'), '{}\n');

  const ws = join(base, 'ws');
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  write(join(ws, '.git', 'config'), '[core]\n');
  mkdirSync(join(ws, '.agents'));
  mkdirSync(join(ws, 'src'));
  write(join(ws, 'src', 'locked.txt'));
  write(join(ws, 'private.txt'));
  mkdirSync(join(ws, 'node_modules', 'pkg', '.git'), { recursive: true });
  // A nested repository without a hooks dir yet (its config exists).
  mkdirSync(join(ws, 'vendor', '.git'), { recursive: true });
  write(join(ws, 'vendor', '.git', 'config'), '[core]\n');
  // A linked worktree: its git dir lives in the main repository, with a commondir back to it.
  const gitDir = join(ws, '.git', 'worktrees', 'feature');
  mkdirSync(join(gitDir, 'hooks'), { recursive: true });
  write(join(gitDir, 'commondir'), '../..\n');
  mkdirSync(join(ws, 'feature'));
  write(join(ws, 'feature', '.git'), `gitdir: ${gitDir}\n`);
  symlinkSync(join(ws, 'src'), join(ws, 'src-link'));
  write(join(ws, 'README.md'));

  const extra = join(base, 'extra');
  mkdirSync(join(extra, '.git', 'hooks'), { recursive: true });
  mkdirSync(join(extra, 'build'));
  return { home, ws, extra };
}

/** Replaces every occurrence of the random parts (base dir, runtime key) with stable markers. */
function stable(text: string, base: string): string {
  return text.split(base).join('<base>').replace(/\/v1\/[0-9a-f]{16}/g, '/v1/<key>');
}

/** Everything one prepared call derives from the host, made stable. */
export interface PrepareSnapshot {
  /** The SandboxPlan, as JSON. */
  plan: unknown;
  /** The Linux native spec, seccomp words as hex, without this kernel's /proc entries. */
  spec: unknown;
  /** The protected paths noted as missing before the run. */
  watched: string[];
  /** sha256 of the prewarm key (which repeats the spec). */
  keySha256: string;
}

/** The plan and spec as JSON values; the /proc entries this kernel has are left out (machine-dependent). */
function plain(plan: SandboxPlan, spec: LinuxNativeSpec): { plan: unknown; spec: unknown } {
  const mounts = spec.linux.mounts.filter((op) => !(op.kind === 'readonly_bind' && op.path.startsWith('/proc/')));
  return { plan, spec: { ...spec, linux: { ...spec.linux, mounts, seccomp: Array.from(spec.linux.seccomp, (w) => w.toString(16)) } } };
}

/** How many links of a chain are followed to find where a dangling protected link points. */
const MAX_LINK_HOPS = 8;

/**
 * Where a dangling symlink at a protected path (planted on the host, e.g. by a checkout) points:
 * the missing path a command could create to fill `.zero` through the link. Undefined when `path`
 * is not a dangling link.
 */
function danglingTarget(path: string, facts: HostFacts): string | undefined {
  let current = path;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    let st;
    try {
      st = facts.lstat(current);
    } catch {
      return undefined;
    }
    if (st === undefined) return current === path ? undefined : current;
    if (!st.isSymbolicLink()) return undefined; // it resolves: the spec makes it read-only
    try {
      current = resolve(dirname(current), readlinkSync(current));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The protected paths that are absent now and would matter if created. `facts` are this call's,
 * shared with the plan and the spec (see host-facts.ts); by default every path is looked up afresh.
 */
function missingProtectedPaths(roots: readonly WritableRoot[], facts: HostFacts = new HostFacts()): string[] {
  const out: string[] = [];
  const exists = (path: string) => facts.lstat(path) !== undefined;
  for (const root of roots) {
    for (const name of root.protectedNames) {
      const path = join(root.root, name);
      if (!exists(path)) out.push(path);
      else {
        // A dangling link there: what the command creates where it points becomes .zero/.agents.
        const target = danglingTarget(path, facts);
        if (target !== undefined) out.push(target);
      }
    }
    // A repository the command creates itself is its own; only git dirs that exist are guarded.
    const gitDirs = new Set<string>();
    for (const sub of root.readOnlySubpaths) {
      if (!/\/(hooks|config)$/.test(sub)) continue;
      const dir = dirname(sub);
      if (!facts.lstat(dir)?.isDirectory()) continue;
      gitDirs.add(dir);
      if (!exists(sub)) out.push(sub);
    }
    // A planted commondir would point git at a config and hooks dir of the command's choosing.
    for (const dir of gitDirs) {
      const commondir = join(dir, 'commondir');
      if (!exists(commondir)) out.push(commondir);
    }
  }
  return out;
}

/**
 * Runs the Linux preparation path once (as spawnSandboxed does, minus the launch) and snapshots
 * it. `shareFacts: false` builds the spec and the protected-path note with fresh look-ups instead
 * of the facts the plan was resolved with.
 */
export function snapshotPrepare(base: string, command: readonly string[], options: SandboxOptions, shareFacts = true): PrepareSnapshot {
  const prepared = prepareLinux(command, options);
  const plan = prepared.plan;
  try {
    const facts = shareFacts ? prepared.takeFacts() : undefined;
    const context = { landlockAbi: 6, isRoot: false, arch: 'x64', bindingPath: '/pkg/build/Release/zero_sandbox.node' };
    const built = buildLinuxSpec(plan, ['pipe', 'pipe', 'pipe'], context, facts === undefined ? undefined : hostViewOf(facts), FIXED_ROOT_ENTRIES);
    // A hidden host directory outside the tree (/root for a root caller) lists this machine's files.
    const mounts = built.linux.mounts.map((op) => (op.kind === 'mask_dir' && op.names !== undefined && !op.path.startsWith(base) ? { ...op, names: ['<host files>'] } : op));
    const spec = { ...built, linux: { ...built.linux, mounts } };
    const watched = missingProtectedPaths(plan.writeRoots, facts);
    const key = buildPrewarmKey(spec);
    const parsed = JSON.parse(stable(JSON.stringify(plain(plan, spec)), base)) as { plan: unknown; spec: unknown };
    return {
      plan: parsed.plan,
      spec: parsed.spec,
      watched: watched.map((path) => stable(path, base)),
      keySha256: createHash('sha256').update(stable(key, base)).digest('hex'),
    };
  } finally {
    prepared.release();
  }
}
