// SPDX-License-Identifier: MIT
// The public options of runSandboxed/spawnSandboxed: their types and validation come from the one
// zod schema in options-schema.ts; this module loads zod on the first validation only, and turns
// validated options into the normalized form the plan is resolved from.
import { createRequire } from 'node:module';
import type { z } from 'zod';

import { SandboxError } from '../errors.js';
import type { NetworkMode, ResourceLimits } from '../backend/types.js';
import { closest } from '../did-you-mean.js';
import { normalizeNetworkMode } from '../enums.js';
import { buildOptionSchemas, type OptionSchemas } from './options-schema.js';

/** Options shared by runSandboxed and spawnSandboxed (the input type of the zod schema). */
export type SandboxOptions = z.input<OptionSchemas['sandbox']>;

/** Options of runSandboxed: the shared ones, the permission engine's, `input` and `maxBuffer`. */
export type RunOptions = z.input<OptionSchemas['run']>;

/** The permission-engine options of runSandboxed. */
export type EngineOptions = Pick<RunOptions, 'engine' | 'toolName' | 'permissionMode' | 'onPermissionRequest' | 'onPermissionEvent'>;

/** Options of spawnSandboxed: the shared ones and `stdio`. */
export type SpawnSandboxedOptions = z.input<OptionSchemas['spawn']>;

/** A shell string (run by /bin/sh -c) or an argv array (PATH lookup). */
export type SandboxCommand = string | readonly string[];

function invalid(message: string, path?: string): SandboxError {
  return new SandboxError('invalid_argument', message, path === undefined ? {} : { path });
}

/** The run option `network`: only `allow` allows (lib/enums.ts). */
export const normalizeNetwork: (value: unknown) => NetworkMode = normalizeNetworkMode;

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

/**
 * The deny-read entries of the user's config that do not exist when a run is authorized, carried
 * on the options the engine's authorization builds (a symbol: no caller option, no schema key).
 * They are kept out of the read tree, so a file that appears there during the run stays
 * unreadable; an entry named by the caller must exist (a typo is an error, not a silent pass).
 */
export const DENY_READ_IF_APPEARS = Symbol('zero-sandbox.denyReadIfAppears');

export interface CheckedOptions {
  workspace: string | undefined;
  cwd: string | undefined;
  network: NetworkMode;
  allowWrite: string[];
  allowRead: string[];
  denyRead: string[];
  /** See DENY_READ_IF_APPEARS. */
  denyReadIfAppears: string[];
  denyWrite: string[];
  envPass: string[];
  limits: ResourceLimits;
  timeoutMs: number | undefined;
}

let schemas: OptionSchemas | undefined;
let listsCheckedSchemas: OptionSchemas | undefined;

function zod(): typeof import('zod') {
  return createRequire(import.meta.url)('zod') as typeof import('zod');
}

/** The option schemas, built on first use with zod loaded synchronously (its CommonJS build). */
export function optionSchemas(): OptionSchemas {
  schemas ??= buildOptionSchemas(zod().z);
  return schemas;
}

/** The path lists of the options (each an array of non-empty path strings). */
const PATH_LISTS = ['allowWrite', 'allowRead', 'denyRead', 'denyWrite'] as const;

/**
 * True when every path list given is an array of non-empty strings: the schema's rule for them
 * (options-schema.ts pathList), checked in one loop instead of by zod per element (thousands of
 * paths were most of the check). A hole, a non-string or an empty string is false.
 */
function pathListsPlain(options: Record<string, unknown>): boolean {
  for (const name of PATH_LISTS) {
    const list = options[name];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return false;
    for (let i = 0; i < list.length; i++) {
      const item: unknown = list[i];
      if (typeof item !== 'string' || item.length === 0) return false;
    }
  }
  return true;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current !== undefined && !('shape' in current) && 'unwrap' in current && typeof current.unwrap === 'function') current = current.unwrap() as z.ZodType;
  return current;
}

function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (const key of path) {
    const shape: Record<string, z.ZodType> | undefined = (unwrap(current) as { shape?: Record<string, z.ZodType> } | undefined)?.shape;
    if (shape === undefined || typeof key !== 'string') return undefined;
    current = shape[key];
  }
  return current;
}

/** The description of the option at `path`, or of the nearest option holding it (env for env.A). */
function describedAt(schema: z.ZodType, path: readonly PropertyKey[]): string | undefined {
  for (let length = path.length; length > 0; length--) {
    const description = schemaAt(schema, path.slice(0, length))?.description;
    if (description !== undefined) return description;
  }
  return undefined;
}

function optionName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : `${name}.${String(key)}`), 'options');
}

/** The first zod issue as a message naming the option, what was given and what is accepted. */
function issueMessage(schema: z.ZodType, options: unknown, issue: z.core.$ZodIssue): string {
  const name = optionName(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const parent = unwrap(schemaAt(schema, issue.path)) as { shape?: Record<string, unknown> } | undefined;
    const accepted = Object.keys(parent?.shape ?? {});
    const key = issue.keys[0] as string;
    const hint = closest(key, accepted);
    return `${optionName([...issue.path, key])} is not an option${hint === undefined ? '' : ` (did you mean ${hint}?)`}; accepted: ${accepted.join(', ')}`;
  }
  const accepted = describedAt(schema, issue.path) ?? issue.message;
  return `${name} is invalid (got ${describeValue(valueAt(options, issue.path))}); expected ${accepted}`;
}

/**
 * Validates the caller's options against the schema of `kind` before anything runs. Rejects an
 * unknown key, a wrong type or a bad value with `invalid_argument` naming the option and what it
 * accepts.
 */
export function validateOptions(kind: 'run' | 'spawn', options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`options must be an object (got ${describeValue(options)})`);
  }
  // Path lists checked here, the rest by the schema that takes them as arrays; any failure is
  // parsed again by the full schema, whose first issue names the option.
  if (pathListsPlain(options as Record<string, unknown>)) {
    listsCheckedSchemas ??= buildOptionSchemas(zod().z, true);
    if ((listsCheckedSchemas[kind] as z.ZodType).safeParse(options).success) return;
  }
  const schema = optionSchemas()[kind] as z.ZodType;
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw invalid(issueMessage(schema, options, issue));
  }
  // Workspaces and write roots that hand the host over (/, the home directory, system directories)
  // are refused by assertNotHostHandover where the plan resolves them to real paths (plan.ts), on
  // every entry point, this one included.
}

/** The validated options in the form the plan is resolved from (defaults applied). */
export function checkOptions(options: SandboxOptions): CheckedOptions {
  return {
    workspace: options.workspace,
    cwd: options.cwd,
    network: options.network === 'allow' ? 'allow' : 'deny',
    allowWrite: options.allowWrite ?? [],
    allowRead: options.allowRead ?? [],
    denyRead: options.denyRead ?? [],
    denyReadIfAppears: (options as { [DENY_READ_IF_APPEARS]?: string[] })[DENY_READ_IF_APPEARS] ?? [],
    denyWrite: options.denyWrite ?? [],
    envPass: options.envPass ?? [],
    limits: Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined)) as ResourceLimits,
    timeoutMs: options.timeoutMs,
  };
}
