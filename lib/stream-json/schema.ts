// SPDX-License-Identifier: MIT
// zod schemas of every stream-json v2 input and output event (the single source of truth) and their types.
// Loaded lazily (exec, `run --output-format stream-json`, loadStreamJsonSchemas()) so zod stays off
// the `run` start-up path.
import { z } from 'zod';

import { PERMISSIONS } from '../policy/engine/constants.js';
import { BlockSchema, GrantSchema, RiskSchema } from '../policy/schema.js';

/** The protocol's schema version: required on every input and output line. */
export const STREAM_JSON_SCHEMA_VERSION = 2;

/** Pattern every output line's `runId` matches. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const schemaVersion = z.literal(STREAM_JSON_SCHEMA_VERSION).describe('Protocol schema version; always 2.');
const runId = z.string().regex(RUN_ID_PATTERN).describe('Identifies the run; the same on every output line of one run.');
const callId = z.string().min(1).describe('Tool call id, e.g. "call_1"; links tool_call, permission and tool_result events.');

// ---------------------------------------------------------------------------------------------
// Input events

/** An image attached to a message: a MIME type and standard base64 data (no `data:` prefix). */
export const InputImageSchema = z
  .strictObject({
    mediaType: z.string().describe('MIME type, e.g. "image/png".'),
    data: z.string().describe('Standard base64 of the image bytes, without a data: prefix.'),
  })
  .describe('An input image.');
/** An input image. */
export type InputImage = z.infer<typeof InputImageSchema>;

/** A user message; its content becomes part of the script. */
export const MessageInputEventSchema = z
  .strictObject({
    schemaVersion,
    type: z.literal('message').describe('Event type.'),
    role: z.literal('user').describe('Only user messages are accepted.'),
    content: z.string().describe('Text; for zero-sandbox exec, shell script text.'),
    images: z.array(InputImageSchema).optional().describe('Images (accepted by the protocol; zero-sandbox exec refuses non-empty lists).'),
  })
  .describe('Input: a user message.');
/** Input: a user message. */
export type MessageInputEvent = z.infer<typeof MessageInputEventSchema>;

/** A prompt; its content becomes part of the script. */
export const PromptInputEventSchema = z
  .strictObject({
    schemaVersion,
    type: z.literal('prompt').describe('Event type.'),
    content: z.string().describe('Text; for zero-sandbox exec, shell script text.'),
  })
  .describe('Input: a prompt.');
/** Input: a prompt. */
export type PromptInputEvent = z.infer<typeof PromptInputEventSchema>;

/** Any input event. */
export const InputEventSchema = z.discriminatedUnion('type', [MessageInputEventSchema, PromptInputEventSchema]).describe('Any stream-json input event.');
/** Any input event. */
export type InputEvent = z.infer<typeof InputEventSchema>;

/** Input schemas by `type`, for readers that report the precise field at fault. */
export const INPUT_EVENT_SCHEMAS = { message: MessageInputEventSchema, prompt: PromptInputEventSchema } as const;

// ---------------------------------------------------------------------------------------------
// Shared shapes

/**
 * Risk of a tool call: the engine's RiskSchema, strict, with `categories` and `reason` optional
 * (the protocol document's examples send `{level, categories}` only).
 */
export const StreamRiskSchema = RiskSchema.partial({ categories: true, reason: true }).strict().describe('Risk classification.');
/** Risk classification. */
export type StreamRisk = z.infer<typeof StreamRiskSchema>;

/** Structured sandbox metadata of a blocked or prompt-gated call (schema 1 called it `violation`): the engine's Block, strict. */
export const StreamBlockSchema = BlockSchema.extend({ risk: StreamRiskSchema }).strict().describe('Sandbox block.');
/** Sandbox block. */
export type StreamBlock = z.infer<typeof StreamBlockSchema>;

/** A grant that decided a permission: the engine's Grant, strict. */
export const StreamGrantSchema = GrantSchema.strict().describe('Sandbox grant.');
/** Sandbox grant. */
export type StreamGrant = z.infer<typeof StreamGrantSchema>;

/**
 * Facts of a tool result: a map of strings (`"exit_code": "0"`, `"sandbox_wrapped": "true"`), as
 * every stream-json client decodes it. The keys zero-sandbox sets are listed in the README.
 */
export const ToolResultMetaSchema = z.record(z.string(), z.string()).describe('Tool result facts: every value a string.');
/** Tool result facts: every value a string. */
export type ToolResultMeta = z.infer<typeof ToolResultMetaSchema>;

/** A compact summary of a tool result. */
export const DisplaySchema = z
  .strictObject({ summary: z.string().optional().describe('One-line summary.'), kind: z.string().optional().describe('Kind of result.') })
  .describe('Display summary.');

/** A file checkpoint or restore (agents only). */
export const CheckpointSchema = z
  .strictObject({
    sequence: z.number().int().optional(),
    tool: z.string().optional(),
    files: z.array(z.string()).optional(),
    filesRestored: z.number().int().optional(),
    filesDeleted: z.number().int().optional(),
    skipped: z.array(z.string()).optional(),
  })
  .describe('Checkpoint facts.');

// ---------------------------------------------------------------------------------------------
// Output events
//
// Field names, JSON types and enum values are those every stream-json client decodes. A field
// the protocol marks as omitted when empty is optional here. zero-sandbox's additions are extra
// keys only (`error.detail`, `error.line`, `error.field`), which such clients ignore.

const out = <T extends string>(type: T) => ({ schemaVersion, type: z.literal(type).describe('Event type.'), runId });

/** First line of every run. */
export const RunStartEventSchema = z
  .strictObject({
    ...out('run_start'),
    sessionId: z.string().optional().describe('Session id, when the run belongs to one.'),
    cwd: z.string().optional().describe('Working directory of the run (the workspace).'),
    provider: z.string().optional().describe('Model provider (agents only; zero-sandbox reports "none").'),
    model: z.string().optional().describe('Model (agents only; zero-sandbox reports "none").'),
    apiModel: z.string().optional().describe('API model name (agents only).'),
  })
  .describe('Output: the run started.');
/** Output: the run started. */
export type RunStartEvent = z.infer<typeof RunStartEventSchema>;

/** Streamed text. */
export const TextEventSchema = z.strictObject({ ...out('text'), delta: z.string().optional().describe('Text fragment.') }).describe('Output: text delta.');
/** Output: text delta. */
export type TextEvent = z.infer<typeof TextEventSchema>;

/** Streamed reasoning (agents only). */
export const ReasoningEventSchema = z.strictObject({ ...out('reasoning'), delta: z.string().optional().describe('Reasoning fragment.') }).describe('Output: reasoning delta.');
/** Output: reasoning delta. */
export type ReasoningEvent = z.infer<typeof ReasoningEventSchema>;

/** A tool is about to be called. */
export const ToolCallEventSchema = z
  .strictObject({
    ...out('tool_call'),
    id: callId,
    name: z.string().min(1).describe('Tool name; "bash" for shell scripts.'),
    args: z.unknown().optional().describe('Tool arguments, e.g. {"command": "..."}.'),
    sideEffect: z.string().optional().describe('Side effect: read, write, shell, network, none or unknown.'),
  })
  .describe('Output: tool call.');
/** Output: tool call. */
export type ToolCallEvent = z.infer<typeof ToolCallEventSchema>;

const permissionCore = {
  sessionId: z.string().optional().describe('Session id, when the run belongs to one.'),
  id: callId,
  name: z.string().min(1).describe('Tool name.'),
  permission: z.enum(PERMISSIONS).optional().describe('Tool safety metadata.'),
  permissionGranted: z.boolean().optional().describe('Whether the call may proceed (false while a request is open).'),
  permissionMode: z.string().optional().describe('Permission mode: auto, ask, unsafe, ...'),
  autonomy: z.string().optional().describe('Autonomy level (agents only).'),
  sideEffect: z.string().optional().describe('Side effect of the tool call.'),
  reason: z.string().optional().describe('Why the engine decided as it did.'),
  decisionReason: z.string().optional().describe('Who or what decided, and why.'),
  risk: StreamRiskSchema.optional(),
  block: StreamBlockSchema.optional(),
  grantMatched: z.boolean().optional().describe('A grant or approved command prefix decided it.'),
  grant: StreamGrantSchema.optional(),
};

/** The engine asks for approval. Headless runs have no responder: an error tool_result follows. */
export const PermissionRequestEventSchema = z
  .strictObject({ ...out('permission_request'), ...permissionCore, action: z.literal('prompt').describe('Always "prompt".') })
  .describe('Output: approval requested.');
/** Output: approval requested. */
export type PermissionRequestEvent = z.infer<typeof PermissionRequestEventSchema>;

/** A permission was decided (by the engine's hard deny, or by a user on interactive surfaces). */
export const PermissionDecisionEventSchema = z
  .strictObject({ ...out('permission_decision'), ...permissionCore, action: z.enum(['allow', 'deny', 'cancel']).describe('The decision.') })
  .describe('Output: permission decided.');
/** Output: permission decided. */
export type PermissionDecisionEvent = z.infer<typeof PermissionDecisionEventSchema>;

/** Any other permission event (agents only). */
export const PermissionEventSchema = z
  .strictObject({ ...out('permission'), ...permissionCore, action: z.string().optional().describe('The permission action.') })
  .describe('Output: permission event.');
/** Output: permission event. */
export type PermissionEvent = z.infer<typeof PermissionEventSchema>;

/** The result of a tool call. */
export const ToolResultEventSchema = z
  .strictObject({
    ...out('tool_result'),
    id: callId,
    name: z.string().min(1).optional().describe('Tool name; "bash" for shell scripts.'),
    status: z.enum(['ok', 'error']).describe('ok: ran and succeeded; error: failed, could not run, or was denied (meta.permission_action "deny").'),
    output: z.string().optional().describe('The command output (redacted), or why it did not run.'),
    truncated: z.boolean().optional().describe('True when output was cut.'),
    redacted: z.boolean().optional().describe('True when secrets were removed from the output.'),
    changedFiles: z.array(z.string()).optional().describe('Files the tool changed (agents only).'),
    display: DisplaySchema.optional(),
    block: StreamBlockSchema.optional(),
    meta: ToolResultMetaSchema.optional(),
  })
  .describe('Output: tool result.');
/** Output: tool result. */
export type ToolResultEvent = z.infer<typeof ToolResultEventSchema>;

/** A checkpoint was taken, or restored (agents only). */
export const CheckpointEventSchema = z.strictObject({ ...out('checkpoint'), checkpoint: CheckpointSchema.optional() }).describe('Output: checkpoint.');
/** Output: checkpoint. */
export type CheckpointEvent = z.infer<typeof CheckpointEventSchema>;
/** A checkpoint was restored (agents only). */
export const RestoreEventSchema = z.strictObject({ ...out('restore'), checkpoint: CheckpointSchema.optional() }).describe('Output: restore.');
/** Output: restore. */
export type RestoreEvent = z.infer<typeof RestoreEventSchema>;

/** Token usage (agents only; zero-sandbox never emits it). */
export const UsageEventSchema = z
  .strictObject({
    ...out('usage'),
    promptTokens: z.number().int().optional().describe('Prompt tokens.'),
    completionTokens: z.number().int().optional().describe('Completion tokens.'),
    totalTokens: z.number().int().optional().describe('Total tokens.'),
    costUsd: z.number().optional().describe('Cost in US dollars.'),
  })
  .describe('Output: token usage.');
/** Output: token usage. */
export type UsageEvent = z.infer<typeof UsageEventSchema>;

/** Final text of the run. */
export const FinalEventSchema = z.strictObject({ ...out('final'), text: z.string().optional().describe('Final text (for exec: the command output or why it did not run).') }).describe('Output: final text.');
/** Output: final text. */
export type FinalEvent = z.infer<typeof FinalEventSchema>;

/** A warning: the run goes on (e.g. a flag that does not apply to a sandbox runtime). */
export const WarningEventSchema = z
  .strictObject({ ...out('warning'), message: z.string().optional().describe('What to know.'), code: z.string().optional().describe('Stable snake_case code, e.g. "flag_not_applicable".') })
  .describe('Output: warning.');
/** Output: warning. */
export type WarningEvent = z.infer<typeof WarningEventSchema>;

/** An error; always followed by run_end. */
export const ErrorEventSchema = z
  .strictObject({
    ...out('error'),
    code: z.string().min(1).describe('Stable snake_case code, e.g. "usage_error", "interrupted", "sandbox_unavailable".'),
    message: z.string().describe('Human-readable message naming the line, field, file or flag at fault.'),
    recoverable: z.boolean().optional().describe('Whether retrying with different input can succeed.'),
    detail: z.string().optional().describe('zero-sandbox extension: the precise snake_case reason of a usage_error, e.g. "unknown_field", "input_too_large".'),
    line: z.number().int().positive().optional().describe('zero-sandbox extension: 1-based input line at fault.'),
    field: z.string().optional().describe('zero-sandbox extension: input field at fault.'),
  })
  .describe('Output: error.');
/** Output: error. */
export type ErrorEvent = z.infer<typeof ErrorEventSchema>;

/** How a run ended. */
export const RUN_END_STATUSES = ['success', 'error', 'interrupted', 'incomplete'] as const;

/** Last line of every run. */
export const RunEndEventSchema = z
  .strictObject({
    ...out('run_end'),
    status: z.enum(RUN_END_STATUSES).describe('success, error (failed, denied or could not run), interrupted (a signal) or incomplete.'),
    exitCode: z.number().int().describe('Exit code of the CLI process.'),
  })
  .describe('Output: the run ended.');
/** Output: the run ended. */
export type RunEndEvent = z.infer<typeof RunEndEventSchema>;

/** Any output event. */
export const OutputEventSchema = z
  .discriminatedUnion('type', [
    RunStartEventSchema,
    TextEventSchema,
    ReasoningEventSchema,
    ToolCallEventSchema,
    PermissionEventSchema,
    PermissionRequestEventSchema,
    PermissionDecisionEventSchema,
    ToolResultEventSchema,
    CheckpointEventSchema,
    RestoreEventSchema,
    UsageEventSchema,
    FinalEventSchema,
    WarningEventSchema,
    ErrorEventSchema,
    RunEndEventSchema,
  ])
  .describe('Any stream-json output event.');
/** Any output event. */
export type OutputEvent = z.infer<typeof OutputEventSchema>;
