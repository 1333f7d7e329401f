// SPDX-License-Identifier: MIT
// Parses stream-json v2 input (JSONL) strictly: every rejected line yields an error naming the line and field.
import { INPUT_EVENT_SCHEMAS, STREAM_JSON_SCHEMA_VERSION, type InputEvent } from './schema.js';

/** Stable codes of input errors. */
export type InputErrorCode = 'invalid_json' | 'invalid_event' | 'unsupported_schema_version' | 'unknown_event_type' | 'unknown_field' | 'invalid_field';

/** Why one input line was rejected. */
export interface InputError {
  /** Stable code. */
  code: InputErrorCode;
  /** 1-based line number in the input. */
  line: number;
  /** The field at fault (dotted path), when one is. */
  field?: string;
  /** Human-readable message naming the line and field. */
  message: string;
}

/** An accepted input event and where it came from. */
export interface AcceptedInput {
  /** 1-based line number in the input. */
  line: number;
  /** The validated event. */
  event: InputEvent;
}

/** The outcome of reading a whole input. */
export interface ReadResult {
  /** Accepted events, in input order. */
  events: AcceptedInput[];
  /** Rejected lines, in input order. Any error means nothing may run. */
  errors: InputError[];
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

// Worded as Zero words it ("Invalid stream-json input at line N: ..."): a client may match it.
function fail(line: number, code: InputErrorCode, message: string, field?: string): InputError {
  const where = field === undefined ? `Invalid stream-json input at line ${line}` : `Invalid stream-json input at line ${line}, field "${field}"`;
  return field === undefined ? { code, line, message: `${where}: ${message}` } : { code, line, field, message: `${where}: ${message}` };
}

/** Validates one already-parsed JSON value as an input event. */
export function readInputValue(value: unknown, line: number): InputEvent | InputError {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail(line, 'invalid_event', `expected a JSON object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  if (!('schemaVersion' in record)) return fail(line, 'unsupported_schema_version', 'schemaVersion is missing (must be 2)', 'schemaVersion');
  if (record.schemaVersion !== STREAM_JSON_SCHEMA_VERSION) {
    return fail(line, 'unsupported_schema_version', `schemaVersion ${describe(record.schemaVersion)} is not supported (must be 2)`, 'schemaVersion');
  }
  if (!('type' in record)) return fail(line, 'unknown_event_type', 'type is missing (expected "message" or "prompt")', 'type');
  const type = record.type;
  if (type !== 'message' && type !== 'prompt') {
    return fail(line, 'unknown_event_type', `unknown input event type ${describe(type)} (expected "message" or "prompt")`, 'type');
  }
  const result = INPUT_EVENT_SCHEMAS[type].safeParse(value);
  if (result.success) {
    // A line with nothing to run (and no images) is refused with the rest, as Zero refuses it.
    const images = result.data.type === 'message' ? (result.data.images?.length ?? 0) : 0;
    if (result.data.content.trim() === '' && images === 0) return fail(line, 'invalid_field', 'content is required (empty or only whitespace)', 'content');
    return result.data;
  }
  const unknown = result.error.issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown !== undefined && unknown.code === 'unrecognized_keys') {
    const field = [...unknown.path.map(String), unknown.keys[0] ?? ''].filter((part) => part !== '').join('.');
    const more = unknown.keys.length > 1 ? ` (also: ${unknown.keys.slice(1).join(', ')})` : '';
    return fail(line, 'unknown_field', `unknown field ${field} in a ${type} event${more}`, field);
  }
  const issue = result.error.issues[0];
  const field = issue === undefined ? undefined : issue.path.map(String).join('.');
  const got = field === undefined || field === '' ? '' : ` (got ${describe(pick(record, issue!.path))})`;
  return fail(line, 'invalid_field', `${issue?.message ?? 'invalid event'}${got}`, field === '' ? undefined : field);
}

function pick(record: Record<string, unknown>, path: ReadonlyArray<PropertyKey>): unknown {
  let current: unknown = record;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Parses one input line (which must not be blank). */
export function readInputLine(text: string, line: number): InputEvent | InputError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail(line, 'invalid_json', `not valid JSON (${(error as Error).message})`);
  }
  return readInputValue(value, line);
}

function isInputError(value: InputEvent | InputError): value is InputError {
  return 'code' in value && 'line' in value && 'message' in value && !('schemaVersion' in value);
}

/** Parses a whole JSONL input. Blank lines (only whitespace) are ignored; `\r\n` endings are accepted. */
export function readInput(text: string): ReadResult {
  const events: AcceptedInput[] = [];
  const errors: InputError[] = [];
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const content = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (content.trim() === '') continue;
    const parsed = readInputLine(content, index + 1);
    if (isInputError(parsed)) errors.push(parsed);
    else events.push({ line: index + 1, event: parsed });
  }
  return { events, errors };
}

/** Joins the content of accepted events in order, each trimmed, separated by a blank line. */
export function buildScript(events: readonly AcceptedInput[]): string {
  return events
    .map(({ event }) => event.content.trim())
    .filter((content) => content !== '')
    .join('\n\n');
}
