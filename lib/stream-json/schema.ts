// SPDX-License-Identifier: MIT
// zod schemas of every stream-json v2 input and output event (the single source of truth) and their types.
// Loaded lazily (exec, `run --output-format stream-json`, loadStreamJsonSchemas()) so zod stays off
// the `run` start-up path.
import { z } from 'zod';

import { PERMISSIONS } from '../policy/constants.js';
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

/** A user message; its content becomes part of the script. */
export const MessageInputEventSchema = z
  .strictObject({
    schemaVersion,
    type: z.literal('message').describe('Event type.'),
    role: z.literal('user').describe('Only user messages are accepted.'),
    content: z.string().describe('Text; for zero-sandbox exec, shell script text.'),
    images: z.array(z.string()).optional().describe('Image paths (accepted by the protocol; zero-sandbox exec refuses non-empty lists).'),
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

/** Sandbox facts of a shell tool result (snake_case keys, as the reference's `meta`). */
export const ToolResultMetaSchema = z
  .strictObject({
    sandbox_backend: z.string().describe('Backend that ran the command, e.g. "linux-native".'),
    sandbox_wrapped: z.boolean().describe('Whether the command ran inside the sandbox.'),
    sandbox_network: z.enum(['deny', 'allow']).describe('Network mode the command ran with.'),
    sandbox_enforcement_level: z.enum(['native', 'unelevated', 'degraded', 'disabled']).describe('How the policy was enforced.'),
    sandbox_cwd: z.string().describe('Working directory (the workspace).'),
    sandbox_exit_code: z.number().int().nullable().describe('Exit code of the command; null when it was killed by a signal.'),
    sandbox_signal: z.string().optional().describe('Signal that ended the command, if any.'),
    sandbox_timed_out: z.boolean().optional().describe('True when the command was killed on timeout.'),
    sandbox_duration_ms: z.number().nonnegative().optional().describe('Wall-clock duration in milliseconds.'),
    sandbox_protected_path_violations: z
      .array(z.string())
      .optional()
      .describe('Protected paths (.git/hooks, .zero, ...) the command created; they were removed when it ended.'),
  })
  .describe('Sandbox facts of a shell result.');
/** Sandbox facts of a shell result. */
export type ToolResultMeta = z.infer<typeof ToolResultMetaSchema>;

// ---------------------------------------------------------------------------------------------
// Output events

const out = <T extends string>(type: T) => ({ schemaVersion, type: z.literal(type).describe('Event type.'), runId });

/** First line of every run. */
export const RunStartEventSchema = z
  .strictObject({
    ...out('run_start'),
    sessionId: z.string().optional().describe('Session id, when the run belongs to one.'),
    cwd: z.string().describe('Working directory of the run (the workspace).'),
    provider: z.string().optional().describe('Model provider (agents only).'),
    model: z.string().optional().describe('Model (agents only).'),
    apiModel: z.string().optional().describe('API model name (agents only).'),
  })
  .describe('Output: the run started.');
/** Output: the run started. */
export type RunStartEvent = z.infer<typeof RunStartEventSchema>;

/** Streamed text. */
export const TextEventSchema = z.strictObject({ ...out('text'), delta: z.string().describe('Text fragment.') }).describe('Output: text delta.');
/** Output: text delta. */
export type TextEvent = z.infer<typeof TextEventSchema>;

/** A tool is about to be called. */
export const ToolCallEventSchema = z
  .strictObject({
    ...out('tool_call'),
    id: callId,
    name: z.string().min(1).describe('Tool name; "bash" for shell scripts.'),
    args: z.record(z.string(), z.unknown()).describe('Tool arguments, e.g. {"command": "..."}.'),
    sideEffect: z.string().describe('Side effect: read, write, shell, network, ...'),
  })
  .describe('Output: tool call.');
/** Output: tool call. */
export type ToolCallEvent = z.infer<typeof ToolCallEventSchema>;

const permissionCore = {
  id: callId,
  name: z.string().min(1).describe('Tool name.'),
  permission: z.enum(PERMISSIONS).describe('Tool safety metadata.'),
  permissionMode: z.string().optional().describe('Permission mode: auto, ask, unsafe, ...'),
  autonomy: z.string().optional().describe('Autonomy level (agents only).'),
  sideEffect: z.string().optional().describe('Side effect of the tool call.'),
  reason: z.string().optional().describe('Why the engine decided as it did.'),
  risk: StreamRiskSchema.optional(),
  block: StreamBlockSchema.optional(),
  grantMatched: z.boolean().optional().describe('A grant or approved command prefix decided it.'),
  grant: StreamGrantSchema.optional(),
  sessionId: z.string().optional().describe('Session id, when the run belongs to one.'),
};

/** The engine asks for approval. Headless runs have no responder: a denied tool_result follows. */
export const PermissionRequestEventSchema = z
  .strictObject({ ...out('permission_request'), ...permissionCore, action: z.literal('prompt').describe('Always "prompt".') })
  .describe('Output: approval requested.');
/** Output: approval requested. */
export type PermissionRequestEvent = z.infer<typeof PermissionRequestEventSchema>;

/** A permission was decided (by the engine's hard deny, or by a user on interactive surfaces). */
export const PermissionDecisionEventSchema = z
  .strictObject({
    ...out('permission_decision'),
    ...permissionCore,
    action: z.enum(['allow', 'deny', 'cancel']).describe('The decision.'),
    permissionGranted: z.boolean().describe('Whether the call may proceed.'),
    decisionReason: z.string().optional().describe('Who or what decided, and why.'),
  })
  .describe('Output: permission decided.');
/** Output: permission decided. */
export type PermissionDecisionEvent = z.infer<typeof PermissionDecisionEventSchema>;

/** The result of a tool call. */
export const ToolResultEventSchema = z
  .strictObject({
    ...out('tool_result'),
    id: callId,
    status: z.enum(['ok', 'error', 'denied']).describe('ok: ran and succeeded; error: ran and failed or could not run; denied: never ran (permission).'),
    output: z.string().describe('stdout then stderr of the command (redacted), or the denial message.'),
    truncated: z.boolean().describe('True when output was cut at the output bound.'),
    block: StreamBlockSchema.optional(),
    meta: ToolResultMetaSchema.optional(),
  })
  .describe('Output: tool result.');
/** Output: tool result. */
export type ToolResultEvent = z.infer<typeof ToolResultEventSchema>;

/** Token usage (agents only; zero-sandbox never emits it). */
export const UsageEventSchema = z
  .strictObject({
    ...out('usage'),
    promptTokens: z.number().int().nonnegative().describe('Prompt tokens.'),
    completionTokens: z.number().int().nonnegative().describe('Completion tokens.'),
    totalTokens: z.number().int().nonnegative().describe('Total tokens.'),
  })
  .describe('Output: token usage.');
/** Output: token usage. */
export type UsageEvent = z.infer<typeof UsageEventSchema>;

/** Final text of the run. */
export const FinalEventSchema = z.strictObject({ ...out('final'), text: z.string().describe('Final text (for exec: the command output or the denial).') }).describe('Output: final text.');
/** Output: final text. */
export type FinalEvent = z.infer<typeof FinalEventSchema>;

/** An error; always followed by run_end. */
export const ErrorEventSchema = z
  .strictObject({
    ...out('error'),
    code: z.string().min(1).describe('Stable snake_case code, e.g. "unknown_field", "sandbox_unavailable".'),
    message: z.string().describe('Human-readable message naming the line, field, file or flag at fault.'),
    recoverable: z.boolean().describe('Whether retrying with different input can succeed.'),
    line: z.number().int().positive().optional().describe('1-based input line at fault.'),
    field: z.string().optional().describe('Input field at fault.'),
  })
  .describe('Output: error.');
/** Output: error. */
export type ErrorEvent = z.infer<typeof ErrorEventSchema>;

/** Last line of every run. */
export const RunEndEventSchema = z
  .strictObject({
    ...out('run_end'),
    status: z.enum(['success', 'error', 'denied']).describe('success, error (failed or could not run) or denied (permission).'),
    exitCode: z.number().int().min(0).max(255).describe('Exit code of the CLI process.'),
  })
  .describe('Output: the run ended.');
/** Output: the run ended. */
export type RunEndEvent = z.infer<typeof RunEndEventSchema>;

/** Any output event. */
export const OutputEventSchema = z
  .discriminatedUnion('type', [
    RunStartEventSchema,
    TextEventSchema,
    ToolCallEventSchema,
    PermissionRequestEventSchema,
    PermissionDecisionEventSchema,
    ToolResultEventSchema,
    UsageEventSchema,
    FinalEventSchema,
    ErrorEventSchema,
    RunEndEventSchema,
  ])
  .describe('Any stream-json output event.');
/** Any output event. */
export type OutputEvent = z.infer<typeof OutputEventSchema>;
