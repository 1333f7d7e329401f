// SPDX-License-Identifier: MIT
// The three output formats of a run: stream-json (JSONL as it happens), json (one document), text (people).
import type { EventSink } from './emitter.js';
import type { OutputEvent, PermissionDecisionEvent, PermissionRequestEvent, StreamBlock, StreamGrant, StreamRisk, ToolResultMeta } from './schema.js';

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

/** A permission record of the json format (the reference's snake_case shape). */
export interface JsonPermissionRecord {
  /** `permission_request` or `permission_decision`. */
  type: 'permission_request' | 'permission_decision';
  /** Tool call id. */
  tool_call_id: string;
  /** Tool name. */
  name: string;
  /** prompt, allow, deny or cancel. */
  action: string;
  /** Tool safety metadata. */
  permission: string;
  /** Whether the call may proceed. */
  permission_granted: boolean;
  /** Permission mode. */
  permission_mode?: string;
  /** Side effect. */
  side_effect?: string;
  /** Engine reason. */
  reason?: string;
  /** Who or what decided. */
  decision_reason?: string;
  /** Risk. */
  risk?: StreamRisk;
  /** Block, when the decision has one. */
  block?: StreamBlock;
  /** A grant decided it. */
  grant_matched?: boolean;
  /** The grant. */
  grant?: StreamGrant;
}

/** The single document `--output-format json` prints when the run ends. */
export interface JsonRunDocument {
  /** Always 2. */
  schema_version: 2;
  /** The run id. */
  run_id: string;
  /** run_end status. */
  status: 'success' | 'error' | 'denied';
  /** run_end exit code. */
  exit_code: number;
  /** Working directory, when the run started. */
  cwd?: string;
  /** Final text, when there is one. */
  final?: string;
  /** Tool calls. */
  tool_calls: Array<{ id: string; name: string; args: Record<string, unknown>; side_effect: string }>;
  /** Tool results. */
  tool_results: Array<{ tool_call_id: string; status: string; output: string; truncated: boolean; block?: StreamBlock; meta?: ToolResultMeta }>;
  /** Permission events. */
  permissions: JsonPermissionRecord[];
  /** Errors. */
  errors: Array<{ code: string; message: string; recoverable: boolean; line?: number; field?: string }>;
}

function buildPermissionRecord(event: PermissionRequestEvent | PermissionDecisionEvent): JsonPermissionRecord {
  const record: JsonPermissionRecord = {
    type: event.type,
    tool_call_id: event.id,
    name: event.name,
    action: event.action,
    permission: event.permission,
    permission_granted: event.type === 'permission_decision' ? event.permissionGranted : false,
  };
  if (event.permissionMode !== undefined) record.permission_mode = event.permissionMode;
  if (event.sideEffect !== undefined) record.side_effect = event.sideEffect;
  if (event.reason !== undefined) record.reason = event.reason;
  if (event.type === 'permission_decision' && event.decisionReason !== undefined) record.decision_reason = event.decisionReason;
  if (event.risk !== undefined) record.risk = event.risk;
  if (event.block !== undefined) record.block = event.block;
  if (event.grantMatched !== undefined) record.grant_matched = event.grantMatched;
  if (event.grant !== undefined) record.grant = event.grant;
  return record;
}

/** Builds the json format's document from a finished run's events (which must end with run_end). */
export function buildJsonDocument(events: readonly OutputEvent[]): JsonRunDocument {
  const end = [...events].reverse().find((event) => event.type === 'run_end');
  if (end === undefined || end.type !== 'run_end') throw new Error('stream-json: buildJsonDocument needs a finished run (no run_end event)');
  const start = events.find((event) => event.type === 'run_start');
  const final = [...events].reverse().find((event) => event.type === 'final');
  const doc: JsonRunDocument = {
    schema_version: 2,
    run_id: end.runId,
    status: end.status,
    exit_code: end.exitCode,
    ...(start?.type === 'run_start' ? { cwd: start.cwd } : {}),
    ...(final?.type === 'final' ? { final: final.text } : {}),
    tool_calls: [],
    tool_results: [],
    permissions: [],
    errors: [],
  };
  for (const event of events) {
    switch (event.type) {
      case 'tool_call':
        doc.tool_calls.push({ id: event.id, name: event.name, args: event.args, side_effect: event.sideEffect });
        break;
      case 'tool_result': {
        const result: JsonRunDocument['tool_results'][number] = { tool_call_id: event.id, status: event.status, output: event.output, truncated: event.truncated };
        if (event.block !== undefined) result.block = event.block;
        if (event.meta !== undefined) result.meta = event.meta;
        doc.tool_results.push(result);
        break;
      }
      case 'permission_request':
      case 'permission_decision':
        doc.permissions.push(buildPermissionRecord(event));
        break;
      case 'error': {
        const error: JsonRunDocument['errors'][number] = { code: event.code, message: event.message, recoverable: event.recoverable };
        if (event.line !== undefined) error.line = event.line;
        if (event.field !== undefined) error.field = event.field;
        doc.errors.push(error);
        break;
      }
      default:
        break;
    }
  }
  return doc;
}

/** The stream-json format: one line per event, written as it happens. */
export function createStreamJsonSink(io: FormatIo): EventSink {
  return { write: (event) => io.stdout(`${JSON.stringify(event)}\n`), finish: () => undefined };
}

/** The json format: nothing until run_end, then one document. */
export function createJsonSink(io: FormatIo): EventSink {
  const events: OutputEvent[] = [];
  return {
    write: (event) => void events.push(event),
    finish: () => io.stdout(`${JSON.stringify(buildJsonDocument(events), null, 2)}\n`),
  };
}

/** The text format: the command's (redacted) output on stdout; permissions, denials and errors on stderr. */
export function createTextSink(io: FormatIo, prefix: string): EventSink {
  return {
    write: (event) => {
      switch (event.type) {
        case 'permission_request':
          io.stderr(`[permission] ${event.name} ${event.action}: ${event.reason ?? ''}\n`);
          break;
        case 'permission_decision':
          io.stderr(`[permission] ${event.name} ${event.action}: ${event.decisionReason ?? event.reason ?? ''}\n`);
          break;
        case 'tool_result':
          if (event.status === 'denied') io.stderr(`${prefix}: ${event.output}\n`);
          else if (event.meta !== undefined) io.stdout(event.output);
          if (event.truncated) io.stderr(`${prefix}: output truncated\n`);
          break;
        case 'error':
          io.stderr(`${prefix}: ${event.message} [${event.code}]\n`);
          break;
        default:
          break;
      }
    },
    finish: () => undefined,
  };
}

/** The sink for a format. */
export function createSink(format: OutputFormat, io: FormatIo, prefix: string): EventSink {
  if (format === 'stream-json') return createStreamJsonSink(io);
  if (format === 'json') return createJsonSink(io);
  return createTextSink(io, prefix);
}
