// SPDX-License-Identifier: MIT
// SandboxError, the union of stable error codes, and the one function that converts native errors.
import { constants } from 'node:os';

import { namespaceCountsAboveZero } from './process-limits.js';

/** Every error code this package throws. Consumers branch on `.code`, never on `.message`. */
export const SANDBOX_ERROR_CODES = [
  /** The native addon is missing or cannot be loaded. */
  'native_unavailable',
  /** A layer the effective policy needs cannot be enforced here; nothing ran. */
  'sandbox_unavailable',
  /** User namespaces are blocked (sysctl, AppArmor, container seccomp profile). */
  'userns_denied',
  /** Landlock is absent or too old for a rule the policy needs. */
  'landlock_unsupported',
  /** Installing the seccomp filter failed. */
  'seccomp_install_failed',
  /** Setting up mounts inside the sandbox failed. */
  'mount_failed',
  /** The sandboxed process could not be created. */
  'spawn_failed',
  /** The command could not be executed inside the sandbox (not found, not executable). */
  'exec_failed',
  /** A caller-supplied value is invalid (API options, CLI flags). */
  'invalid_argument',
  /** A policy object failed validation; `issues` holds the zod issues. */
  'policy_invalid',
  /** A config file is unreadable, not JSON, or fails the schema; the message names file and path. */
  'config_invalid',
  /** The grants file is unreadable or invalid; it is left untouched and the engine fails closed. */
  'grants_invalid',
  /** The grants lock could not be taken in time. */
  'grants_locked',
  /** The engine denied the request; `block` carries the details. */
  'permission_denied',
  /** The engine asked for approval and none was given. */
  'approval_required',
  /** The run was cancelled by the caller or the approver. */
  'aborted',
  /** The output exceeded `maxBuffer`. */
  'max_buffer_exceeded',
  /** A protected workspace path would have been created or changed. */
  'protected_path',
  /**
   * The start ran out of descriptors (the caller's RLIMIT_NOFILE or the system's table), of
   * processes (a clone or the command's execve refused with EAGAIN) or of namespaces (ENOSPC under
   * a user.max_*_namespaces count); nothing ran, and the same start can succeed once other runs or
   * files are closed (runSandboxed and `zero-sandbox run` start it again by themselves for a
   * while). `layer` and `syscall` name where it was found.
   */
  'resource_exhausted',
  /** Anything else; a bug. */
  'internal_error',
] as const;

export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number];

/** Extra, machine-readable facts about an error. */
export interface SandboxErrorDetails {
  /** errno of the failing system call, when one failed (POSIX). */
  errno?: number;
  /** Windows: the Win32 error code of the failing API call (what GetLastError() returned). */
  win32Error?: number;
  /** Windows: the HRESULT of the failing API call, as an unsigned 32-bit number. */
  hresult?: number;
  /** The failing system call with its key argument, e.g. `mount(/tmp)`. */
  syscall?: string;
  /** The file the error is about. */
  path?: string;
  /** The sandbox layer at fault: `userns`, `mount`, `landlock`, `seccomp`, `netns`, ... */
  layer?: string;
  cause?: unknown;
}

/** The single error type of this package. */
export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  readonly errno?: number;
  readonly win32Error?: number;
  readonly hresult?: number;
  readonly syscall?: string;
  readonly path?: string;
  readonly layer?: string;

  constructor(code: SandboxErrorCode, message: string, details: SandboxErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SandboxError';
    this.code = code;
    if (details.errno !== undefined) this.errno = details.errno;
    if (details.win32Error !== undefined) this.win32Error = details.win32Error;
    if (details.hresult !== undefined) this.hresult = details.hresult;
    if (details.syscall !== undefined) this.syscall = details.syscall;
    if (details.path !== undefined) this.path = details.path;
    if (details.layer !== undefined) this.layer = details.layer;
  }
}

export function isSandboxErrorCode(value: unknown): value is SandboxErrorCode {
  return typeof value === 'string' && (SANDBOX_ERROR_CODES as readonly string[]).includes(value);
}

/**
 * The one conversion point for errors thrown by the native addon: the C++ side
 * sets `code`, `errno` (or on Windows `win32Error` or `hresult`: Win32 codes and errno values
 * overlap, so they are never mixed), `syscall`, `path` and `layer` as own properties on a plain
 * Error.
 */
export function fromNative(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  if (error instanceof TypeError) {
    return new SandboxError('invalid_argument', error.message, { cause: error });
  }
  const record = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const message = error instanceof Error ? error.message : String(error);
  const exhausted = exhaustion(record);
  // A full descriptor table fails whichever layer's call comes next (a Landlock rule, a mount, the
  // init helper's open): named by its layer alone it would send the caller after the wrong fix.
  const code = exhausted === undefined ? (isSandboxErrorCode(record.code) ? record.code : 'internal_error') : 'resource_exhausted';
  const details: SandboxErrorDetails = { cause: error };
  if (typeof record.errno === 'number') details.errno = record.errno;
  if (typeof record.win32Error === 'number') details.win32Error = record.win32Error;
  if (typeof record.hresult === 'number') details.hresult = record.hresult;
  if (typeof record.syscall === 'string') details.syscall = record.syscall;
  if (typeof record.path === 'string') details.path = record.path;
  if (typeof record.layer === 'string') details.layer = record.layer;
  return new SandboxError(code, exhausted === undefined ? message : `${message}; ${exhausted}: nothing ran`, details);
}

const { EAGAIN, EMFILE, ENFILE, ENOSPC } = constants.errno;
// Where making a namespace can meet the user's count of them: the sandbox's clone (userns), its
// network and the mount layer, whose detached copies of a tree are mount namespaces too.
const NAMESPACE_LAYERS = new Set(['userns', 'netns', 'pidns', 'ipcns', 'utsns', 'mount']);

/** What ran out, for a native error that says a limit was reached (else undefined). */
function exhaustion(record: Record<string, unknown>): string | undefined {
  if (record.errno === EMFILE) return "the process's open-file limit (RLIMIT_NOFILE) is reached";
  if (record.errno === ENFILE) return "the system's open-file table is full";
  // clone's EAGAIN: the user's process limit (RLIMIT_NPROC) or the system's threads or pids.
  if (record.errno === EAGAIN && typeof record.syscall === 'string' && record.syscall.startsWith('clone')) return 'the process limit (RLIMIT_NPROC, threads-max or pid_max) is reached';
  // A namespace refused with ENOSPC where none of the kinds is switched off (a limit of 0, which
  // stays a missing layer): the user's count of namespaces of that kind is at its limit (or, for a
  // mount, the namespace's count of mounts: fs.mount-max).
  if (record.errno === ENOSPC && typeof record.layer === 'string' && NAMESPACE_LAYERS.has(record.layer) && namespaceCountsAboveZero()) {
    return record.layer === 'mount'
      ? "the user's namespace count limit (user.max_mnt_namespaces) or the mount count limit (fs.mount-max) is reached"
      : "the user's namespace count limit (user.max_*_namespaces) is reached";
  }
  return undefined;
}
