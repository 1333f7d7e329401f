// SPDX-License-Identifier: MIT
// Pure builder of the ordered mount operations that shape the sandbox's view of the filesystem:
// everything read-only (metadata included, which Landlock does not cover), write roots re-attached
// writable, protected paths read-only inside them, deny-read paths masked, a private /tmp,
// /dev/shm and devpts, and a fresh /proc for the new pid namespace.
import { dirname } from 'node:path';

import type { SandboxPlan } from '../types.js';
import { DirectorySet, hasPrefix, isWithin } from '../../path-within.js';
import { SandboxError } from '../../errors.js';
import { standardSubpaths } from '../../sandbox/standard-subpaths.js';

/** The mount vocabulary native/linux/child_setup.cc applies, in order. */
export type MountKind =
  | 'detach_clone'
  | 'readonly_all'
  | 'tmpfs'
  | 'mkdirs'
  | 'attach'
  | 'readonly_bind'
  | 'readonly_real'
  | 'pin'
  | 'snapshot'
  | 'mask_file'
  | 'mask_dir'
  | 'proc'
  | 'devpts';

export interface MountOp {
  kind: MountKind;
  path: string;
  /** The detached-mount slot for detach_clone/attach; for a capped tmpfs, its watch slot. */
  slot?: number;
  /** tmpfs: its size cap in bytes. */
  size?: number;
  /** mask_dir: the files it shows as empty, watched stand-ins (the hidden directory's files). */
  names?: string[];
  /** pin: the directory relative to its write root, bound from the snapshot taken before. */
  from?: string;
  /**
   * mask_file: the path is a denyWrite entry too (a real path): a link found at its end at mount
   * time is refused, as the read-only bind the mask stands in for refuses it.
   */
  real?: true;
}

/** What the host looks like, as far as the mount plan needs to know (injected for tests). */
export interface HostView {
  /** Whether a path exists, and whether it is a directory (no symlink following). */
  kind(path: string): 'file' | 'dir' | 'missing';
  /** The /proc entries that must stay read-only and exist on this kernel. */
  procReadonly: string[];
  /** The names of the files (not directories or symlinks) directly in a directory. */
  files?(path: string): string[];
  /**
   * For a directory already listed: its number of entries, and whether a name directly in it may
   * exist (false: it is missing). Undefined when unknown. Spares a look per protected name of a write root.
   */
  listedIn?(dir: string): { size: number; mayHold(name: string): boolean } | undefined;
}

/**
 * From this many pins in one write root on, they are bound from a snapshot of the root (two mount
 * calls more for the root, none per pin) rather than each from its own path (a cost that grows
 * with the pins made before it).
 */
export const SNAPSHOT_PINS = 16;

/** At most this many stand-ins per hidden directory (a bounded cost per run); the rest are absent. */
export const MASK_DIR_STANDINS = 64;

export const PROC_READONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];

/**
 * Separate write roots (none inside another) a sandbox takes, at most: each is one detached clone
 * held open until it is attached (kMountSlots in native/linux/child_setup.h). Nested roots do not
 * count (the clone of the outer one holds them).
 */
export const MAX_SEPARATE_WRITE_ROOTS = 256;

/**
 * Write roots without the ones nested in another (a clone of the outer one already holds them),
 * shortest first. Each root asks only its own ancestors (DirectorySet): the cost grows with the
 * roots' depth, not with their number. A root beneath another is dropped whether or not that one
 * is itself nested: the outermost above both holds it.
 */
export function outermostRoots(roots: readonly string[]): string[] {
  const all = new DirectorySet(roots, '/');
  return [...new Set(roots)].sort((a, b) => a.length - b.length).filter((root) => all.holderAbove(root) === undefined);
}

/** How many separators a path has (its depth; split('/') per comparison made sorting slow). */
function depthOf(path: string): number {
  let depth = 0;
  for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) depth++;
  return depth;
}

/**
 * The mount operations for a plan. `sizes` caps the private /tmp and /dev/shm (RAM-backed and
 * charged to no process: unbounded, a command could fill the host's memory).
 */
export function buildMountPlan(
  plan: Pick<SandboxPlan, 'writeRoots' | 'denyRead' | 'denyWrite'>,
  host: HostView,
  sizes: { tmpBytes?: number; shmBytes?: number } = {},
): { ops: MountOp[]; privateTmp: boolean; separateRoots: string[] } {
  const ops: MountOp[] = [];
  const roots = outermostRoots(plan.writeRoots.map((w) => w.root));
  if (roots.length > MAX_SEPARATE_WRITE_ROOTS) {
    throw new SandboxError('invalid_argument', `allowWrite: ${roots.length} separate write roots (the workspace, allowWrite entries and managed caches, none inside another), at most ${MAX_SEPARATE_WRITE_ROOTS} are supported on Linux; give a common parent directory instead of many siblings`, { path: roots[MAX_SEPARATE_WRITE_ROOTS] as string });
  }
  // A write root that is /tmp itself (or holds it) keeps the host's /tmp: no private one then.
  const privateTmp = !roots.some((root) => isWithin(root, '/tmp'));
  const separate = new DirectorySet(roots);
  // Under the private /tmp (outside a write root there) and under /dev/shm (always the sandbox's
  // own; no write root may lie in /dev) the host's files are not visible in the sandbox: nothing of
  // theirs to mask or make read-only, and no path there to mount onto.
  const hostHidden = (path: string) => (privateTmp && isWithin('/tmp', path) && !separate.holds(path)) || isWithin('/dev/shm', path);
  roots.forEach((root, slot) => ops.push({ kind: 'detach_clone', path: root, slot }));
  ops.push({ kind: 'readonly_all', path: '/' });
  // A capped tmpfs gets a watch slot (0 /tmp, 1 /dev/shm): the sandbox's init reports it when it
  // is full once the command has ended (limitsHit tmpBytes / shmBytes).
  const tmpfs = (path: string, size: number | undefined, slot: number): MountOp => (size === undefined ? { kind: 'tmpfs', path } : { kind: 'tmpfs', path, size, slot });
  if (privateTmp) ops.push(tmpfs('/tmp', sizes.tmpBytes, 0));
  ops.push(tmpfs('/dev/shm', sizes.shmBytes, 1));
  roots.forEach((root, slot) => {
    if (privateTmp && isWithin('/tmp', root)) ops.push({ kind: 'mkdirs', path: root });
    ops.push({ kind: 'attach', path: root, slot });
  });
  // Read-only targets inside write roots: protected git paths, existing .zero/.agents, denyWrite.
  const targets: string[] = [];
  // A path whose directory is not a directory is missing too (kind follows links, as the stat
  // of the path would): most protected files sit in a directory of their own (.git, .claude,
  // .vscode) that most write roots lack, asked once for all of them.
  const present = (root: string, path: string) => {
    const dir = dirname(path);
    return (dir === root || host.kind(dir) === 'dir') && host.kind(path) !== 'missing';
  };
  for (const root of plan.writeRoots) {
    // Most protected paths of a root start with a name its listing lacks (.git, .claude, ...
    // in a build directory): missing, known without a look each. Only paths inside the root are
    // known so (a nested checkout's .git file may point elsewhere).
    const listed = host.listedIn?.(root.root);
    const prefix = root.root === '/' ? '/' : `${root.root}/`;
    // The entries buildWritableRoot made come with their first name (standard-subpaths.ts): the
    // same name the cut below gives, without reading each string.
    const standard = listed === undefined ? undefined : standardSubpaths(root.readOnlySubpaths, root.root, '/');
    root.readOnlySubpaths.forEach((sub, i) => {
      if (listed !== undefined) {
        let first = standard !== undefined && i < standard.made.length && sub === standard.made[i] ? standard.firsts[i] : undefined;
        if (first === undefined && hasPrefix(sub, prefix)) {
          const end = sub.indexOf('/', prefix.length);
          first = sub.slice(prefix.length, end === -1 ? undefined : end);
        }
        if (first !== undefined && (listed.size === 0 || !listed.mayHold(first))) return;
      }
      if (present(root.root, sub)) targets.push(sub);
    });
    if (listed?.size === 0) continue;
    for (const name of root.protectedNames) {
      if (listed !== undefined && !listed.mayHold(name)) continue;
      const path = `${root.root}/${name}`;
      if (host.kind(path) !== 'missing') targets.push(path);
    }
  }
  // A denyWrite entry is a real path (the plan resolved it): bound in place, a link found there
  // at mount time is refused (see BindReadonlyInPlace in native/linux/mount_calls.h).
  const real = new Set<string>();
  for (const path of plan.denyWrite) {
    if (hostHidden(path) || host.kind(path) === 'missing') continue;
    targets.push(path);
    real.add(path);
  }
  // Pin every directory between a write root and a read-only target (a writable bind onto
  // itself): a mount point cannot be renamed or removed, so renaming a parent cannot carry the
  // read-only mount away and leave the original path free for a file of the command's choosing.
  const pins = new Map<string, string>();
  for (const target of targets) {
    const root = separate.holderOf(target);
    if (root === undefined) continue;
    for (let dir = dirname(target); dir !== root && isWithin(root, dir); dir = dirname(dir)) {
      // A pin met again: the walk that added it went on to the root already (1,000 denied files
      // of a workspace share their upper directories).
      if (pins.has(dir)) break;
      if (host.kind(dir) === 'dir') pins.set(dir, root);
    }
  }
  // Root by root (a pin never lies in another separate root); outer pins first (a pin mounted
  // later would hide one inside it), then in code-unit order (the same whatever the locale, and no
  // collation per comparison). A root with many pins takes them from a snapshot of itself made
  // before the first (see Snapshot in native/linux/masks.h): a pin bound from the root itself costs
  // the kernel a look at every pin before it.
  const byRoot = [...pins].map(([dir, root]) => ({ dir, root, depth: depthOf(dir) }));
  byRoot.sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : a.depth - b.depth || (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0)));
  const counts = new Map<string, number>();
  for (const { root } of byRoot) counts.set(root, (counts.get(root) ?? 0) + 1);
  byRoot.forEach(({ dir, root }, i) => {
    if ((counts.get(root) as number) < SNAPSHOT_PINS) {
      ops.push({ kind: 'pin', path: dir });
      return;
    }
    if (byRoot[i - 1]?.root !== root) ops.push({ kind: 'snapshot', path: root });
    ops.push({ kind: 'pin', path: dir, from: dir.slice(root.length + 1) });
  });
  // A denyWrite file that is also denyRead gets its mask only: the mask is a read-only mount over
  // the same path, so the read-only bind beneath it would never be reached, and each mount costs
  // every run twice (copied with the namespace at the start, torn down at the exit). Its pins
  // above stay: renaming a parent must not carry the mask away and free the path for a file of
  // the command's choosing; and its mask refuses a link at its end as the bind did (`real`).
  const maskedFiles = new Set<string>();
  const masks: MountOp[] = [];
  for (const path of plan.denyRead) {
    // (The file masks are also staged in the sandbox's own /dev/shm while they are made.)
    if (hostHidden(path)) continue;
    const kind = host.kind(path);
    if (kind === 'file') {
      masks.push(real.has(path) ? { kind: 'mask_file', path, real: true } : { kind: 'mask_file', path });
      maskedFiles.add(path);
    } else if (kind === 'dir') {
      // Its files get empty stand-ins, so that reading one is seen and reported as a file mask's
      // open is; the directory itself cannot be listed (mode 0111), so the names stay unlisted.
      const names = (host.files?.(path) ?? []).filter((name) => name.length <= 255 && !name.includes('/')).sort().slice(0, MASK_DIR_STANDINS);
      masks.push(names.length > 0 ? { kind: 'mask_dir', path, names } : { kind: 'mask_dir', path });
    }
  }
  for (const path of targets) {
    if (!real.has(path)) ops.push({ kind: 'readonly_bind', path });
    else if (!maskedFiles.has(path)) ops.push({ kind: 'readonly_real', path });
  }
  ops.push(...masks);
  ops.push({ kind: 'proc', path: '/proc' });
  for (const path of host.procReadonly) ops.push({ kind: 'readonly_bind', path });
  ops.push({ kind: 'devpts', path: '/dev/pts' });
  return { ops, privateTmp, separateRoots: roots };
}

/**
 * The hidden paths the addon saw opened, each with the mask that hid it (the path itself, or the
 * hidden directory holding it). The addon's indices count the watched masks in mount order: each
 * mask_file, and each stand-in of a mask_dir.
 */
export function maskedPaths(mounts: readonly MountOp[], indices: readonly number[] | undefined): Array<{ path: string; mask: string }> {
  if (indices === undefined) return [];
  const masks = mounts.flatMap((op) => (op.kind === 'mask_file' ? [{ path: op.path, mask: op.path }] : op.kind === 'mask_dir' ? (op.names ?? []).map((name) => ({ path: `${op.path}/${name}`, mask: op.path })) : []));
  return indices.flatMap((i) => (masks[i] === undefined ? [] : [masks[i]]));
}
