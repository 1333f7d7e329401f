// SPDX-License-Identifier: MIT
// Builds the classic-BPF seccomp filter the Linux backend installs in every sandboxed command.
import { SandboxError } from '../../errors.js';
import type { NetworkMode } from '../types.js';
import { buildBpfProgram, encodeBpfInstructions, type BpfInstruction, type BpfSourceLine } from './bpf.js';
import { SECCOMP_ARCHES, syscallNumber, type SeccompArch } from './syscalls.js';

export type { SeccompArch } from './syscalls.js';

/** `AUDIT_ARCH_*` values the kernel reports in `seccomp_data.arch` (linux/audit.h). */
export const AUDIT_ARCH: Readonly<Record<SeccompArch, number>> = {
  /** EM_X86_64 (62) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
  x86_64: 0xc000003e,
  /** EM_AARCH64 (183) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE; big-endian arm64 differs, and is refused. */
  aarch64: 0xc00000b7,
};

/** Filter verdicts (linux/seccomp.h). */
export const SECCOMP_RET = {
  /**
   * Kill the whole thread group (Linux 4.14). Older kernels mask the action with 0x7fff0000 and
   * read this value as SECCOMP_RET_KILL (kill the thread), so it still never runs the syscall.
   */
  KILL_PROCESS: 0x80000000,
  /** Fail the syscall with the errno in the low 16 bits. */
  ERRNO: 0x00050000,
  /** Run the syscall. */
  ALLOW: 0x7fff0000,
} as const;

/** `EPERM`, the errno every denied syscall returns (the same on x86_64 and aarch64). */
export const EPERM = 1;

/** Byte offsets into `struct seccomp_data` (linux/seccomp.h). */
export const SECCOMP_DATA = {
  /** `int nr`: the syscall number. */
  nr: 0,
  /** `__u32 arch`: an AUDIT_ARCH_* value. */
  arch: 4,
  /** `__u64 instruction_pointer`. */
  instructionPointer: 8,
} as const;

/**
 * Offset of the low 32 bits of `seccomp_data.args[index]`. The args are 64-bit; both supported
 * architectures are little-endian, so the low word comes first.
 */
export function seccompArgLowOffset(index: number): number {
  return 16 + 8 * index;
}

/** Bit 30 marks the x32 ABI's syscall numbers on x86_64 (`__X32_SYSCALL_BIT`). */
export const X32_SYSCALL_BIT = 0x40000000;

/** Socket address families the filter looks at (linux/socket.h). */
export const AF_UNIX = 1;
/** Host/guest sockets: reach the hypervisor or other VMs, outside any network namespace. */
export const AF_VSOCK = 40;

/** Terminal ioctls that let a process inject input or drive the console (asm-generic/ioctls.h). */
export const TIOCSTI = 0x5412;
/** See {@link TIOCSTI}; TIOCLINUX can also paste the selection into the console's input. */
export const TIOCLINUX = 0x541c;

/**
 * `personality()` values the filter lets through; every other persona fails with EPERM. These are
 * the values Docker's default profile allows: `PER_LINUX` (0), `PER_LINUX32` (0x8, only changes
 * `uname -m`), `UNAME26` (0x20000, reports a 2.6 kernel version for old build scripts), both of the
 * last two, and `0xffffffff`, which only queries the current persona. Denied are the flags that
 * weaken the process's memory layout or change syscall semantics (`READ_IMPLIES_EXEC`,
 * `ADDR_NO_RANDOMIZE`, `ADDR_LIMIT_*`, `MMAP_PAGE_ZERO`, other execution domains).
 */
export const ALLOWED_PERSONALITIES: readonly number[] = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/**
 * Syscalls denied with EPERM whatever their arguments. Names that an
 * architecture does not have are skipped on that architecture.
 */
export const DENIED_SYSCALLS: readonly string[] = [
  'ptrace', 'process_vm_readv', 'process_vm_writev',
  'io_uring_setup', 'io_uring_enter', 'io_uring_register',
  'keyctl', 'add_key', 'request_key',
  'bpf', 'perf_event_open', 'userfaultfd',
  'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module',
  'mount', 'umount2', 'mount_setattr', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'move_mount',
  'open_tree', 'open_tree_attr', 'pivot_root',
  'swapon', 'swapoff', 'reboot', 'acct', 'quotactl', 'quotactl_fd', 'lookup_dcookie',
  'open_by_handle_at', 'name_to_handle_at', 'uselib', 'vhangup',
];

/** What to build a filter for. */
export interface SeccompOptions {
  /** The architecture of the process that installs the filter (see {@link seccompArchFor}). */
  arch: SeccompArch;
  /** `deny` also blocks creating AF_UNIX sockets (the network namespace cannot hide host sockets). */
  network: NetworkMode;
  /** Block `socket(AF_UNIX, ...)` even when the network is allowed. `socketpair` always works. */
  blockUnixSockets: boolean;
}

/** A built filter, ready to encode and hand to the native backend. */
export interface SeccompProgram {
  /** The architecture the filter accepts; any other `seccomp_data.arch` kills the process. */
  arch: SeccompArch;
  /** The classic-BPF instructions, in order. */
  instructions: BpfInstruction[];
  /** Syscalls denied with EPERM whatever their arguments, in the order the filter tests them. */
  deniedSyscalls: string[];
  /** Human-readable argument rules, e.g. `socket(domain=AF_UNIX)`, each denied with EPERM. */
  argumentFilters: string[];
}

/** Maps `process.arch` to a seccomp architecture, or `undefined` when there is no filter for it. */
export function seccompArchFor(nodeArch: string): SeccompArch | undefined {
  if (nodeArch === 'x64') return 'x86_64';
  if (nodeArch === 'arm64') return 'aarch64';
  return undefined;
}

function validateOptions(options: SeccompOptions): void {
  const record = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  if (!(SECCOMP_ARCHES as readonly unknown[]).includes(record.arch)) {
    const which =
      record.arch === undefined
        ? 'this CPU architecture (options.arch is undefined: seccompArchFor maps only x64 and arm64)'
        : `architecture ${JSON.stringify(record.arch)}`;
    throw new SandboxError(
      'sandbox_unavailable',
      `seccomp: no filter for ${which}; supported: ${SECCOMP_ARCHES.join(', ')}. ` +
        'Refusing to run without the syscall filter',
      { layer: 'seccomp' },
    );
  }
  if (record.network !== 'deny' && record.network !== 'allow') {
    throw new SandboxError(
      'invalid_argument',
      `seccomp: options.network must be "deny" or "allow", got ${JSON.stringify(record.network)}`,
      { layer: 'seccomp' },
    );
  }
  if (typeof record.blockUnixSockets !== 'boolean') {
    throw new SandboxError(
      'invalid_argument',
      `seccomp: options.blockUnixSockets must be a boolean, got ${JSON.stringify(record.blockUnixSockets)}`,
      { layer: 'seccomp' },
    );
  }
}

function requireNumber(name: string, arch: SeccompArch): number {
  const nr = syscallNumber(name, arch);
  if (nr === undefined) {
    throw new SandboxError('internal_error', `seccomp: no ${arch} number for ${name}`, { layer: 'seccomp' });
  }
  return nr;
}

/**
 * Builds the filter. Layout (every jump forward, the longest well under 255):
 *
 * 1. arch != AUDIT_ARCH → KILL (32-bit `int 0x80` syscalls on x86_64 are a classic bypass);
 *    on x86_64, nr with the x32 bit → KILL.
 * 2. nr == socket / ioctl / personality → that syscall's argument block.
 * 3. nr == any denied syscall (ascending numbers) → ERRNO(EPERM).
 * 4. ALLOW.
 *
 * Argument blocks compare only the low 32 bits of an argument. The kernel truncates these
 * arguments (`int domain`, `unsigned int cmd`, `unsigned int personality`) before using them, so a
 * check that also required a zero high word could be bypassed by setting high bits.
 *
 * Throws SandboxError('sandbox_unavailable', layer 'seccomp') for an architecture without a filter
 * (fail closed), 'invalid_argument' for malformed options. Deterministic: the same options always
 * give the same instructions.
 */
export function buildSeccompProgram(options: SeccompOptions): SeccompProgram {
  validateOptions(options);
  const { arch } = options;
  const blockUnix = options.network === 'deny' || options.blockUnixSockets;

  const denied = DENIED_SYSCALLS.flatMap((name) => {
    const nr = syscallNumber(name, arch);
    return nr === undefined ? [] : [{ name, nr }];
  }).sort((a, b) => a.nr - b.nr);

  const lines: BpfSourceLine[] = [
    { op: 'load', offset: SECCOMP_DATA.arch },
    { op: 'jeq', k: AUDIT_ARCH[arch], ifFalse: 'kill' },
    { op: 'load', offset: SECCOMP_DATA.nr },
  ];
  if (arch === 'x86_64') lines.push({ op: 'jset', k: X32_SYSCALL_BIT, ifTrue: 'kill' });
  lines.push(
    { op: 'jeq', k: requireNumber('socket', arch), ifTrue: 'socket' },
    { op: 'jeq', k: requireNumber('ioctl', arch), ifTrue: 'ioctl' },
    { op: 'jeq', k: requireNumber('personality', arch), ifTrue: 'personality' },
  );
  for (const { nr } of denied) lines.push({ op: 'jeq', k: nr, ifTrue: 'deny' });
  lines.push({ op: 'ret', value: SECCOMP_RET.ALLOW });

  const argumentFilters: string[] = [];
  // socket(domain, type, protocol): the domain is args[0].
  lines.push({ op: 'label', name: 'socket' }, { op: 'load', offset: seccompArgLowOffset(0) });
  lines.push({ op: 'jeq', k: AF_VSOCK, ifTrue: 'deny' });
  argumentFilters.push(`socket(domain=AF_VSOCK)`);
  if (blockUnix) {
    lines.push({ op: 'jeq', k: AF_UNIX, ifTrue: 'deny' });
    argumentFilters.push(`socket(domain=AF_UNIX)`);
  }
  lines.push({ op: 'ret', value: SECCOMP_RET.ALLOW });

  // ioctl(fd, cmd, arg): the request is args[1].
  lines.push(
    { op: 'label', name: 'ioctl' },
    { op: 'load', offset: seccompArgLowOffset(1) },
    { op: 'jeq', k: TIOCSTI, ifTrue: 'deny' },
    { op: 'jeq', k: TIOCLINUX, ifTrue: 'deny' },
    { op: 'ret', value: SECCOMP_RET.ALLOW },
  );
  argumentFilters.push('ioctl(cmd=TIOCSTI)', 'ioctl(cmd=TIOCLINUX)');

  // personality(persona): only the harmless personas pass; falling through reaches "deny".
  lines.push({ op: 'label', name: 'personality' }, { op: 'load', offset: seccompArgLowOffset(0) });
  for (const persona of ALLOWED_PERSONALITIES) lines.push({ op: 'jeq', k: persona, ifTrue: 'allow' });
  argumentFilters.push(
    `personality(persona not in ${ALLOWED_PERSONALITIES.map((p) => `0x${p.toString(16)}`).join(', ')})`,
  );

  lines.push(
    { op: 'label', name: 'deny' },
    { op: 'ret', value: SECCOMP_RET.ERRNO | EPERM },
    { op: 'label', name: 'allow' },
    { op: 'ret', value: SECCOMP_RET.ALLOW },
    { op: 'label', name: 'kill' },
    { op: 'ret', value: SECCOMP_RET.KILL_PROCESS },
  );

  return {
    arch,
    instructions: buildBpfProgram(lines),
    deniedSyscalls: denied.map((entry) => entry.name),
    argumentFilters,
  };
}

/**
 * Packs a program into the 64-bit words `LinuxSpec.seccomp_program` takes
 * (`code << 48 | jt << 40 | jf << 32 | k`). Throws SandboxError('invalid_argument') when an
 * instruction has a field out of range.
 */
export function encodeSeccompProgram(program: SeccompProgram): bigint[] {
  return encodeBpfInstructions(program.instructions);
}

// Encoded programs by options: the program is a pure function of them, so it is built once.
const encodedPrograms = new Map<string, BigUint64Array>();

/**
 * The encoded program for `options` (the words `encodeSeccompProgram(buildSeccompProgram(options))`
 * gives), built once per process per (arch, network, blockUnixSockets). Every call gets its own
 * copy, so a caller that changes its array cannot change anyone else's filter. Throws as
 * buildSeccompProgram does.
 */
export function buildSeccompWords(options: SeccompOptions): BigUint64Array {
  const key = `${String(options.arch)}/${String(options.network)}/${String(options.blockUnixSockets)}`;
  let words = encodedPrograms.get(key);
  if (words === undefined) {
    words = BigUint64Array.from(encodeSeccompProgram(buildSeccompProgram(options)));
    encodedPrograms.set(key, words);
  }
  return words.slice();
}
