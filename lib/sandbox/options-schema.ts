// SPDX-License-Identifier: MIT
// The one zod schema of every public option of runSandboxed/spawnSandboxed. It is the source of the
// option types (z.input of it), of schema/run-options.schema.json (scripts/gen-config-schema.mjs)
// and of the validation that runs before anything else, so the three cannot drift. The schemas are
// built by a factory over a `z` handed in: the run path loads zod (~50 ms) on the first call only,
// synchronously (spawnSandboxed is synchronous), and importing the package does not load it.
import type { z as Z } from 'zod';

import type { ApprovalAnswer } from '../policy/engine/constants.js';
import type { Engine } from '../policy/engine/engine.js';
import type { PermissionPrompt } from '../policy/approval/authorize.js';
import type { PermissionEvent } from '../policy/approval/approval.js';

/** The names of the resource limits, in the order the docs list them. */
export const LIMIT_NAMES = ['cpuSeconds', 'memoryBytes', 'fileSizeBytes', 'openFiles', 'processes', 'tmpBytes', 'shmBytes'] as const;
/** The stdio modes of spawnSandboxed. */
export const STDIO_MODES = ['pipe', 'ignore', 'inherit'] as const;
/** The answers a permission responder may give. */
export const RESPONDER_ANSWERS = ['allow', 'allow_for_session', 'always_allow', 'deny', 'cancel'] as const;

export type { PermissionEvent } from '../policy/approval/approval.js';

/** Answers onPermissionRequest may return (anything else is an `invalid_argument` error). */
export type PermissionAnswer = ApprovalAnswer;

/**
 * Builds the option schemas with the given zod. `listsChecked`: the path lists' elements are checked
 * by the caller (options.ts pathListsPlain, the same rule: non-empty strings), so the schema asks
 * only that each is an array; the types and the JSON schema come from the default build.
 */
export function buildOptionSchemas(z: typeof Z, listsChecked = false) {
  const nonEmpty = z.string().min(1);
  const pathList = (what: string) =>
    (listsChecked ? z.custom<string[]>((value) => Array.isArray(value)) : z.array(nonEmpty)).optional().describe(`${what} (an array of non-empty path strings)`);
  const positiveInt = (what: string) => z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().describe(`${what} (a positive integer)`);
  const fn = <T>(what: string) =>
    z.custom<T>((value) => typeof value === 'function', { message: 'must be a function' }).optional().describe(what).meta({ 'x-js-type': 'function' });

  const limits = z
    .object({
      /** CPU time in seconds (RLIMIT_CPU). */
      cpuSeconds: positiveInt('CPU time in seconds'),
      /** Address space in bytes (RLIMIT_AS). */
      memoryBytes: positiveInt('address space in bytes'),
      /** Largest file the command may write, in bytes (RLIMIT_FSIZE). */
      fileSizeBytes: positiveInt('largest file size in bytes'),
      /** Open file descriptors (RLIMIT_NOFILE). */
      openFiles: positiveInt('open file descriptors'),
      /** Processes and threads (Linux default 4096: RLIMIT_NPROC in the sandbox's user namespace; a pids cgroup for a root caller). */
      processes: positiveInt('processes and threads'),
      /** Size cap of the private /tmp in bytes (Linux default: 1 GiB, less under 4 GiB of memory). */
      tmpBytes: positiveInt('size cap of the private /tmp in bytes'),
      /** Size cap of the private /dev/shm in bytes (Linux default: 256 MiB, less under 4 GiB of memory). */
      shmBytes: positiveInt('size cap of the private /dev/shm in bytes'),
    })
    .strict();

  const sandbox = z
    .object({
      /** The workspace root: writable, and where `cwd` defaults to. Default: process.cwd(). */
      workspace: nonEmpty.optional().describe('the workspace root (a non-empty path); default: the current directory'),
      /** Working directory, absolute or relative to the workspace; must be inside a write root. */
      cwd: nonEmpty.optional().describe('working directory inside a write root (a non-empty path)'),
      /** `deny` (default): no network at all; `allow`: the host's network. */
      network: z.enum(['deny', 'allow']).optional().describe('network egress: "deny" (default) or "allow"'),
      /** Extra writable directories (must exist; never `/`, the home directory or system directories). */
      allowWrite: pathList('extra writable directories'),
      /** Extra readable roots (reads are allowed everywhere except the deny-read set already). */
      allowRead: pathList('extra readable roots'),
      /** Paths that must not be read (must exist). The credential baseline is always added. */
      denyRead: pathList('paths that must not be read'),
      /** Paths inside write roots that must not be changed (must exist). */
      denyWrite: pathList('paths inside write roots that must not be changed'),
      /** The command's environment before scrubbing. Default: process.env. Secrets are always removed. */
      // A custom check, not z.record: process.env itself (not a plain object) must be accepted.
      env: z
        .custom<Record<string, string | undefined>>()
        .superRefine((value, ctx) => {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) {
            ctx.addIssue({ code: 'custom', message: 'must be an object' });
            return;
          }
          for (const [key, item] of Object.entries(value)) {
            if (item !== undefined && typeof item !== 'string') ctx.addIssue({ code: 'custom', message: 'must be a string', path: [key] });
          }
        })
        .optional()
        .describe('environment before scrubbing (an object of string values)')
        .meta({ type: 'object', additionalProperties: { type: 'string' } }),
      /** Variables to let through the secret scrub on purpose. */
      envPass: z.array(nonEmpty).optional().describe('variable names to let through the secret scrub'),
      /** Kernel-enforced limits. */
      limits: limits.optional().describe(`kernel-enforced limits (an object with ${LIMIT_NAMES.join(', ')})`),
      /** Kill the sandbox (SIGKILL, every process) after this many milliseconds; `timedOut` is then true. */
      timeoutMs: positiveInt('milliseconds before the sandbox is killed'),
      /** Kill the sandbox (SIGKILL, every process) when this signal aborts; `aborted` is then true. */
      signal: z
        .custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'must be an AbortSignal' })
        .optional()
        .describe('an AbortSignal that kills the sandbox')
        .meta({ 'x-js-type': 'AbortSignal' }),
      /** Absolute path of the interpreter a shell-string command runs with (default /bin/sh). */
      shell: nonEmpty
        .refine((value) => value.startsWith('/') && !value.includes('\0'), { message: 'must be an absolute path' })
        .optional()
        .describe('interpreter of a shell-string command (an absolute path; default /bin/sh)'),
      /**
       * Prewarm sandboxes during bursts of commands with the same policy (default true, or
       * ZERO_SANDBOX_PREWARM=0 to switch off). A prewarmed sandbox is only used when the plan
       * computed for the command is identical, and is killed after 5 s idle.
       */
      prewarm: z.boolean().optional().describe('prewarm sandboxes for bursts of identical plans (a boolean)'),
    })
    .strict();

  const engine = z.object({
    /** The engine (createEngine) that decides whether and how the command may run. */
    engine: z
      .custom<Engine>((value) => typeof value === 'object' && value !== null && typeof (value as { evaluate?: unknown }).evaluate === 'function', {
        message: 'must be an Engine from createEngine()',
      })
      .optional()
      .describe('the permission engine (from createEngine())')
      .meta({ 'x-js-type': 'Engine' }),
    /** Tool name the command is evaluated as (default `bash`). */
    toolName: nonEmpty.optional().describe('tool name the command is evaluated as (default "bash")'),
    /** Permission mode of the request (default `ask`). */
    permissionMode: z.enum(['auto', 'ask', 'unsafe']).optional().describe('permission mode: "auto", "ask" (default) or "unsafe"'),
    /**
     * Asked when the engine prompts. Return `allow` (this call), `allow_for_session`,
     * `always_allow` (persisted), `deny` or `cancel`; anything else rejects with
     * `invalid_argument`. Without a responder a prompt is denied (headless).
     */
    onPermissionRequest: fn<(prompt: PermissionPrompt) => PermissionAnswer | Promise<PermissionAnswer>>(
      `asked on a prompt; returns ${RESPONDER_ANSWERS.join(', ')}`,
    ),
    /** Receives every `permission_request` / `permission_decision` event. */
    onPermissionEvent: fn<(event: PermissionEvent) => void>('receives permission_request / permission_decision events'),
  });

  const run = sandbox
    .extend(engine.shape)
    .extend({
      /** The command reads this process's own standard input instead of `input` (the CLI's exec). */
      inheritStdin: z.boolean().optional().describe("read this process's standard input instead of input (a boolean)"),
      /**
       * Also keep all of the output, whatever maxBuffer keeps in memory: stdout and stderr in the
       * order they arrived, in a new file of a new private directory under the OS temp dir
       * (`RunResult.outputFile`; the caller removes it).
       */
      keepOutputFile: z.boolean().optional().describe('also write all output to a new private file (a boolean)'),
      /** Written to the command's stdin, which is then closed. */
      input: z
        .union([z.string(), z.custom<Uint8Array>((value) => value instanceof Uint8Array, { message: 'must be a Uint8Array' }).meta({ type: 'Uint8Array' })])
        .optional()
        .describe('stdin content (a string or Uint8Array)'),
      /**
       * Bytes of stdout and of stderr kept, each (default 64 MiB). Past it the command keeps running
       * and the first and last halves are kept, joined by a truncation marker (`truncated` is true).
       */
      maxBuffer: positiveInt('bytes of stdout and of stderr kept, each (default 64 MiB)'),
      /** `truncate` (default): keep head and tail past maxBuffer; `kill`: kill the sandbox and reject with `max_buffer_exceeded`. */
      onMaxBuffer: z.enum(['truncate', 'kill']).optional().describe('past maxBuffer: "truncate" (default, keep head and tail) or "kill"'),
    })
    .strict();

  const stdioMode = z.enum(STDIO_MODES);
  const spawn = sandbox
    .extend({
      /** 'pipe' (default), 'ignore' or 'inherit' for all three streams, or one mode per stream. */
      stdio: z
        .union([stdioMode, z.tuple([stdioMode, stdioMode, stdioMode])])
        .optional()
        .describe('"pipe" (default), "ignore" or "inherit", or an array of 3 of these (stdin, stdout, stderr)'),
    })
    .strict();

  return { limits, sandbox, run, spawn };
}

/** The schemas buildOptionSchemas returns. */
export type OptionSchemas = ReturnType<typeof buildOptionSchemas>;
