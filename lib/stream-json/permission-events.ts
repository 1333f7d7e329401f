// SPDX-License-Identifier: MIT
// Maps the engine's approval-flow events onto typed stream-json permission events, keeping the protocol's headless rules.
import type { OutputEventBody } from './emitter.js';
import type { StreamBlock, StreamGrant, StreamRisk } from './schema.js';

/** A permission event as the engine's approval flow reports it (stream-json shaped, untyped). */
export type RawPermissionEvent = Record<string, unknown>;

/** How the approval flow ended. */
export type PermissionOutcome = 'allowed' | 'denied' | 'approval_required';

/** A permission event body (before stamping). */
export type PermissionBody = Extract<OutputEventBody, { type: 'permission_request' | 'permission_decision' }>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function riskOf(value: unknown): StreamRisk | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const raw = value as Record<string, unknown>;
  const level = raw.level;
  if (level !== 'low' && level !== 'medium' && level !== 'high' && level !== 'critical') return undefined;
  const risk: StreamRisk = { level };
  if (Array.isArray(raw.categories) && raw.categories.length > 0) risk.categories = raw.categories.filter((c): c is string => typeof c === 'string');
  const reason = str(raw.reason);
  if (reason !== undefined && reason !== '') risk.reason = reason;
  return risk;
}

function blockOf(value: unknown): StreamBlock | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const raw = value as StreamBlock;
  const risk = riskOf(raw.risk);
  if (risk === undefined) return undefined;
  // Key order as the Go Zero CLI serializes a Block: transcripts compared line by line stay equal.
  return {
    code: raw.code,
    ...(raw.toolName === undefined ? {} : { toolName: raw.toolName }),
    action: raw.action,
    risk,
    ...(raw.path === undefined ? {} : { path: raw.path }),
    reason: raw.reason,
    recoverable: raw.recoverable === true,
  };
}

/** One engine event as a typed protocol body (fields the protocol does not define are dropped). */
export function buildPermissionBody(raw: RawPermissionEvent): PermissionBody | undefined {
  const id = str(raw.id);
  const name = str(raw.name);
  const action = str(raw.action);
  const permission = raw.permission === 'allow' || raw.permission === 'deny' ? raw.permission : 'prompt';
  if (id === undefined || name === undefined || action === undefined) return undefined;
  const common: Omit<PermissionBody, 'type' | 'action'> = { id, name, permission };
  const mode = str(raw.permissionMode);
  if (mode !== undefined) common.permissionMode = mode;
  const sideEffect = str(raw.sideEffect);
  if (sideEffect !== undefined) common.sideEffect = sideEffect;
  const reason = str(raw.reason);
  if (reason !== undefined) common.reason = reason;
  const risk = riskOf(raw.risk);
  if (risk !== undefined) common.risk = risk;
  const block = blockOf(raw.block);
  if (block !== undefined) common.block = block;
  if (raw.grantMatched === true) common.grantMatched = true;
  if (raw.grant !== null && typeof raw.grant === 'object') common.grant = raw.grant as StreamGrant;
  if (raw.type === 'permission_request') return { type: 'permission_request', ...common, action: 'prompt' };
  if (raw.type !== 'permission_decision' || (action !== 'allow' && action !== 'deny' && action !== 'cancel')) return undefined;
  const body: PermissionBody = { type: 'permission_decision', ...common, action, permissionGranted: raw.permissionGranted === true };
  const decisionReason = str(raw.decisionReason);
  if (decisionReason !== undefined) body.decisionReason = decisionReason;
  return body;
}

/**
 * The events a headless protocol run shows, in order, as Zero's exec shows them: every
 * `permission_request`, and the `permission_decision` that settled the call (an answer, an
 * outright deny, or an automatic allow, whose permissionGranted says whether anyone granted it).
 * Dropped: the synthetic deny that ends a prompt without a responder (headless: the request is
 * followed by a denied tool_result instead).
 */
export function selectPermissionEvents(raw: readonly RawPermissionEvent[], outcome: PermissionOutcome): PermissionBody[] {
  const bodies = raw.map(buildPermissionBody).filter((body): body is PermissionBody => body !== undefined);
  return bodies.filter((body) => body.type === 'permission_request' || outcome !== 'approval_required');
}
