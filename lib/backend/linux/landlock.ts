// SPDX-License-Identifier: MIT
// Pure builder of the Landlock ruleset for one plan: which rights the kernel should handle for the
// negotiated ABI, and which rights each path gets. The addon only applies the result.
import type { SandboxPlan } from '../types.js';

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
}

/**
 * Read-all, write-jail, expressed as allow rules: every top-level entry except /dev is readable
 * and executable; /dev exposes only a few safe devices (raw disks stay unreadable even to a root
 * caller); write roots and the sandbox's private mounts get write rights.
 */
export function buildLandlockPlan(
  plan: Pick<SandboxPlan, 'writeRoots'>,
  options: { abi: number; rootEntries: RootEntry[]; privateTmp: boolean },
): LandlockPlan {
  const handledFs = buildHandledAccess(options.abi);
  const rules: LandlockRuleSpec[] = [];
  const add = (path: string, access: number, afterMounts = false) =>
    rules.push({ path, access: access & handledFs, afterMounts });
  add('/', FS.READ_DIR);
  for (const entry of options.rootEntries) {
    if (entry.name === 'dev') continue;
    add(`/${entry.name}`, entry.directory ? READ : FILE_READ);
  }
  for (const device of SAFE_DEVICES) add(device, DEVICE);
  for (const root of plan.writeRoots) add(root.root, READ | WRITE);
  if (options.privateTmp) add('/tmp', READ | WRITE, true);
  add('/dev/shm', READ | WRITE, true);
  add('/dev/pts', FS.READ_DIR | DEVICE, true);
  add('/dev/ptmx', DEVICE, true);
  add('/proc', FS.READ_FILE | FS.READ_DIR, true);
  return { abi: options.abi, handledFs, scoped: buildScoped(options.abi), rules };
}
