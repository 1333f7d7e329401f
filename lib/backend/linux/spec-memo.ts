// SPDX-License-Identifier: MIT
// The sandbox part of a repeated plan's Linux spec (mounts, Landlock rules, seccomp, limits), kept
// across runs (sandbox/watched-memo.ts) while nothing it looked at changed.
//
// What buildLinuxSandbox reads, and why each is covered:
// - The plan's write roots (each root, its read-only subpaths and protected names), deny-read and
//   deny-write paths, deny-read tree, network, unix-socket block and limits, and the context (the
//   Landlock ABI, root or not, the architecture, the binding's path, the pids cgroup, pid_max):
//   in the key, compared element by element (a frozen array kept by the plan memo is the same
//   array, content and all; any other is compared string by string).
// - The kinds of the mount targets and the listings of the write roots (HostFacts through the
//   host view: logged per path asked, the directory of each watched), the files of a hidden
//   directory and the directories of the Landlock read tree (dir-listing.ts: each directory listed
//   is watched itself). A kind that follows a link: off the memo.
// - The entries of "/" (spec.ts hostRootEntries) and the /proc paths that stay read-only are read
//   once per process by spec.ts, whether or not the memo is used; the memory size behind the
//   default tmpfs caps is read once when the module loads.
// - Nothing of it reads a file's content.
// argv, env, cwd and stdio are each run's own: put in around the kept part (launchSpec).
import type { WritableRoot } from '../types.js';
import { sameList } from '../../same-lists.js';
import { POLICIES_KEPT } from '../../sandbox/kept-bounds.js';
import { deepFreeze, frozenRoot, WatchedMemo } from '../../sandbox/watched-memo.js';
import type { HostView } from './mounts.js';
import { buildLinuxSandbox, type LinuxNativeSpec, type LinuxSpecContext, type SandboxFields } from './spec.js';

interface SpecKey {
  fields: SandboxFields;
  context: LinuxSpecContext;
}

/** Frozen, so its content is what it was when it was kept. */
function frozen(list: readonly unknown[]): boolean {
  return Object.isFrozen(list);
}

function sameRoot(a: WritableRoot, b: WritableRoot): boolean {
  if (a === b && frozenRoot(a)) return true;
  return a.root === b.root && sameList(a.readOnlySubpaths, b.readOnlySubpaths) && sameList(a.protectedNames, b.protectedNames);
}

/**
 * Lists of write roots found frozen with every root and its arrays frozen (the plan memo's, given
 * run after run): such a list is its content for good, so the same list is the same roots without
 * a look at each of its thousand roots.
 */
const frozenRootLists = new WeakSet<readonly WritableRoot[]>();

function rootsFrozen(list: readonly WritableRoot[]): boolean {
  if (frozenRootLists.has(list)) return true;
  if (!frozen(list) || !list.every(frozenRoot)) return false;
  frozenRootLists.add(list);
  return true;
}

function sameRecord(a: object, b: object): boolean {
  const x = Object.entries(a);
  const y = Object.entries(b);
  if (x.length !== y.length) return false;
  const byName = new Map(y);
  return x.every(([name, value]) => byName.has(name) && byName.get(name) === value);
}

/**
 * Whether kept key `a` and given key `b` are the same. Where they are equal by content and `b`'s
 * array (or root) is frozen, `a` takes it: the next comparison is then one of identity (the plan
 * memo hands out the same frozen arrays run after run; the key kept first may hold copies).
 */
function sameKey(a: SpecKey, b: SpecKey): boolean {
  const f = a.fields;
  const g = b.fields;
  if (f.network !== g.network || f.blockUnixSockets !== g.blockUnixSockets || !sameRecord(f.limits, g.limits) || !sameRecord(a.context, b.context)) return false;
  if (!sameList(f.denyRead, g.denyRead) || !sameList(f.denyWrite, g.denyWrite)) return false;
  if ((f.denyReadTree === undefined) !== (g.denyReadTree === undefined)) return false;
  if (f.denyReadTree !== undefined && g.denyReadTree !== undefined && (!sameList(f.denyReadTree.denied, g.denyReadTree.denied) || !sameList(f.denyReadTree.guarded, g.denyReadTree.guarded))) return false;
  if (f.writeRoots !== g.writeRoots || !frozenRootLists.has(g.writeRoots)) {
    if (f.writeRoots.length !== g.writeRoots.length) return false;
    for (let i = 0; i < f.writeRoots.length; i++) if (!sameRoot(f.writeRoots[i] as WritableRoot, g.writeRoots[i] as WritableRoot)) return false;
  }
  // Equal: adopt what of `b` is frozen (a.fields and its writeRoots array are the memo's own copies).
  if (frozen(g.denyRead)) f.denyRead = g.denyRead;
  if (frozen(g.denyWrite)) f.denyWrite = g.denyWrite;
  if (f.denyReadTree !== undefined && g.denyReadTree !== undefined && frozen(g.denyReadTree.denied) && frozen(g.denyReadTree.guarded)) f.denyReadTree = g.denyReadTree;
  if (f.writeRoots === g.writeRoots) return true;
  if (rootsFrozen(g.writeRoots)) f.writeRoots = g.writeRoots as WritableRoot[];
  else {
    // The memo's own list (one adopted before is frozen: copied to adopt into).
    if (frozen(f.writeRoots)) f.writeRoots = [...f.writeRoots];
    g.writeRoots.forEach((w, i) => {
      if (frozenRoot(w)) f.writeRoots[i] = w;
    });
  }
  return true;
}

const kept = <T>(list: readonly T[]): T[] => (frozen(list) ? (list as T[]) : [...list]);

/** The key as the memo keeps it: frozen arrays as they are, the others copied. */
function copyKey(key: SpecKey): SpecKey {
  const f = key.fields;
  const writeRoots = f.writeRoots.map((w) => (frozenRoot(w) ? w : deepFreeze({ root: w.root, readOnlySubpaths: [...w.readOnlySubpaths], protectedNames: [...w.protectedNames] })));
  const fields: SandboxFields = {
    writeRoots,
    denyRead: kept(f.denyRead),
    denyWrite: kept(f.denyWrite),
    network: f.network,
    blockUnixSockets: f.blockUnixSockets,
    limits: { ...f.limits },
    ...(f.denyReadTree === undefined ? {} : { denyReadTree: { denied: kept(f.denyReadTree.denied), guarded: kept(f.denyReadTree.guarded) } }),
  };
  return { fields, context: { ...key.context } };
}

const sandboxes = new WatchedMemo<SpecKey, LinuxNativeSpec['linux']>(POLICIES_KEPT, sameKey, copyKey);

/**
 * buildLinuxSandbox(plan, context, host), or the one kept for the same fields and context while
 * nothing it looked at changed (see the header). A kept one is frozen and shared between runs.
 * `since`: the epoch of the facts behind `host` (HostFacts.epoch; they may have been gathered
 * turns before, when a burst deferred this start).
 */
export function rememberedSandbox(plan: SandboxFields, context: LinuxSpecContext, host: HostView, since: number): LinuxNativeSpec['linux'] {
  return sandboxes.get({ fields: plan, context }, () => buildLinuxSandbox(plan, context, host), since);
}

/** Drops every kept sandbox (tests). */
export function forgetSandboxes(): void {
  sandboxes.clear();
}
