// SPDX-License-Identifier: MIT
// The engine's enumerations, fixed reason texts and input normalizers, free of zod so the hot path stays cheap.

export { normalizeNetworkMode, normalizeSideEffect, SIDE_EFFECTS, type SideEffectName } from '../../enums.js';
import { PROTECTED_METADATA_NAMES } from '../../protected-names.js';

/** Tool safety metadata. Unknown values normalize to `prompt`. */
export const PERMISSIONS = ['allow', 'prompt', 'deny'] as const;
/** Tool safety metadata value. */
export type PermissionName = (typeof PERMISSIONS)[number];

/** Sandbox permission modes. Unknown values normalize to `auto`. */
export const PERMISSION_MODES = ['auto', 'ask', 'unsafe'] as const;
/** One sandbox permission mode. */
export type PermissionModeName = (typeof PERMISSION_MODES)[number];

/** Decision actions. */
export const ACTIONS = ['allow', 'prompt', 'deny'] as const;
/** Decision action. */
export type ActionName = (typeof ACTIONS)[number];

/** Structured block codes. */
export const BLOCK_CODES = [
  'context_canceled',
  'denied_permission',
  'outside_workspace',
  'symlink_traversal',
  'network',
  'destructive_command',
  'persistent_deny',
  'denied',
] as const;
/** Block code. */
export type BlockCodeName = (typeof BLOCK_CODES)[number];

/** Risk levels, lowest first. */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
/** Risk level. */
export type RiskLevelName = (typeof RISK_LEVELS)[number];

/** Grant scope kinds; the empty string is tool-wide. */
export const SCOPE_KINDS = ['', 'file', 'dir', 'host'] as const;
/** Grant scope kind. */
export type ScopeKindName = (typeof SCOPE_KINDS)[number];

/** Answers a permission responder can give. */
export const APPROVAL_ANSWERS = ['allow', 'allow_for_session', 'always_allow', 'deny', 'cancel'] as const;
/** One answer to a permission request. */
export type ApprovalAnswer = (typeof APPROVAL_ANSWERS)[number];

/** Reason of the network prompt. */
export const REASON_NETWORK_BLOCKED = 'network access requires approval';
/** Reason of the escalation prompt. */
export const REASON_ESCALATED_SANDBOX_REQUIRED = 'unsandboxed shell command requires approval';
/** Reason of the destructive-shell prompt. */
export const REASON_DESTRUCTIVE = 'destructive shell command requires approval';
/** Reason of a relative path that cannot be checked. */
export const REASON_NO_WORKSPACE_ROOT = 'cannot be validated without a workspace root';

/** Current grants file schema and policy versions. */
export const GRANTS_SCHEMA_VERSION = 3;
export const GRANTS_POLICY_VERSION = 2;

/** Tools whose persisted allow grants are old blanket shell approvals (dropped by migration). */
export const SHELL_TOOLS = new Set(['bash', 'exec_command', 'write_stdin']);

/** Tools the workspace-write auto-allow applies to. */
export const FILE_MUTATION_TOOLS = new Set(['write_file', 'edit_file', 'apply_patch']);

/** First workspace-relative segments that are never auto-allowed for writes. */
export const PROTECTED_SEGMENTS = new Set(['.git', ...PROTECTED_METADATA_NAMES]);

/** Argument keys whose string values are paths the engine validates. */
export const PATH_ARG_KEYS = ['path', 'file', 'file_path', 'filepath', 'filename', 'cwd', 'workdir', 'dir', 'directory'] as const;

/** `allow` | `prompt` | `deny`; anything else is `prompt`. */
export function normalizePermission(value: unknown): PermissionName {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return text === 'allow' || text === 'deny' ? text : 'prompt';
}

/** `auto` | `ask` | `unsafe`; anything else is `auto`. */
export function normalizePermissionMode(value: unknown): PermissionModeName {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return text === 'ask' || text === 'unsafe' ? text : 'auto';
}

/** Tool names are letters, digits, `.`, `_` and `-`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9._-]+$/;
