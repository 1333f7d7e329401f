// SPDX-License-Identifier: MIT
// The headless flows behind the CLI: `exec` (stream-json input → engine → sandbox) and `run` with a structured output format.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import { callNative } from '../native/load.js';
import type { ResourceLimits } from '../backend/types.js';
import type { RunOptions, SandboxCommand } from '../sandbox/options.js';
import { commandText } from '../sandbox/authorize.js';
import { assertNotHostHandover } from '../sandbox/host-handover.js';
import { resolveWriteRoot } from '../sandbox/plan.js';
import { HostFacts } from '../host-facts.js';
import type { EngineAuthority } from './engine-adapter.js';
import { StreamEmitter } from './emitter.js';
import { createSink, type FormatIo, type OutputFormat } from './formats.js';
import { emitFailure, runStreamSession, STREAM_EXIT, type SandboxRunner } from './session.js';

/** Largest input exec reads (16 MiB): the whole input is read before anything runs. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Creates the permission engine for a workspace (the real one: createEngineAuthority). */
export type AuthorityFactory = (workspace: string) => Promise<EngineAuthority>;

/** Options of runExecStream. */
export interface ExecOptions {
  /** Output format. */
  format: OutputFormat;
  /** Where output goes. */
  io: FormatIo;
  /** text: the script itself (`script`, or the text of `file`); stream-json: input events. Default stream-json. */
  input?: 'text' | 'stream-json';
  /** The script (text input, from arguments or --prompt). */
  script?: string;
  /** Input file, relative to the workspace; default (stream-json): `readStdin`. */
  file?: string;
  /** Reads standard input to the end; resolves to undefined once more than `maxBytes` arrived. */
  readStdin: (maxBytes: number) => Promise<string | undefined>;
  /** Workspace directory (default: process.cwd()). */
  workspace?: string;
  /** The flag that named the workspace, for messages (default --cwd). */
  workspaceFlag?: string;
  /** Extra writable directories (--add-dir). */
  addDirs?: string[];
  /** Keep all of the output in a file (meta.spill_path). */
  keepOutput?: boolean;
  /** Network of the command (default deny; allow answers the network prompt). */
  network?: 'deny' | 'allow';
  /** Resource caps from the --limit-* flags (over the config's and the defaults). */
  limits?: ResourceLimits;
  /** Permission mode of the request (default ask). */
  permissionMode?: 'auto' | 'ask' | 'unsafe';
  /** Kill the command after this many milliseconds. */
  timeoutMs?: number;
  /** Builds the permission engine (default: createEngineAuthority). */
  createAuthority?: AuthorityFactory;
  /** Runs the command (default runSandboxed). */
  runner?: SandboxRunner;
  /** Bytes of each stream tool_result.output keeps. */
  maxOutputBytes?: number;
  /** Warnings to emit after run_start (flags that do not apply). */
  warnings?: Array<{ code: string; message: string }>;
  /** Run id (default: generated). */
  runId?: string;
}

/** `error` (code usage_error) then the end of the run, in a structured format; exit 2. */
export function reportUsageError(format: OutputFormat, io: FormatIo, message: string, runId?: string): number {
  const emitter = new StreamEmitter(createSink(format, io, 'zero-sandbox exec'), runId);
  return emitFailure(emitter, { code: 'usage_error', message }, STREAM_EXIT.usage);
}

/** The real engine factory, loaded only when a run needs it. */
async function loadEngineAuthority(): Promise<AuthorityFactory> {
  return (await import('./engine-adapter.js')).createEngineAuthority;
}

/**
 * Creates the engine for a run; on failure ends the stream (error + run_end: exit 3 for an invalid
 * config, 2 for an invalid argument, else 125) and returns the exit code. Notices go to stderr.
 */
async function openAuthority(factory: AuthorityFactory | undefined, workspace: string, emitter: StreamEmitter, io: FormatIo, prefix: string): Promise<EngineAuthority | number> {
  let authority: EngineAuthority;
  try {
    authority = await (factory ?? (await loadEngineAuthority()))(workspace);
  } catch (error) {
    const code = error instanceof SandboxError ? (error.code === 'invalid_argument' ? 'usage_error' : error.code) : 'engine_unavailable';
    const message = `the permission engine could not be created, so nothing ran: ${(error as Error).message}`;
    const exitCode = code === 'config_invalid' ? STREAM_EXIT.config : code === 'usage_error' ? STREAM_EXIT.usage : STREAM_EXIT.sandboxUnavailable;
    return emitFailure(emitter, { code, message }, exitCode);
  }
  for (const notice of authority.notices) io.stderr(`${prefix}: ${notice}\n`);
  return authority;
}

/** Resolves and checks a workspace directory; the message names the flag and the path. */
export function checkWorkspace(path: string | undefined, flag = '--workspace'): string | { message: string } {
  const absolute = resolve(path ?? process.cwd());
  let isDir: boolean;
  try {
    isDir = statSync(absolute).isDirectory();
  } catch {
    return { message: `${flag} ${absolute}: no such directory` };
  }
  if (!isDir) return { message: `${flag} ${absolute}: not a directory` };
  // Refused here too, before an engine or runtime state is made for it (see host-handover.ts).
  try {
    assertNotHostHandover(realpathSync(absolute), flag, path ?? absolute);
  } catch (error) {
    return { message: (error as Error).message };
  }
  return absolute;
}

/** The interpreter a script runs with: bash (the tool is `bash`), else /bin/sh. */
export function scriptShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/** Reads the input (stdin or the file) within MAX_INPUT_BYTES; an error message when it cannot. */
async function readSource(options: ExecOptions, workspace: string): Promise<string | { code: string; detail: string; message: string }> {
  const path = options.file === undefined ? undefined : resolve(workspace, options.file);
  const source = path === undefined ? 'standard input' : `--file ${path}`;
  let text: string | undefined;
  try {
    if (path === undefined) text = await options.readStdin(MAX_INPUT_BYTES);
    else if (statSync(path).size <= MAX_INPUT_BYTES) text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { code: 'usage_error', detail: 'input_unreadable', message: `${source}: cannot read (${reason})` };
  }
  if (text === undefined) return { code: 'usage_error', detail: 'input_too_large', message: `${source}: the input is larger than ${MAX_INPUT_BYTES} bytes` };
  return text;
}

/** The script of a stream-json input, or the error events' content. */
async function scriptFromEvents(emitter: StreamEmitter, text: string): Promise<string | number> {
  // The reader loads zod; only exec needs it, so `run --output-format` stays off it.
  const { buildScript, readInput } = await import('./reader.js');
  const { events, errors } = readInput(text);
  if (errors.length > 0) {
    for (const error of errors) {
      emitter.emit({ type: 'error', code: 'usage_error', message: error.message, recoverable: false, detail: error.code, line: error.line, ...(error.field === undefined ? {} : { field: error.field }) });
    }
    emitter.emit({ type: 'run_end', status: 'error', exitCode: STREAM_EXIT.usage });
    return STREAM_EXIT.usage;
  }
  const withImages = events.find(({ event }) => event.type === 'message' && event.images !== undefined && event.images.length > 0);
  if (withImages !== undefined) {
    const message = `line ${withImages.line}, field "images": zero-sandbox exec runs shell scripts and cannot take images`;
    return emitFailure(emitter, { code: 'usage_error', detail: 'unsupported_input', message, line: withImages.line, field: 'images' }, STREAM_EXIT.usage);
  }
  const script = buildScript(events);
  if (script.trim() === '') {
    const message = events.length === 0 ? 'the input has no message or prompt event: nothing to run' : 'the input events have no content: nothing to run';
    return emitFailure(emitter, { code: 'usage_error', detail: 'empty_input', message }, STREAM_EXIT.usage);
  }
  return script;
}

/**
 * `zero-sandbox exec`: reads the script (text, or stream-json input that it rejects whole on any
 * bad line: an `error` event per line naming line and field, then run_end, exit 2; nothing runs),
 * evaluates it as one bash request and runs it through runStreamSession. The script goes to the
 * shell through a pipe when it is long; when it was not read from standard input, the command
 * reads the caller's standard input.
 */
export async function runExecStream(options: ExecOptions): Promise<number> {
  const emitter = new StreamEmitter(createSink(options.format, options.io, 'zero-sandbox exec', options.permissionMode ?? 'auto'), options.runId);
  const workspace = checkWorkspace(options.workspace, options.workspaceFlag ?? '--cwd');
  if (typeof workspace !== 'string') return emitFailure(emitter, { code: 'usage_error', detail: 'invalid_argument', message: workspace.message }, STREAM_EXIT.usage);
  // Each --add-dir is checked as the write root it becomes (no symlink hop, no host handover),
  // with the flag named in the message.
  for (const dir of options.addDirs ?? []) {
    try {
      resolveWriteRoot(dir, '--add-dir', workspace, new HostFacts());
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return emitFailure(emitter, { code: 'usage_error', detail: 'invalid_argument', message: error.message }, STREAM_EXIT.usage);
    }
  }
  const input = options.input ?? 'stream-json';
  let script = options.script;
  // Text given as arguments and a --file: the two joined by a blank line, the text first, as Zero
  // joins a prompt and a file.
  if (script === undefined || (input === 'text' && options.file !== undefined)) {
    const text = await readSource(options, workspace);
    if (typeof text !== 'string') return emitFailure(emitter, text, STREAM_EXIT.usage);
    if (input === 'text') script = script === undefined ? text : `${script}\n\n${text.trim()}`;
    else {
      const combined = await scriptFromEvents(emitter, text);
      if (typeof combined === 'number') return combined;
      script = combined;
    }
  }
  if (script.trim() === '') return emitFailure(emitter, { code: 'usage_error', detail: 'empty_input', message: 'the script is empty: nothing to run' }, STREAM_EXIT.usage);
  if (script.includes('\0')) return emitFailure(emitter, { code: 'usage_error', detail: 'invalid_field', message: 'the script contains a NUL byte' }, STREAM_EXIT.usage);
  const authority = await openAuthority(options.createAuthority, workspace, emitter, options.io, 'zero-sandbox exec');
  if (typeof authority === 'number') return authority;
  // One command per process: a prewarmed sandbox would never be used.
  const runOptions: RunOptions & { permissionMode?: 'auto' | 'ask' | 'unsafe' } = { prewarm: false, workspace, shell: scriptShell() };
  if (options.timeoutMs !== undefined) runOptions.timeoutMs = options.timeoutMs;
  if (options.addDirs !== undefined && options.addDirs.length > 0) runOptions.allowWrite = options.addDirs.map((dir) => resolve(workspace, dir));
  if (options.permissionMode !== undefined) runOptions.permissionMode = options.permissionMode;
  if (options.keepOutput === true) runOptions.keepOutputFile = true;
  if (options.network !== undefined) runOptions.network = options.network;
  if (options.limits !== undefined && Object.keys(options.limits).length > 0) runOptions.limits = { ...options.limits };
  // The caller's standard input goes to the command unless the input was read from it.
  if (input === 'text' || options.file !== undefined) runOptions.inheritStdin = true;
  const ran = script;
  return withInterrupts((signal) =>
    runStreamSession({
      emitter,
      command: ran,
      display: ran,
      workspace,
      runOptions: { ...runOptions, signal },
      authorize: authority.authorize,
      ...(options.warnings === undefined ? {} : { warnings: options.warnings }),
      ...(options.runner === undefined ? {} : { runner: options.runner }),
      ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
    }),
  );
}

/**
 * Runs `body` with an AbortSignal that SIGINT, SIGTERM, SIGHUP and a closed standard output abort,
 * so an interrupted run kills its sandbox and still ends the stream with `error` and `run_end`
 * instead of dying mid-line. A closed standard output ends the run quietly with exit 1 (its
 * EPIPE is handled for the rest of the process, so no stack trace is printed).
 */
export async function withInterrupts(body: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of signals) process.on(name, onSignal);
  const stdoutClosed = watchStdout(controller);
  try {
    const code = await body(controller.signal);
    return stdoutClosed() ? STREAM_EXIT.failure : code;
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
}

let stdoutGone = false;
let current: AbortController | undefined;
let watching = false;

/**
 * Watches standard output for the life of the process: when its reader goes away (seen by the
 * addon at once, or as EPIPE on the next write) the current run is aborted, which kills its
 * sandbox, and the process exits 1 without a stack trace.
 */
function watchStdout(controller: AbortController): () => boolean {
  current = controller;
  if (!watching) {
    watching = true;
    const gone = () => {
      stdoutGone = true;
      process.exitCode = STREAM_EXIT.failure;
      current?.abort();
    };
    process.stdout.on('error', gone);
    try {
      callNative((binding) => binding.watchHangup(1, gone));
    } catch {
      // no addon here (nothing can run sandboxed then either): EPIPE on the next write still counts
    }
  }
  return () => stdoutGone;
}

/** Options of runCommandStructured (the `zero-sandbox run --output-format` path). */
export interface StructuredRunOptions {
  /** stream-json or json. */
  format: OutputFormat;
  /** Where output goes. */
  io: FormatIo;
  /** The command: a shell string (-c) or argv. */
  command: SandboxCommand;
  /** The run options `zero-sandbox run` built from its flags. */
  runOptions: RunOptions;
  /** Builds the permission engine (default: createEngineAuthority). */
  createAuthority?: AuthorityFactory;
  /** Runs the command (default runSandboxed). */
  runner?: SandboxRunner;
  /** Run id (default: generated). */
  runId?: string;
}

/**
 * `zero-sandbox run --output-format stream-json|json -- CMD`: the same events for one command, with
 * the same permission flow as the text mode (no terminal to ask: prompts end as denied results;
 * `--network allow` answers the network prompt).
 */
export async function runCommandStructured(options: StructuredRunOptions): Promise<number> {
  const emitter = new StreamEmitter(createSink(options.format, options.io, 'zero-sandbox run'), options.runId);
  const display = commandText(options.command);
  const workspace = checkWorkspace(options.runOptions.workspace);
  if (typeof workspace !== 'string') return emitFailure(emitter, { code: 'usage_error', message: workspace.message, field: 'workspace' }, STREAM_EXIT.usage);
  const authority = await openAuthority(options.createAuthority, workspace, emitter, options.io, 'zero-sandbox run');
  if (typeof authority === 'number') return authority;
  return withInterrupts((signal) =>
    runStreamSession({
      emitter,
      command: options.command,
      display,
      workspace,
      runOptions: { ...options.runOptions, workspace, signal },
      authorize: authority.authorize,
      ...(options.runner === undefined ? {} : { runner: options.runner }),
    }),
  );
}
