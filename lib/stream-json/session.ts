// SPDX-License-Identifier: MIT
// One headless run as stream-json events: tool_call, the permission flow, the sandboxed run, result, run_end.
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from '../sandbox/options.js';
import type { RunResult } from '../sandbox/run.js';
import type { StreamEmitter } from './emitter.js';
import { redactString } from './redact.js';
import { selectPermissionEvents, type RawPermissionEvent } from './permission-events.js';
import type { StreamBlock, ToolResultMeta } from './schema.js';

/** Exit codes of a stream-json run (also the CLI's exit status). */
export const STREAM_EXIT = {
  ok: 0,
  /** Internal error. */
  failure: 1,
  /** Malformed input or an invalid argument; nothing ran. */
  usage: 2,
  /** A config file is invalid; nothing ran. */
  config: 3,
  /** The permission flow stopped the command (deny, or a prompt with no responder); it never ran. Same as `zero-sandbox run`. */
  denied: 1,
  /** The run was interrupted (SIGINT/SIGTERM/SIGHUP); every process in the sandbox was killed. */
  interrupted: 130,
  /** The command was killed on timeout. */
  timeout: 124,
  /** The sandbox could not be set up, or would have been weaker than asked; nothing ran. */
  sandboxUnavailable: 125,
  /** The command was found but could not be executed. */
  notExecutable: 126,
  /** The command was not found. */
  notFound: 127,
} as const;

/** Default bound on `tool_result.output`, in characters; longer output is cut and `truncated` set. */
export const DEFAULT_MAX_OUTPUT_CHARS = 64 * 1024;

/** What an authorized run may proceed with. */
export interface AuthorizedOptions {
  /** The options to run with (network the decision allows, the policy's extra roots and lists). */
  options: RunOptions;
  /** Ends turn-scoped approvals; called once the command has finished. */
  cleanup: () => void;
}

/**
 * The permission engine in front of a run (authorizeRun with an engine): reports each permission
 * event, then resolves with the options to run with, or rejects with SandboxError
 * `permission_denied` / `approval_required` (a prompt nobody could answer).
 */
export type ShellAuthorizer = (command: SandboxCommand, options: RunOptions, onEvent: (event: RawPermissionEvent) => void) => Promise<AuthorizedOptions>;

/** Runs a command sandboxed to completion (runSandboxed's signature). */
export type SandboxRunner = (command: SandboxCommand, options: RunOptions) => Promise<RunResult>;

/** Everything one session needs. */
export interface SessionOptions {
  /** Where the events go. */
  emitter: StreamEmitter;
  /** What runs (a shell string, or argv). */
  command: SandboxCommand;
  /** The command as shown in `tool_call.args.command` and evaluated by the engine. */
  display: string;
  /** Absolute workspace root; the command's cwd unless runOptions.cwd says otherwise. */
  workspace: string;
  /** Options for the runner (workspace, network, timeout, ...). */
  runOptions: RunOptions;
  /** Runs the command; default runSandboxed. */
  runner?: SandboxRunner;
  /** The permission engine in front of the run; without one the command runs as asked. */
  authorize?: ShellAuthorizer;
  /** Bound on result output in characters; default DEFAULT_MAX_OUTPUT_CHARS. */
  maxOutputChars?: number;
}

const CALL_ID = 'call_1';

/** The denied result's text: the engine's message, and that the command never ran. */
export function buildDeniedOutput(error: SandboxError): string {
  const headless = error.code === 'approval_required' ? '; there is no approval responder in headless mode' : '';
  return `${error.message}${headless}. The command did not run.`;
}

/** Joins stdout and stderr, redacts, then cuts at `max` characters (redacting first so a cut cannot expose part of a secret). */
export function buildOutput(stdout: string, stderr: string, max: number): { output: string; truncated: boolean } {
  const joined = stdout === '' || stderr === '' || stdout.endsWith('\n') ? stdout + stderr : `${stdout}\n${stderr}`;
  const redacted = redactString(joined);
  if (redacted.length <= max) return { output: redacted, truncated: false };
  return { output: redacted.slice(0, max), truncated: true };
}

/** The exit code a finished command maps to (as `zero-sandbox run` does). */
export function buildExitCode(result: RunResult): number {
  if (result.timedOut) return STREAM_EXIT.timeout;
  if (result.execError !== undefined) return result.exitCode ?? (result.execError.code === 'ENOENT' ? STREAM_EXIT.notFound : STREAM_EXIT.notExecutable);
  if (result.signal !== null) return 128 + (SIGNALS[result.signal] ?? 0);
  return result.exitCode ?? STREAM_EXIT.sandboxUnavailable;
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

function buildMeta(result: RunResult, cwd: string): ToolResultMeta {
  const meta: ToolResultMeta = {
    sandbox_backend: result.backend,
    sandbox_wrapped: true,
    sandbox_network: result.network,
    // runSandboxed fails closed: a command that ran at all ran under every native layer.
    sandbox_enforcement_level: 'native',
    sandbox_cwd: cwd,
    sandbox_exit_code: result.exitCode,
    sandbox_duration_ms: result.durationMs,
  };
  if (result.signal !== null) meta.sandbox_signal = result.signal;
  if (result.timedOut) meta.sandbox_timed_out = true;
  if (result.protectedPathViolations.length > 0) meta.sandbox_protected_path_violations = [...result.protectedPathViolations];
  return meta;
}

/** Emits `error` then `run_end` and returns the exit code. */
export function emitFailure(emitter: StreamEmitter, error: { code: string; message: string; recoverable?: boolean; line?: number; field?: string }, exitCode: number): number {
  const event: Parameters<StreamEmitter['emit']>[0] = {
    type: 'error',
    code: error.code,
    message: error.message,
    recoverable: error.recoverable ?? false,
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.field === undefined ? {} : { field: error.field }),
  };
  emitter.emit(event);
  emitter.emit({ type: 'run_end', status: 'error', exitCode });
  return exitCode;
}

function emitDenied(emitter: StreamEmitter, output: string, block: StreamBlock | undefined): number {
  emitter.emit({ type: 'tool_result', id: CALL_ID, status: 'denied', output, truncated: false, ...(block === undefined ? {} : { block }) });
  emitter.emit({ type: 'final', text: output });
  emitter.emit({ type: 'run_end', status: 'denied', exitCode: STREAM_EXIT.denied });
  return STREAM_EXIT.denied;
}

/**
 * Runs one session: run_start, tool_call, the permission flow (prompt without a responder →
 * permission_request and a denied result; deny → permission_decision with the block and a denied
 * result), and on allow the sandboxed run with the options the engine approved, tool_result with sandbox facts, final and run_end. Resolves to the exit
 * code (run_end's). Never throws for command or sandbox failures: they become protocol events.
 */
export async function runStreamSession(options: SessionOptions): Promise<number> {
  const { emitter, workspace } = options;
  emitter.emit({ type: 'run_start', cwd: workspace });
  emitter.emit({ type: 'tool_call', id: CALL_ID, name: 'bash', args: { command: options.display }, sideEffect: 'shell' });
  let runOptions = options.runOptions;
  let cleanup = () => {};
  if (options.authorize !== undefined) {
    const raw: RawPermissionEvent[] = [];
    try {
      const authorized = await options.authorize(options.command, runOptions, (event) => raw.push(event));
      for (const body of selectPermissionEvents(raw, 'allowed')) emitter.emit(body);
      runOptions = authorized.options;
      cleanup = authorized.cleanup;
    } catch (error) {
      const refused = error instanceof SandboxError && (error.code === 'permission_denied' || error.code === 'approval_required');
      const shown = selectPermissionEvents(raw, refused && error.code === 'approval_required' ? 'approval_required' : 'denied');
      for (const body of shown) emitter.emit(body);
      if (!refused) return failRun(emitter, error);
      const block = [...shown].reverse().find((body) => body.block !== undefined)?.block;
      return emitDenied(emitter, buildDeniedOutput(error), block);
    }
  }
  let result: RunResult;
  try {
    const runner = options.runner ?? (await import('../sandbox/run.js')).runSandboxed;
    result = await runner(options.command, runOptions);
  } catch (error) {
    return failRun(emitter, error);
  } finally {
    cleanup();
  }
  // As `zero-sandbox run`: a command that created protected metadata does not count as a success.
  const exitCode = result.protectedPathViolations.length > 0 && result.exitCode === 0 && !result.timedOut ? STREAM_EXIT.failure : buildExitCode(result);
  const max = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  let stderr = result.stderr;
  if (result.execError !== undefined) {
    const name = Array.isArray(options.command) ? String(options.command[0]) : '/bin/sh';
    stderr += `${name}: ${result.execError.code === 'ENOENT' ? 'command not found' : `cannot execute (${result.execError.code})`}\n`;
  }
  if (result.timedOut) stderr += 'zero-sandbox: the command timed out; the sandbox was killed\n';
  for (const path of result.protectedPathViolations) stderr += `zero-sandbox: sandbox blocked creation of protected workspace metadata path ${path} (removed)\n`;
  const { output, truncated } = buildOutput(result.stdout, stderr, max);
  const status = exitCode === 0 ? 'ok' : 'error';
  emitter.emit({ type: 'tool_result', id: CALL_ID, status, output, truncated, meta: buildMeta(result, resolve(workspace, runOptions.cwd ?? '.')) });
  emitter.emit({ type: 'final', text: output });
  emitter.emit({ type: 'run_end', status: exitCode === 0 ? 'success' : 'error', exitCode });
  return exitCode;
}

const EXIT_BY_CODE: Partial<Record<string, number>> = {
  invalid_argument: STREAM_EXIT.usage,
  policy_invalid: STREAM_EXIT.usage,
  config_invalid: STREAM_EXIT.config,
  aborted: STREAM_EXIT.interrupted,
};

function failRun(emitter: StreamEmitter, error: unknown): number {
  if (error instanceof SandboxError) {
    const exitCode = EXIT_BY_CODE[error.code] ?? STREAM_EXIT.sandboxUnavailable;
    emitter.emit({ type: 'tool_result', id: CALL_ID, status: 'error', output: error.message, truncated: false });
    return emitFailure(emitter, { code: error.code, message: error.message, recoverable: false }, exitCode);
  }
  const message = error instanceof Error ? error.message : String(error);
  emitter.emit({ type: 'tool_result', id: CALL_ID, status: 'error', output: message, truncated: false });
  return emitFailure(emitter, { code: 'internal_error', message, recoverable: false }, STREAM_EXIT.failure);
}
