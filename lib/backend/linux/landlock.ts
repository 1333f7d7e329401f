// SPDX-License-Identifier: MIT
// Pure builder of the Landlock ruleset for one plan: which rights the kernel should handle for the
// negotiated ABI, and which rights each path gets. The addon only applies the result.
import type { DirEntry } from '../../dir-listing.js';
import { DirectorySet } from '../../path-within.js';
import type { SandboxPlan } from '../types.js';
import { outermostRoots } from './mounts.js';

/** Landlock filesystem rights (uapi/linux/landlock.h), with the ABI that introduced each. */
export const FS = {
  EXECUTE: 1 << 0,
  WRITE_FILE: 1 << 1,
  READ_FILE: 1 << 2,
  READ_DIR: 1 << 3,
  REMOVE_DIR: 1 << 4,
  REMOVE_FILE: 1 << 5,
  MAKE_CHAR: 1 << 6,
  MAKE_DIR: 1 << 7,
  MAKE_REG: 1 << 8,
  MAKE_SOCK: 1 << 9,
  MAKE_FIFO: 1 << 10,
  MAKE_BLOCK: 1 << 11,
  MAKE_SYM: 1 << 12,
  REFER: 1 << 13, // ABI 2
  TRUNCATE: 1 << 14, // ABI 3
  IOCTL_DEV: 1 << 15, // ABI 5
} as const;

/** Landlock scopes (ABI 6). */
export const SCOPE = { ABSTRACT_UNIX_SOCKET: 1 << 0, SIGNAL: 1 << 1 } as const;

export type FsRight = keyof typeof FS;

/** Every filesystem right the kernel knows at a given ABI. */
export function buildHandledAccess(abi: number): number {
  let mask = 0;
  for (let bit = 0; bit <= 12; bit++) mask |= 1 << bit;
  if (abi >= 2) mask |= FS.REFER;
  if (abi >= 3) mask |= FS.TRUNCATE;
  if (abi >= 5) mask |= FS.IOCTL_DEV;
  return mask;
}

export function buildScoped(abi: number): number {
  return abi >= 6 ? SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL : 0;
}

/** Names of the rights set in a mask, for tests and diagnostics. */
export function rightsOf(mask: number): FsRight[] {
  return (Object.keys(FS) as FsRight[]).filter((name) => (mask & FS[name]) !== 0);
}

const READ = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;
const FILE_READ = FS.EXECUTE | FS.READ_FILE;
// Write roots get everything except creating device nodes (mknod needs CAP_MKNOD anyway).
const WRITE =
  FS.WRITE_FILE | FS.REMOVE_DIR | FS.REMOVE_FILE | FS.MAKE_DIR | FS.MAKE_REG | FS.MAKE_SOCK |
  FS.MAKE_FIFO | FS.MAKE_SYM | FS.REFER | FS.TRUNCATE;
const DEVICE = FS.READ_FILE | FS.WRITE_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

/** The character devices every command may read and write. */
export const SAFE_DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty'];

export interface LandlockRuleSpec {
  path: string;
  access: number;
  /** Added by the sandbox's first process after its own mounts exist (private /tmp, /proc, ...). */
  afterMounts: boolean;
}

export interface LandlockPlan {
  abi: number;
  handledFs: number;
  scoped: number;
  rules: LandlockRuleSpec[];
}

/** One entry of `/` as the host shows it: its name and whether it is (or points to) a directory. */
export interface RootEntry {
  name: string;
  directory: boolean;
  /** Where it resolves to, when it is a symlink. */
  target?: string;
}

/** An entry of a directory on the way to a denied path: its name and what it is (not followed). */
export type TreeEntry = DirEntry;

/**
 * Paths no read grant may cover, whether they exist or not, so that what appears there during the
 * run stays unreadable: every directory on the way to one gets its existing entries granted one
 * by one instead of as a whole, and an entry created later is covered by no grant.
 */
export interface ReadTree {
  /** Denied paths (absolute, clean, symlink-free up to their deepest existing ancestor). */
  denied: readonly string[];
  /** Directories granted entry by entry even with nothing denied in them yet (~/.ssh). */
  guarded: readonly string[];
  /** Lists a directory without following symlinks; undefined when it cannot be listed. */
  list(dir: string): readonly TreeEntry[] | undefined;
}

/**
 * Every strict ancestor of the denied paths and the guarded directories themselves, leaving out
 * those inside a write root: the root's own grant (read and write) covers everything below it,
 * so granting the entries on the way one by one would add nothing there but rules and listings
 * (1,000 denied files in a workspace were 1,000 directories listed and thousands of rules).
 */
function routesOf(tree: ReadTree, writeRoots: DirectorySet): Set<string> {
  const routes = new Set<string>(tree.guarded.filter((dir) => !writeRoots.holds(dir)));
  for (const path of [...tree.denied, ...tree.guarded]) {
    if (writeRoots.holds(path)) continue;
    for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) routes.add(path.slice(0, end));
  }
  return routes;
}

/**
 * Read-all, write-jail, expressed as allow rules: every top-level entry except /dev is readable
 * and executable; /dev exposes only a few safe devices (raw disks stay unreadable even to a root
 * caller); write roots and the sandbox's private mounts get write rights. With a `readTree`, the
 * directories on the way to a denied path are granted entry by entry (see ReadTree).
 */
export function buildLandlockPlan(
  plan: Pick<SandboxPlan, 'writeRoots'>,
  options: {
    abi: number;
    rootEntries: RootEntry[];
    privateTmp: boolean;
    readTree?: ReadTree;
    /** outermostRoots of the plan's write roots, when the caller has them already (the mount plan's). */
    separateRoots?: readonly string[];
  },
): LandlockPlan {
  const handledFs = buildHandledAccess(options.abi);
  const rules: LandlockRuleSpec[] = [];
  const add = (path: string, access: number, afterMounts = false) =>
    rules.push({ path, access: access & handledFs, afterMounts });
  add('/', FS.READ_DIR);
  const tree = options.readTree;
  const routes = tree === undefined ? new Set<string>() : routesOf(tree, new DirectorySet(options.separateRoots ?? plan.writeRoots.map((w) => w.root)));
  const denied = new Set(tree?.denied ?? []);
  // A route directory: listable (READ_DIR is inherited below), its entries granted one by one.
  // A symlink gets no rule: what it points to is governed by its own place in the tree.
  const expand = (dir: string, entries: readonly TreeEntry[] | undefined): void => {
    add(dir, FS.READ_DIR);
    const seen = new Set<string>();
    for (const entry of entries ?? []) {
      const path = `${dir}/${entry.name}`;
      seen.add(path);
      if (denied.has(path) || entry.kind === 'symlink') continue;
      if (entry.kind === 'dir' && routes.has(path)) expand(path, tree?.list(path));
      else add(path, entry.kind === 'dir' ? READ : FILE_READ);
    }
    // A directory we may not list (mode 711) still leads to the routes below it, and nothing else.
    if (entries === undefined) {
      for (const route of routes) {
        if (route.startsWith(`${dir}/`) && !route.slice(dir.length + 1).includes('/') && !seen.has(route)) expand(route, tree?.list(route));
      }
    }
  };
  for (const entry of options.rootEntries) {
    if (entry.name === 'dev') continue;
    const path = `/${entry.name}`;
    if (denied.has(path)) continue;
    // A symlink to a route (/home -> /data/home): its real place is expanded instead.
    const target = entry.target;
    if (target !== undefined && (denied.has(target) || routes.has(target) || [...routes].some((route) => route.startsWith(`${target}/`)))) continue;
    if (entry.directory && routes.has(path)) expand(path, tree?.list(path));
    else add(path, entry.directory ? READ : FILE_READ);
  }
  for (const device of SAFE_DEVICES) add(device, DEVICE);
  // One rule per separate write root: a root nested in another gets the same rights from the
  // outer one's rule (see "Nested write roots" in docs/architecture.md).
  const roots = plan.writeRoots.map((w) => w.root);
  const separate = new Set(options.separateRoots ?? outermostRoots(roots));
  for (const root of new Set(roots)) if (separate.has(root)) add(root, READ | WRITE);
  if (options.privateTmp) add('/tmp', READ | WRITE, true);
  add('/dev/shm', READ | WRITE, true);
  add('/dev/pts', FS.READ_DIR | DEVICE, true);
  add('/dev/ptmx', DEVICE, true);
  add('/proc', FS.READ_FILE | FS.READ_DIR, true);
  return { abi: options.abi, handledFs, scoped: buildScoped(options.abi), rules };
}
