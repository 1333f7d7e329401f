// SPDX-License-Identifier: MIT
// One headless run as stream-json events: tool_call, the permission flow, the sandboxed run, result, run_end.
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from '../sandbox/options.js';
import type { RunResult } from '../sandbox/run.js';
import type { StreamEmitter } from './emitter.js';
import { redactCounted } from '../redact.js';
import { truncationMarker } from '../sandbox/truncation.js';
import { interruptedRunNotice } from '../sandbox/missed-checks.js';
import { selectPermissionEvents, type PermissionBody, type RawPermissionEvent } from './permission-events.js';
import type { SandboxDenial } from '../sandbox/denials.js';
import type { StreamBlock, ToolResultMeta } from './schema.js';

/** Exit codes of a stream-json run (also the CLI's exit status). */
export const STREAM_EXIT = {
  ok: 0,
  /** Internal error, or stdout closed under the run. */
  failure: 1,
  /** Malformed input, an unknown flag or an invalid argument; nothing ran. */
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

/**
 * Default bound on what `tool_result.output` keeps of each stream, in bytes, marker included:
 * past it the head and tail are kept around a truncation marker (the bash tool's per-stream
 * budget in stream-json). The command is never killed for its output.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024;

/** What `tool_result.output` says when the command printed nothing and exited 0. */
export const NO_OUTPUT = 'Command completed with no output.';

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
  /** Bytes of each stream `tool_result.output` keeps; default DEFAULT_MAX_OUTPUT_BYTES. */
  maxOutputBytes?: number;
  /** Warnings to emit after run_start (flags that do not apply, ...). */
  warnings?: Array<{ code: string; message: string }>;
}

const CALL_ID = 'call_1';
const TOOL = 'bash';

/** The denied result's text: the engine's message, and that the command never ran. */
export function buildDeniedOutput(error: SandboxError): string {
  const headless = error.code === 'approval_required' ? '; there is no approval responder in headless mode' : '';
  return `${error.message}${headless}. The command did not run.`;
}

/** The whole of `text` cut to at most `max` UTF-8 bytes from its start, on a character boundary. */
function headBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** The last at most `max` UTF-8 bytes of `text`, starting on a character boundary. */
function tailBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString('utf8');
}

/** One stream as shown, and what was done to it. */
export interface ShownStream {
  /** The text: whole, or head + marker + tail. */
  output: string;
  /** Whether the middle was dropped. */
  truncated: boolean;
  /** How many secrets were replaced. */
  redactions: number;
}

/**
 * One stream as shown: redacted first (so a cut cannot expose part of a secret), then, when more
 * than `max` bytes were written, `max` bytes in all: the truncation marker (which counts the bytes
 * over `max`) between the head and tail of what is left, halved, cut on character boundaries.
 * `total` is what the command wrote (more than `text` when the capture already dropped a middle:
 * the capture keeps several times `max`, so its own cut points, where part of a secret could sit,
 * always fall in the middle dropped here).
 */
export function buildStreamOutput(text: string, total: number, max: number): ShownStream {
  const { text: redacted, count } = redactCounted(text);
  const size = Buffer.byteLength(redacted);
  // What the command wrote, counted with the secrets already replaced.
  const written = Math.max(size, total - Buffer.byteLength(text) + size);
  if (written <= max) return { output: redacted, truncated: false, redactions: count };
  const marker = truncationMarker(written - max);
  const budget = Math.max(0, max - Buffer.byteLength(marker));
  const head = headBytes(redacted, Math.floor(budget / 2));
  const tail = tailBytes(redacted, budget - Math.floor(budget / 2));
  return { output: head + marker + tail, truncated: true, redactions: count };
}

/**
 * `tool_result.output` laid out as stream-json's bash tool does: `stdout:\n…`, `stderr:\n…` (each
 * without its trailing newlines, left out when empty) and `exit_code: N` (only when not 0), joined
 * by newlines, then a note when secrets were redacted; `Command completed with no output.` when
 * that is nothing.
 */
export function formatToolOutput(stdout: string, stderr: string, exitCode: number, redactions = 0): string {
  const parts: string[] = [];
  const out = stdout.replace(/[\r\n]+$/, '');
  const err = stderr.replace(/[\r\n]+$/, '');
  if (out !== '') parts.push(`stdout:\n${out}`);
  if (err !== '') parts.push(`stderr:\n${err}`);
  if (exitCode !== 0) parts.push(`exit_code: ${exitCode}`);
  if (redactions > 0) parts.push(`[zero] ${redactions} likely secret(s) redacted from this output.`);
  return parts.length === 0 ? NO_OUTPUT : parts.join('\n');
}

/** Joins the shown stdout and stderr as a terminal would show them (the text format and `final`). */
export function joinStreams(stdout: string, stderr: string): string {
  return stdout === '' || stderr === '' || stdout.endsWith('\n') ? stdout + stderr : `${stdout}\n${stderr}`;
}

/** The exit code a finished command maps to (as `zero-sandbox run` does). */
export function buildExitCode(result: RunResult): number {
  if (result.timedOut) return STREAM_EXIT.timeout;
  if (result.execError !== undefined) return result.exitCode ?? (result.execError.code === 'ENOENT' ? STREAM_EXIT.notFound : STREAM_EXIT.notExecutable);
  if (result.signal !== null) return 128 + (SIGNALS[result.signal] ?? 0);
  return result.exitCode ?? STREAM_EXIT.sandboxUnavailable;
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** The keys of one structured denial in `tool_result.meta`, named as clients written for the Go Zero CLI read them. */
export function denialMeta(denial: SandboxDenial): ToolResultMeta {
  const meta: ToolResultMeta = {
    sandbox_likely_denied: 'true',
    sandbox_denial_kind: denial.capability.kind === 'external_network' ? 'network' : 'sandbox',
    sandbox_denial_reason: denial.reason,
    sandbox_denial_capability: denial.capability.kind,
  };
  if (denial.capability.scope !== undefined) meta.sandbox_denial_scope = denial.capability.scope;
  return meta;
}

function buildMeta(result: RunResult, cwd: string, exitCode: number, shown: { emitted: number; truncated: boolean }): ToolResultMeta {
  const meta: ToolResultMeta = {
    exit_code: String(exitCode),
    sandbox_wrapped: 'true',
    sandbox_backend: result.backend,
    sandbox_target_backend: result.backend,
    // runSandboxed fails closed: a command that ran at all ran under every native layer.
    sandbox_enforcement_level: 'native',
    sandbox_requires_platform: 'true',
    sandbox_cwd: cwd,
    sandbox_network: result.network,
    sandbox_duration_ms: String(result.durationMs),
    raw_bytes: String(result.outputBytes.stdout + result.outputBytes.stderr),
    // The bytes of both streams as shown, and the rough token count of that (4 bytes a token).
    emitted_bytes: String(shown.emitted),
    estimated_tokens: String(Math.ceil(shown.emitted / 4)),
  };
  if (shown.truncated) {
    meta.truncated = 'true';
    meta.truncation_reason = 'capture_budget';
  }
  if (result.outputFile !== undefined) {
    meta.spill_path = result.outputFile.path;
    if (!result.outputFile.complete) meta.spill_incomplete = 'true';
  }
  if (result.signal !== null) meta.sandbox_signal = result.signal;
  if (result.timedOut) meta.sandbox_timed_out = 'true';
  if (result.protectedPathViolations.length > 0) meta.sandbox_protected_path_violations = result.protectedPathViolations.join('\n');
  if (result.scrubbedEnv.length > 0) meta.sandbox_scrubbed_env = result.scrubbedEnv.join('\n');
  if (result.limitsHit !== undefined) meta.sandbox_limits_hit = result.limitsHit.join('\n');
  if (result.limitsNotEnforced !== undefined) meta.sandbox_limits_not_enforced = result.limitsNotEnforced.join('\n');
  if (result.interruptedRunRepairs !== undefined) meta.sandbox_interrupted_run_repairs = result.interruptedRunRepairs.map((v) => v.path).join('\n');
  // Those keys describe one denial (clients of the Go Zero CLI read a single one): what the sandbox
  // itself refused (a protected path, the network) before a cap of the run (output kept, timeout).
  const first = result.denials.find((d) => d.capability.kind !== 'resource_limit') ?? result.denials[0];
  if (first !== undefined) {
    Object.assign(meta, denialMeta(first));
    meta.sandbox_denials = JSON.stringify(result.denials);
  }
  return meta;
}

/** Emits `error` then `run_end` and returns the exit code. */
export function emitFailure(emitter: StreamEmitter, error: { code: string; message: string; recoverable?: boolean; detail?: string; line?: number; field?: string }, exitCode: number): number {
  const event: Parameters<StreamEmitter['emit']>[0] = {
    type: 'error',
    code: error.code,
    message: error.message,
    recoverable: error.recoverable ?? false,
    ...(error.detail === undefined ? {} : { detail: error.detail }),
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.field === undefined ? {} : { field: error.field }),
  };
  emitter.emit(event);
  emitter.emit({ type: 'run_end', status: error.code === 'interrupted' ? 'interrupted' : 'error', exitCode });
  return exitCode;
}

/** The structured denial of a call the permission flow stopped. */
function permissionDenial(error: SandboxError, shown: readonly PermissionBody[], block: StreamBlock | undefined): SandboxDenial {
  const prompt = error.code === 'approval_required';
  // The engine's own classification says whether it was about the network: a network block, or
  // a request whose risk has the network category.
  const network = block?.code === 'network' || shown.some((body) => body.risk?.categories?.includes('network') === true);
  const kind = network ? 'external_network' : block?.path !== undefined ? 'workspace_write' : 'unrestricted';
  return {
    capability: { kind, ...(block?.path === undefined ? {} : { scope: block.path }) },
    source: prompt ? 'approval' : 'configured_policy',
    reason: error.message,
    recoverable: prompt || block?.recoverable === true,
    nextAction: prompt ? 'request_approval' : 'change_command',
  };
}

function emitDenied(emitter: StreamEmitter, error: SandboxError, shown: readonly PermissionBody[]): number {
  const output = buildDeniedOutput(error);
  const block = [...shown].reverse().find((body) => body.block !== undefined)?.block;
  const denial = permissionDenial(error, shown, block);
  const meta: ToolResultMeta = { permission_action: error.code === 'approval_required' ? 'prompt' : 'deny', sandbox_denials: JSON.stringify([denial]) };
  emitter.emit({ type: 'tool_result', id: CALL_ID, name: TOOL, status: 'error', output, truncated: false, ...(block === undefined ? {} : { block }), meta });
  emitter.emit({ type: 'final', text: output });
  emitter.emit({ type: 'run_end', status: 'error', exitCode: STREAM_EXIT.denied });
  return STREAM_EXIT.denied;
}

/**
 * Runs one session: run_start, warnings, tool_call, the permission flow (prompt without a
 * responder → permission_request and an error result; deny → permission_decision with the block
 * and an error result), and on allow the sandboxed run with the options the engine approved,
 * tool_result with sandbox facts, final and run_end. Resolves to the exit code (run_end's). Never
 * throws for command or sandbox failures: they become protocol events.
 */
export async function runStreamSession(options: SessionOptions): Promise<number> {
  const { emitter, workspace } = options;
  emitter.emit({ type: 'run_start', cwd: workspace });
  for (const warning of options.warnings ?? []) emitter.emit({ type: 'warning', code: warning.code, message: warning.message });
  emitter.emit({ type: 'tool_call', id: CALL_ID, name: TOOL, args: { command: options.display }, sideEffect: 'shell' });
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
      return emitDenied(emitter, error, shown);
    }
  }
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  let result: RunResult;
  try {
    const runner = options.runner ?? (await import('../sandbox/run.js')).runValidated;
    // The capture keeps several times what is shown, so the cut here (after redaction) decides.
    result = await runner(options.command, { ...runOptions, maxBuffer: runOptions.maxBuffer ?? Math.max(4 * max, 64 * 1024) });
  } catch (error) {
    return failRun(emitter, error);
  } finally {
    cleanup();
  }
  if (result.aborted) return failRun(emitter, new SandboxError('aborted', 'the sandboxed command was aborted; every process in its sandbox was killed'));
  // As `zero-sandbox run`: a command that created protected metadata does not count as a success.
  const exitCode = result.protectedPathViolations.length > 0 && result.exitCode === 0 && !result.timedOut ? STREAM_EXIT.failure : buildExitCode(result);
  // runSandboxed already put the shell-style exec failure line ("NAME: command not found") on stderr.
  let stderr = result.stderr;
  for (const { path, reason } of result.interruptedRunRepairs ?? []) stderr += `zero-sandbox: ${interruptedRunNotice(path, reason)}\n`;
  for (const path of result.protectedPathViolations) stderr += `zero-sandbox: sandbox blocked creation of protected workspace metadata path ${path} (removed)\n`;
  const out = buildStreamOutput(result.stdout, result.outputBytes.stdout, max);
  const err = buildStreamOutput(stderr, result.outputBytes.stderr + (Buffer.byteLength(stderr) - Buffer.byteLength(result.stderr)), max);
  const redactions = out.redactions + err.redactions;
  let output = formatToolOutput(out.output, err.output, exitCode, redactions);
  // A timeout is reported as stream-json's bash tool does, with what the command printed until then.
  if (result.timedOut) output = `Error: Command timed out after ${runOptions.timeoutMs ?? 0}ms.${output === NO_OUTPUT ? '' : `\n${output}`}`;
  const shown = { emitted: Buffer.byteLength(out.output) + Buffer.byteLength(err.output), truncated: out.truncated || err.truncated || result.truncated };
  const meta = buildMeta(result, resolve(workspace, runOptions.cwd ?? '.'), exitCode, shown);
  emitter.emit({ type: 'tool_result', id: CALL_ID, name: TOOL, status: exitCode === 0 ? 'ok' : 'error', output, truncated: shown.truncated, ...(redactions > 0 ? { redacted: true } : {}), meta });
  // The final text is the output as a terminal would show it (what the text format prints).
  emitter.emit({ type: 'final', text: joinStreams(out.output, err.output) });
  emitter.emit({ type: 'run_end', status: exitCode === 0 ? 'success' : 'error', exitCode });
  return exitCode;
}

const EXIT_BY_CODE: Partial<Record<string, number>> = {
  invalid_argument: STREAM_EXIT.usage,
  policy_invalid: STREAM_EXIT.usage,
  config_invalid: STREAM_EXIT.config,
  aborted: STREAM_EXIT.interrupted,
  max_buffer_exceeded: STREAM_EXIT.failure,
};

function failRun(emitter: StreamEmitter, error: unknown): number {
  if (error instanceof SandboxError) {
    // A signal ended the run: the protocol's `interrupted` (error code and run_end status), exit 130.
    if (error.code === 'aborted') {
      emitter.emit({ type: 'tool_result', id: CALL_ID, name: TOOL, status: 'error', output: error.message, truncated: false });
      return emitFailure(emitter, { code: 'interrupted', message: 'run cancelled by signal; every process in the sandbox was killed', recoverable: false }, STREAM_EXIT.interrupted);
    }
    const exitCode = EXIT_BY_CODE[error.code] ?? STREAM_EXIT.sandboxUnavailable;
    emitter.emit({ type: 'tool_result', id: CALL_ID, name: TOOL, status: 'error', output: error.message, truncated: false });
    const code = exitCode === STREAM_EXIT.usage ? 'usage_error' : error.code;
    return emitFailure(emitter, { code, message: error.message, recoverable: false }, exitCode);
  }
  const message = error instanceof Error ? error.message : String(error);
  emitter.emit({ type: 'tool_result', id: CALL_ID, name: TOOL, status: 'error', output: message, truncated: false });
  return emitFailure(emitter, { code: 'internal_error', message, recoverable: false }, STREAM_EXIT.failure);
}
