// SPDX-License-Identifier: MIT
// The three output formats of a run: stream-json (JSONL as it happens), json (snake_case records as they happen, ending with done), text (people).
import type { EventSink } from './emitter.js';
import type { OutputEvent, PermissionDecisionEvent, PermissionRequestEvent } from './schema.js';

/** The `--output-format` values. */
export const OUTPUT_FORMATS = ['stream-json', 'json', 'text'] as const;
/** An output format. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Where a sink writes (CliIo's shape). */
export interface FormatIo {
  /** Protocol or result output. */
  stdout(text: string): void;
  /** Diagnostics for people. */
  stderr(text: string): void;
}

/**
 * One line of `--output-format json`: the snake_case records stream-json's JSON output uses. Every
 * run ends with `{"type":"done","exit_code":N}`.
 */
export type JsonRecord = { type: string } & Record<string, unknown>;

function permissionRecord(event: PermissionRequestEvent | PermissionDecisionEvent): JsonRecord {
  const record: JsonRecord = {
    type: 'permission',
    tool_call_id: event.id,
    name: event.name,
    action: event.action,
    permission: event.permission ?? '',
    permission_granted: event.permissionGranted === true,
    permission_mode: event.permissionMode ?? '',
    autonomy: event.autonomy ?? '',
    side_effect: event.sideEffect ?? '',
    reason: event.reason ?? '',
    decision_reason: event.decisionReason ?? '',
    risk: event.risk ?? null,
  };
  if (event.block !== undefined) record.block = event.block;
  if (event.grantMatched === true) record.grant_matched = true;
  if (event.grant !== undefined) record.grant = event.grant;
  return record;
}

/** The json format's record for one event (undefined: the event has none, e.g. run_end's is `done`). */
export function buildJsonRecord(event: OutputEvent, permissionMode = ''): JsonRecord | undefined {
  switch (event.type) {
    case 'run_start':
      return { type: 'run_start', cwd: event.cwd ?? '', provider: event.provider ?? '', model: event.model ?? '', api_model: event.apiModel ?? '', permission_mode: permissionMode };
    case 'text':
    case 'reasoning':
      return { type: event.type, delta: event.delta ?? '' };
    case 'tool_call':
      return { type: 'tool_call', id: event.id, name: event.name, arguments: JSON.stringify(event.args ?? {}) };
    case 'tool_result': {
      const record: JsonRecord = { type: 'tool_result', tool_call_id: event.id, name: event.name ?? '', status: event.status, output: event.output ?? '' };
      if (event.meta !== undefined && Object.keys(event.meta).length > 0) record.meta = event.meta;
      if (event.truncated === true) record.truncated = true;
      if (event.redacted === true) record.redacted = true;
      if (event.changedFiles !== undefined && event.changedFiles.length > 0) record.changed_files = event.changedFiles;
      if (event.display !== undefined) record.display = { summary: event.display.summary ?? '', kind: event.display.kind ?? '' };
      return record;
    }
    case 'permission_request':
    case 'permission_decision':
      return permissionRecord(event);
    case 'usage':
      return { type: 'usage', prompt_tokens: event.promptTokens ?? 0, completion_tokens: event.completionTokens ?? 0, total_tokens: event.totalTokens ?? 0 };
    case 'final':
      return { type: 'final', text: event.text ?? '' };
    case 'warning':
      return { type: 'warning', message: event.message ?? '' };
    case 'error':
      return { type: 'error', code: event.code, message: event.message };
    case 'run_end':
      return { type: 'done', exit_code: event.exitCode };
    default:
      return undefined;
  }
}

/** The most bytes of `tool_result.output` a stream-json line carries (the json format carries all). */
export const STREAM_JSON_OUTPUT_LIMIT = 10 * 1024;

/**
 * A tool result's output as a stream-json line carries it: over STREAM_JSON_OUTPUT_LIMIT bytes it
 * is cut there on a character boundary and `\n[truncated]` appended, and `truncated` is true.
 */
export function capStreamJsonOutput(event: OutputEvent): OutputEvent {
  if (event.type !== 'tool_result' || event.output === undefined) return event;
  const bytes = Buffer.from(event.output, 'utf8');
  if (bytes.length <= STREAM_JSON_OUTPUT_LIMIT) return event;
  let end = STREAM_JSON_OUTPUT_LIMIT;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { ...event, output: `${bytes.subarray(0, end).toString('utf8')}\n[truncated]`, truncated: true };
}

/** The stream-json format: one line per event, written as it happens. */
export function createStreamJsonSink(io: FormatIo): EventSink {
  return { write: (event) => io.stdout(`${JSON.stringify(capStreamJsonOutput(event))}\n`), finish: () => undefined };
}

/**
 * The json format: one snake_case record per line as it happens, ending with `done`; run_start
 * names the run's permission mode.
 */
export function createJsonSink(io: FormatIo, permissionMode = ''): EventSink {
  return {
    write: (event) => {
      const record = buildJsonRecord(event, permissionMode);
      if (record !== undefined) io.stdout(`${JSON.stringify(record)}\n`);
    },
    finish: () => undefined,
  };
}

/** The text format: the command's (redacted) output on stdout; permissions, denials and errors on stderr. */
export function createTextSink(io: FormatIo, prefix: string): EventSink {
  // Set once the command ran: its output is then `final`'s text, as a terminal would show it.
  let ran = false;
  return {
    write: (event) => {
      switch (event.type) {
        case 'permission_request':
          io.stderr(`[permission] ${event.name} ${event.action}: ${event.reason ?? ''}\n`);
          break;
        case 'permission_decision':
          // What stopped a call, as Zero's text mode shows it; an allow (asked or not) is quiet.
          if (event.action !== 'allow') io.stderr(`[permission] ${event.name} ${event.action}: ${event.decisionReason ?? event.reason ?? ''}\n`);
          break;
        case 'tool_result':
          // A call the permission flow stopped: stderr; a command that ran: its output on stdout
          // (a run that failed before that is reported by its error event).
          if (event.meta?.permission_action !== undefined) io.stderr(`${prefix}: ${event.output ?? ''}\n`);
          else if (event.meta?.exit_code !== undefined) ran = true;
          if (event.meta?.sandbox_timed_out === 'true') io.stderr(`${prefix}: the command timed out; the sandbox was killed\n`);
          if (event.truncated) io.stderr(`${prefix}: output truncated\n`);
          break;
        case 'final':
          if (ran) io.stdout(event.text ?? '');
          break;
        case 'error':
          io.stderr(`${prefix}: ${event.message} [${event.code}]\n`);
          break;
        case 'warning':
          io.stderr(`${prefix}: warning: ${event.message ?? ''}\n`);
          break;
        default:
          break;
      }
    },
    finish: () => undefined,
  };
}

/** The sink for a format (`permissionMode`: the run's, for the json format's run_start). */
export function createSink(format: OutputFormat, io: FormatIo, prefix: string, permissionMode = ''): EventSink {
  if (format === 'stream-json') return createStreamJsonSink(io);
  if (format === 'json') return createJsonSink(io, permissionMode);
  return createTextSink(io, prefix);
}
