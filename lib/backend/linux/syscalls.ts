// SPDX-License-Identifier: MIT
// System call numbers for the syscalls the seccomp filter names, on x86_64 and aarch64.

/** The architectures the Linux backend builds seccomp filters for. */
export type SeccompArch = 'x86_64' | 'aarch64';

/** Every architecture the builder supports, in a fixed order. */
export const SECCOMP_ARCHES: readonly SeccompArch[] = ['x86_64', 'aarch64'];

/**
 * One syscall's number per architecture; `null` where the architecture does not have it
 * (for example `uselib`, which the generic table that aarch64 uses never allocated).
 */
export interface SyscallNumbers {
  /** Number in arch/x86/entry/syscalls/syscall_64.tbl (the 64-bit ABI, not x32 or i386). */
  x86_64: number | null;
  /** Number in include/uapi/asm-generic/unistd.h, which arm64 uses as its native table. */
  aarch64: number | null;
}

/**
 * The syscalls the filter refers to, plus a few everyday ones the tests use as "must stay
 * allowed" probes. Numbers come from the kernel's tables: x86_64 from `unistd_64.h`, aarch64 from
 * `asm-generic/unistd.h`. Syscalls newer than the distro headers (6.1 here) are marked with the
 * kernel version that added them; the tests cross-check every number a local header defines.
 */
export const SYSCALL_TABLE: Readonly<Record<string, SyscallNumbers>> = {
  // Everyday syscalls (allowed; used as probes by the tests).
  read: { x86_64: 0, aarch64: 63 },
  write: { x86_64: 1, aarch64: 64 },
  close: { x86_64: 3, aarch64: 57 },
  ioctl: { x86_64: 16, aarch64: 29 },
  getpid: { x86_64: 39, aarch64: 172 },
  socket: { x86_64: 41, aarch64: 198 },
  connect: { x86_64: 42, aarch64: 203 },
  bind: { x86_64: 49, aarch64: 200 },
  socketpair: { x86_64: 53, aarch64: 199 },
  clone: { x86_64: 56, aarch64: 220 },
  execve: { x86_64: 59, aarch64: 221 },
  exit_group: { x86_64: 231, aarch64: 94 },
  openat: { x86_64: 257, aarch64: 56 },
  unshare: { x86_64: 272, aarch64: 97 },
  clone3: { x86_64: 435, aarch64: 435 },
  // Reading or writing other processes' memory.
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  // io_uring performs socket/open operations without the matching syscalls.
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  // Kernel keyrings.
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  keyctl: { x86_64: 250, aarch64: 219 },
  // Kernel attack surface: eBPF, perf, userfaultfd.
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  // Replacing the kernel or loading code into it.
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  // The mount API, old and new.
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  /** Linux 6.15; unified number on every architecture. */
  open_tree_attr: { x86_64: 467, aarch64: 467 },
  // System administration.
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  reboot: { x86_64: 169, aarch64: 142 },
  acct: { x86_64: 163, aarch64: 89 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  /** Removed in Linux 6.8 (the number stays reserved); denied so an older kernel cannot serve it. */
  lookup_dcookie: { x86_64: 212, aarch64: 18 },
  vhangup: { x86_64: 153, aarch64: 58 },
  // Opening files by handle bypasses path-based checks (the "shocker" container escape).
  name_to_handle_at: { x86_64: 303, aarch64: 264 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  // Legacy library loading; x86 only.
  uselib: { x86_64: 134, aarch64: null },
  personality: { x86_64: 135, aarch64: 92 },
};

/** The number of `name` on `arch`, or `undefined` when the syscall does not exist there. */
export function syscallNumber(name: string, arch: SeccompArch): number | undefined {
  if (!Object.hasOwn(SYSCALL_TABLE, name)) return undefined;
  const value = SYSCALL_TABLE[name]?.[arch];
  return value === null || value === undefined ? undefined : value;
}
