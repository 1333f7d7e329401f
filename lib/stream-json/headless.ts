// SPDX-License-Identifier: MIT
// The headless flows behind the CLI: `exec` (stream-json input → engine → sandbox) and `run` with a structured output format.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

import { SandboxError } from '../errors.js';
import type { RunOptions, SandboxCommand } from '../sandbox/options.js';
import { commandText } from '../sandbox/authorize.js';
import { assertNotHostHandover } from '../sandbox/host-handover.js';
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
  /** Input file; default: `readStdin`. */
  file?: string;
  /** Reads standard input to the end; resolves to undefined once more than `maxBytes` arrived. */
  readStdin: (maxBytes: number) => Promise<string | undefined>;
  /** Workspace directory (default: process.cwd()). */
  workspace?: string;
  /** Kill the command after this many milliseconds. */
  timeoutMs?: number;
  /** Builds the permission engine (default: createEngineAuthority). */
  createAuthority?: AuthorityFactory;
  /** Runs the command (default runSandboxed). */
  runner?: SandboxRunner;
  /** Output bound in characters. */
  maxOutputChars?: number;
  /** Run id (default: generated). */
  runId?: string;
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
    const code = error instanceof SandboxError ? error.code : 'engine_unavailable';
    const message = `the permission engine could not be created, so nothing ran: ${(error as Error).message}`;
    const exitCode = code === 'config_invalid' ? STREAM_EXIT.config : code === 'invalid_argument' ? STREAM_EXIT.usage : STREAM_EXIT.sandboxUnavailable;
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

/** The interpreter a combined script runs with: bash (the tool is `bash`), else /bin/sh. */
export function buildScriptCommand(script: string): SandboxCommand {
  return existsSync('/bin/bash') ? ['/bin/bash', '-c', script] : script;
}

/**
 * `zero-sandbox exec`: reads stream-json input, rejects it whole on any bad line (an `error` event
 * per line naming line and field, then run_end, exit 2; nothing runs), otherwise combines the
 * content in order, evaluates it as one bash request and runs it through runStreamSession.
 */
export async function runExecStream(options: ExecOptions): Promise<number> {
  const emitter = new StreamEmitter(createSink(options.format, options.io, 'zero-sandbox exec'), options.runId);
  const workspace = checkWorkspace(options.workspace);
  if (typeof workspace !== 'string') return emitFailure(emitter, { code: 'invalid_argument', message: workspace.message, field: 'workspace' }, STREAM_EXIT.usage);
  const source = options.file === undefined ? 'standard input' : `--file ${options.file}`;
  let text: string | undefined;
  try {
    if (options.file === undefined) text = await options.readStdin(MAX_INPUT_BYTES);
    else if (statSync(options.file).size <= MAX_INPUT_BYTES) text = readFileSync(options.file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return emitFailure(emitter, { code: 'input_unreadable', message: `${source}: cannot read (${reason})` }, STREAM_EXIT.usage);
  }
  if (text === undefined) {
    return emitFailure(emitter, { code: 'input_too_large', message: `${source}: the input is larger than ${MAX_INPUT_BYTES} bytes` }, STREAM_EXIT.usage);
  }
  // The reader loads zod; only exec needs it, so `run --output-format` stays off it.
  const { buildScript, readInput } = await import('./reader.js');
  const { events, errors } = readInput(text);
  if (errors.length > 0) {
    for (const error of errors) {
      emitter.emit({ type: 'error', code: error.code, message: error.message, recoverable: false, line: error.line, ...(error.field === undefined ? {} : { field: error.field }) });
    }
    emitter.emit({ type: 'run_end', status: 'error', exitCode: STREAM_EXIT.usage });
    return STREAM_EXIT.usage;
  }
  const withImages = events.find(({ event }) => event.type === 'message' && event.images !== undefined && event.images.length > 0);
  if (withImages !== undefined) {
    const message = `line ${withImages.line}, field "images": zero-sandbox exec runs shell scripts and cannot take images`;
    return emitFailure(emitter, { code: 'unsupported_input', message, line: withImages.line, field: 'images' }, STREAM_EXIT.usage);
  }
  const script = buildScript(events);
  if (script.trim() === '') {
    const message = events.length === 0 ? 'the input has no message or prompt event: nothing to run' : 'the input events have no content: nothing to run';
    return emitFailure(emitter, { code: 'empty_input', message }, STREAM_EXIT.usage);
  }
  const authority = await openAuthority(options.createAuthority, workspace, emitter, options.io, 'zero-sandbox exec');
  if (typeof authority === 'number') return authority;
  // One command per process: a prewarmed sandbox would never be used.
  const runOptions: RunOptions = { prewarm: false, workspace };
  if (options.timeoutMs !== undefined) runOptions.timeoutMs = options.timeoutMs;
  return withInterrupts((signal) =>
    runStreamSession({
      emitter,
      command: buildScriptCommand(script),
      display: script,
      workspace,
      runOptions: { ...runOptions, signal },
      authorize: authority.authorize,
      ...(options.runner === undefined ? {} : { runner: options.runner }),
      ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }),
    }),
  );
}

/**
 * Runs `body` with an AbortSignal that SIGINT, SIGTERM and SIGHUP abort, so an interrupted run
 * kills its sandbox and still ends the stream with `error` and `run_end` instead of dying mid-line.
 */
export async function withInterrupts<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const name of signals) process.on(name, onSignal);
  try {
    return await body(controller.signal);
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
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
  if (typeof workspace !== 'string') return emitFailure(emitter, { code: 'invalid_argument', message: workspace.message, field: 'workspace' }, STREAM_EXIT.usage);
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
