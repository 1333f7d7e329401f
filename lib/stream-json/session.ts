// SPDX-License-Identifier: MIT
// One headless run as stream-json events: tool_call, the permission flow, the sandboxed run, result, run_end.
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from '../sandbox/options.js';
import type { RunResult } from '../sandbox/run.js';
import type { StreamEmitter } from './emitter.js';
import { redactString } from './redact.js';
import type { StreamBlock, StreamGrant, ToolResultMeta } from './schema.js';

/** Exit codes of a stream-json run (also the CLI's exit status). */
export const STREAM_EXIT = {
  ok: 0,
  /** Internal error. */
  failure: 1,
  /** Malformed input or an invalid argument; nothing ran. */
  usage: 2,
  /** A config file is invalid; nothing ran. */
  config: 3,
  /** The permission flow stopped the command (deny, or a prompt with no responder); it never ran. */
  denied: 77,
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

/** The request a shell run is evaluated as (the engine's Request shape). */
export interface ShellRequest {
  /** Always `bash`. */
  toolName: 'bash';
  /** Always `shell`. */
  sideEffect: 'shell';
  /** Tool safety metadata: shell tools are prompt-gated. */
  permission: 'prompt';
  /** Permission mode of the run. */
  permissionMode: string;
  /** `{command}`: the whole script. */
  args: { command: string };
  /** The workspace the command runs in. */
  workspaceRoot: string;
}

/** The part of an engine Decision a run needs. */
export interface ShellDecision {
  /** allow, prompt or deny. */
  action: 'allow' | 'prompt' | 'deny';
  /** Why. */
  reason?: string | undefined;
  /** Risk of the request. */
  risk: { level: 'low' | 'medium' | 'high' | 'critical'; categories?: string[] | undefined; reason?: string | undefined };
  /** Structured block, when the decision has one. */
  block?: StreamBlock | undefined;
  /** A grant or approved command prefix decided it. */
  grantMatched?: boolean | undefined;
  /** The matched grant. */
  grant?: StreamGrant | undefined;
  /** Allowed without a prompt (active native sandbox). */
  autoAllowed?: boolean | undefined;
}

/** Decides a shell request (the permission engine's evaluate). */
export type ShellEvaluator = (request: ShellRequest) => ShellDecision | Promise<ShellDecision>;

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
  /** The permission engine; without one the invocation itself is the approval (`zero-sandbox run`). */
  evaluate?: ShellEvaluator;
  /** Permission mode reported and evaluated; default `auto`. */
  permissionMode?: string;
  /** Bound on result output in characters; default DEFAULT_MAX_OUTPUT_CHARS. */
  maxOutputChars?: number;
}

const CALL_ID = 'call_1';

function riskOf(decision: ShellDecision): NonNullable<ShellDecision['risk']> {
  const { level, categories, reason } = decision.risk;
  const risk: ShellDecision['risk'] = { level };
  if (categories !== undefined && categories.length > 0) risk.categories = [...categories];
  if (reason !== undefined && reason !== '') risk.reason = reason;
  return risk;
}

/** The reference's error string for a denied decision (§1.3). */
export function buildDenialMessage(decision: ShellDecision, toolName: string): string {
  const block = decision.block;
  if (block !== undefined) {
    return `Sandbox block [${block.code}] for ${block.toolName ?? toolName}${block.path === undefined ? '' : ` at ${block.path}`}: ${block.reason}`;
  }
  return decision.reason !== undefined && decision.reason !== '' ? `Sandbox decision: ${decision.reason}` : 'Sandbox decision denied.';
}

/** The message of a prompt that nobody can answer (headless). */
export function buildApprovalRequiredMessage(decision: ShellDecision): string {
  const reason = decision.reason !== undefined && decision.reason !== '' ? decision.reason : 'the command requires approval';
  return `Sandbox approval required: ${reason}. There is no approval responder in headless mode; the command did not run.`;
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

function permissionFields(decision: ShellDecision, mode: string) {
  const fields = {
    id: CALL_ID,
    name: 'bash',
    permission: 'prompt' as const,
    permissionMode: mode,
    sideEffect: 'shell',
    reason: decision.reason ?? '',
    risk: riskOf(decision),
  };
  return {
    ...fields,
    ...(decision.block === undefined ? {} : { block: decision.block }),
    ...(decision.grantMatched === true ? { grantMatched: true } : {}),
    ...(decision.grant === undefined ? {} : { grant: decision.grant }),
  };
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

function emitDenied(emitter: StreamEmitter, decision: ShellDecision, output: string): number {
  emitter.emit({ type: 'tool_result', id: CALL_ID, status: 'denied', output, truncated: false, ...(decision.block === undefined ? {} : { block: decision.block }) });
  emitter.emit({ type: 'final', text: output });
  emitter.emit({ type: 'run_end', status: 'denied', exitCode: STREAM_EXIT.denied });
  return STREAM_EXIT.denied;
}

/**
 * Runs one session: run_start, tool_call, the permission flow (prompt → permission_request and a
 * denied result, since nothing can answer; deny → permission_decision and a denied result), and on
 * allow the sandboxed run, tool_result with sandbox facts, final and run_end. Resolves to the exit
 * code (run_end's). Never throws for command or sandbox failures: they become protocol events.
 */
export async function runStreamSession(options: SessionOptions): Promise<number> {
  const { emitter, workspace } = options;
  const mode = options.permissionMode ?? 'auto';
  emitter.emit({ type: 'run_start', cwd: workspace });
  emitter.emit({ type: 'tool_call', id: CALL_ID, name: 'bash', args: { command: options.display }, sideEffect: 'shell' });
  if (options.evaluate !== undefined) {
    let decision: ShellDecision;
    try {
      decision = await options.evaluate({ toolName: 'bash', sideEffect: 'shell', permission: 'prompt', permissionMode: mode, args: { command: options.display }, workspaceRoot: workspace });
    } catch (error) {
      return failRun(emitter, error);
    }
    if (decision.action === 'prompt') {
      emitter.emit({ type: 'permission_request', ...permissionFields(decision, mode), action: 'prompt' });
      return emitDenied(emitter, decision, buildApprovalRequiredMessage(decision));
    }
    if (decision.action === 'deny') {
      const decisionReason = decision.reason ?? 'denied by the sandbox policy';
      emitter.emit({ type: 'permission_decision', ...permissionFields(decision, mode), action: 'deny', permissionGranted: false, decisionReason });
      return emitDenied(emitter, decision, buildDenialMessage(decision, 'bash'));
    }
  }
  let result: RunResult;
  try {
    const runner = options.runner ?? (await import('../sandbox/run.js')).runSandboxed;
    result = await runner(options.command, options.runOptions);
  } catch (error) {
    return failRun(emitter, error);
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
  emitter.emit({ type: 'tool_result', id: CALL_ID, status, output, truncated, meta: buildMeta(result, resolve(workspace, options.runOptions.cwd ?? '.')) });
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
