// SPDX-License-Identifier: MIT
// The public options of runSandboxed/spawnSandboxed and their validation. Hand-written checks (no
// zod) keep `zero-sandbox run` cheap to start; every error names the option at fault.
import { SandboxError } from '../errors.js';
import type { NetworkMode, ResourceLimits } from '../backend/types.js';

/** Options shared by runSandboxed and spawnSandboxed. */
export interface SandboxOptions {
  /** The workspace root: writable, and where `cwd` defaults to. Default: process.cwd(). */
  workspace?: string;
  /** Working directory, absolute or relative to the workspace; must be inside a write root. */
  cwd?: string;
  /** `deny` (default) or `allow`. Anything other than exactly `allow` is `deny`. */
  network?: NetworkMode | string;
  /** Extra writable directories (must exist; never `/`). */
  allowWrite?: string[];
  /** Extra readable roots (reads are allowed everywhere except the deny-read set already). */
  allowRead?: string[];
  /** Paths that must not be read (must exist). The credential baseline is always added. */
  denyRead?: string[];
  /** Paths inside write roots that must not be changed (must exist). */
  denyWrite?: string[];
  /** The command's environment before scrubbing. Default: process.env. Secrets are always removed. */
  env?: Record<string, string | undefined>;
  /** Variables to let through the secret scrub on purpose. */
  envPass?: string[];
  /** Kernel-enforced limits. */
  limits?: ResourceLimits;
  /** Kill the sandbox after this many milliseconds (`timedOut` is then true). */
  timeoutMs?: number;
  /** Kill the sandbox when this signal aborts. */
  signal?: AbortSignal;
  /** Absolute path of the interpreter a shell-string command runs with (default /bin/sh). */
  shell?: string;
  /**
   * Prewarm sandboxes during bursts of commands with the same policy (default true, or
   * ZERO_SANDBOX_PREWARM=0 to switch off). A prewarmed sandbox is only used when the plan
   * computed for the command is identical, and is killed after 5 s idle.
   */
  prewarm?: boolean;
}

export interface RunOptions extends SandboxOptions {
  /** Written to the command's stdin, which is then closed. */
  input?: string | Uint8Array;
  /** The command reads this process's own standard input instead of `input` (the CLI's exec). */
  inheritStdin?: boolean;
  /**
   * Also keep all of the output, whatever maxBuffer keeps in memory: stdout and stderr in the
   * order they arrived, in a new file of a new private directory under the OS temp dir
   * (`RunResult.outputFile`; the caller removes it).
   */
  keepOutputFile?: boolean;
  /**
   * Bytes of stdout and of stderr kept, each (default 64 MiB). Past it the command keeps running
   * and the first and last halves are kept, joined by a truncation marker (`truncated` is true).
   */
  maxBuffer?: number;
  /** `truncate` (default): keep head and tail past maxBuffer; `kill`: kill the sandbox and reject with `max_buffer_exceeded`. */
  onMaxBuffer?: 'truncate' | 'kill';
}

/** A shell string (run by /bin/sh -c) or an argv array (PATH lookup). */
export type SandboxCommand = string | readonly string[];

function invalid(message: string, path?: string): SandboxError {
  return new SandboxError('invalid_argument', message, path === undefined ? {} : { path });
}

function stringList(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) {
    throw invalid(`options.${name} must be an array of non-empty strings`);
  }
  return value as string[];
}

function positiveInt(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`options.${name} must be a positive integer`);
  }
  return value;
}

export function normalizeNetwork(value: unknown): NetworkMode {
  return typeof value === 'string' && value.trim().toLowerCase() === 'allow' ? 'allow' : 'deny';
}

/**
 * Shell strings longer than this (in bytes) reach the shell as a file descriptor instead of argv:
 * the kernel refuses any single argv string over 128 KiB (and all of argv and env over a quarter
 * of the stack limit), so a long script could not run at all.
 */
export const SCRIPT_FD_BYTES = 32 * 1024;

/** Where the shell reads a long script: fd 4 of the command, a sealed in-memory file (memfd). */
export const SCRIPT_FD_PATH = '/proc/self/fd/4';

/**
 * The argv a command runs as: argv as given, `SHELL -c STRING` for a shell string, or for a long
 * one `SHELL /proc/self/fd/4` (the script is then handed over as that descriptor: see commandScript).
 */
export function normalizeCommand(command: SandboxCommand, shell = '/bin/sh'): string[] {
  if (typeof command === 'string') {
    if (command.trim() === '') throw invalid('the command is empty');
    if (command.includes('\0')) throw invalid('the command contains a NUL byte');
    if (typeof shell !== 'string' || !shell.startsWith('/') || shell.includes('\0')) throw invalid('options.shell must be an absolute path');
    return commandScript(command) === undefined ? [shell, '-c', command] : [shell, SCRIPT_FD_PATH];
  }
  if (!Array.isArray(command) || command.length === 0) throw invalid('the command must be a non-empty string or argv array');
  for (const [i, arg] of command.entries()) {
    if (typeof arg !== 'string') throw invalid(`argv[${i}] must be a string`);
    if (arg.includes('\0')) throw invalid(`argv[${i}] contains a NUL byte`);
  }
  if (command[0] === '') throw invalid('argv[0] is empty');
  return [...command];
}

/** The bytes of a shell string handed over as fd 4, or undefined when it fits in argv. */
export function commandScript(command: SandboxCommand): Buffer | undefined {
  // Cheap test first: a UTF-8 byte count is at most 3 per UTF-16 unit.
  if (typeof command !== 'string' || command.length * 3 <= SCRIPT_FD_BYTES) return undefined;
  const bytes = Buffer.from(command, 'utf8');
  return bytes.length > SCRIPT_FD_BYTES ? bytes : undefined;
}

export interface CheckedOptions {
  workspace: string | undefined;
  cwd: string | undefined;
  network: NetworkMode;
  allowWrite: string[];
  allowRead: string[];
  denyRead: string[];
  denyWrite: string[];
  envPass: string[];
  limits: ResourceLimits;
  timeoutMs: number | undefined;
}

/** The names `options.limits` accepts. */
export const LIMIT_NAMES: readonly string[] = ['cpuSeconds', 'memoryBytes', 'fileSizeBytes', 'openFiles', 'processes', 'tmpBytes', 'shmBytes'];

/** Type checks of the caller's options (existence checks happen when the plan is resolved). */
export function checkOptions(options: SandboxOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object');
  for (const key of ['workspace', 'cwd'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw invalid(`options.${key} must be a non-empty string`);
  }
  const limits: ResourceLimits = {};
  const raw = options.limits ?? {};
  if (typeof raw !== 'object' || raw === null) throw invalid('options.limits must be an object');
  for (const key of Object.keys(raw)) {
    if (!LIMIT_NAMES.includes(key)) {
      throw invalid(`options.limits.${key} is not a known limit (${LIMIT_NAMES.join(', ')})`);
    }
    const value = positiveInt((raw as Record<string, unknown>)[key], `limits.${key}`);
    if (value !== undefined) (limits as Record<string, number>)[key] = value;
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw invalid('options.signal must be an AbortSignal');
  return {
    workspace: options.workspace,
    cwd: options.cwd,
    network: normalizeNetwork(options.network ?? 'deny'),
    allowWrite: stringList(options.allowWrite, 'allowWrite'),
    allowRead: stringList(options.allowRead, 'allowRead'),
    denyRead: stringList(options.denyRead, 'denyRead'),
    denyWrite: stringList(options.denyWrite, 'denyWrite'),
    envPass: stringList(options.envPass, 'envPass'),
    limits,
    timeoutMs: positiveInt(options.timeoutMs, 'timeoutMs'),
  };
}
