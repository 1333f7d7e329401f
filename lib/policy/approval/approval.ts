// SPDX-License-Identifier: MIT
// Turning a prompt into a decision: the answers a responder may give, what each records in the
// engine (turn/session overlays, session grants, command prefixes, persistent grants), the
// terminal prompt text, and the stream-json-shaped permission events.
import { dirname, resolve } from 'node:path';

import { APPROVAL_ANSWERS, FILE_MUTATION_TOOLS, REASON_DESTRUCTIVE, REASON_NETWORK_BLOCKED, SHELL_TOOLS, type ApprovalAnswer } from '../engine/constants.js';
import type { Engine } from '../engine/engine.js';
import { deriveScope, resolveScope } from '../grants/grant-match.js';
import { widenToRoot } from '../engine/overlays.js';
import { tryRealpath } from '../paths/paths.js';
import type { Decision, Request } from '../schema.js';
import type { PermissionDecisionEvent, PermissionRequestEvent } from '../../stream-json/schema.js';

/** A `permission_request` event as the engine reports it (stream-json v2, without schemaVersion/runId). */
export type PermissionRequestPayload = Omit<PermissionRequestEvent, 'schemaVersion' | 'runId'>;
/** A `permission_decision` event as the engine reports it (stream-json v2, without schemaVersion/runId). */
export type PermissionDecisionPayload = Omit<PermissionDecisionEvent, 'schemaVersion' | 'runId'>;
/** What onPermissionEvent receives. */
export type PermissionEvent = PermissionRequestPayload | PermissionDecisionPayload;

/** What applying an answer did. */
export interface ApprovalOutcome {
  /** The answer, normalized (unknown answers are `deny`). */
  answer: ApprovalAnswer;
  /** The decision after the approval was recorded (re-evaluated with permissionGranted). */
  decision: Decision;
  /** Whether the call may run now (still inside the sandbox). */
  granted: boolean;
  /** The responder cancelled the whole run. */
  cancelled: boolean;
  /** Undoes turn-scoped overlays; call it when the call is over. */
  cleanup: () => void;
  /** Human summary of what was recorded. */
  recorded: string;
}

/** True for the network prompt (approval widens the policy instead of granting the tool). */
export function isNetworkPrompt(decision: Decision): boolean {
  return decision.action === 'prompt' && decision.reason === REASON_NETWORK_BLOCKED && decision.block === undefined;
}

/** True for the destructive-command prompt. */
export function isDestructivePrompt(decision: Decision): boolean {
  return decision.action === 'prompt' && decision.reason === REASON_DESTRUCTIVE && decision.block === undefined;
}

function isPathPrompt(decision: Decision): boolean {
  return decision.action === 'prompt' && decision.block?.code === 'outside_workspace' && decision.block.recoverable && decision.block.path !== undefined;
}

/** Normalizes a responder answer; anything unknown is `deny`. */
export function normalizeApprovalAnswer(value: unknown): ApprovalAnswer {
  return typeof value === 'string' && (APPROVAL_ANSWERS as readonly string[]).includes(value) ? (value as ApprovalAnswer) : 'deny';
}

/** The answers to offer for a prompt. */
export function availableApprovalAnswers(request: Request, _decision: Decision): ApprovalAnswer[] {
  const out: ApprovalAnswer[] = ['allow', 'allow_for_session'];
  const tool = request.toolName;
  // An outside-workspace path prompt offers "always" like the others: it stores a grant for this
  // tool on the directory the session answer would open (see applyApproval).
  const noAlways = tool === 'apply_patch' || /^(browser|desktop|terminal)_/.test(tool);
  if (!noAlways) out.push('always_allow');
  out.push('deny', 'cancel');
  return out;
}

/** Human scope of a prompt, e.g. "network all outbound access" or "write /x". */
export function describePromptScope(request: Request, decision: Decision): string {
  if (isNetworkPrompt(decision)) return 'network all outbound access';
  if (isPathPrompt(decision)) return `${request.sideEffect === 'read' ? 'read' : 'write'} ${decision.block?.path ?? ''}`;
  const args = (request.args ?? {}) as Record<string, unknown>;
  const command = typeof args.command === 'string' ? args.command : undefined;
  if (command !== undefined) return `run \`${command}\``;
  const scope = deriveScope(request.toolName, args);
  return scope.kind === '' ? `${request.toolName} (tool-wide)` : `${request.toolName} ${scope.kind} ${scope.raw}`;
}

/** The terminal prompt: action, reason, scope and readable block details. */
export function buildPromptText(request: Request, decision: Decision): string {
  const lines = [`${request.toolName} needs approval`, `  reason: ${decision.reason ?? 'approval required'}`, `  scope:  ${describePromptScope(request, decision)}`];
  if (decision.block !== undefined) {
    lines.push(`  blocked: ${decision.block.reason}${decision.block.path !== undefined ? ` (${decision.block.path})` : ''}`);
  }
  lines.push(`  risk:   ${decision.risk.reason}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Records an answer to a prompt in the engine and re-evaluates. Approvals never unsandbox: a
 * network approval widens the turn/session policy to network allow, an outside-path approval
 * grants that directory, a session/always approval of a shell command records a command prefix
 * ("do not ask again"), and the command still runs inside the sandbox.
 */
export function applyApproval(engine: Engine, request: Request, decision: Decision, rawAnswer: unknown): ApprovalOutcome {
  const answer = normalizeApprovalAnswer(rawAnswer);
  const none = () => undefined;
  if (answer === 'deny' || answer === 'cancel') {
    return { answer, decision, granted: false, cancelled: answer === 'cancel', cleanup: none, recorded: answer === 'cancel' ? 'cancelled' : 'denied' };
  }
  const overlayScope = answer === 'allow' ? 'turn' : 'session';
  let cleanup: () => void = none;
  let recorded = 'allowed for this call';
  const args = (request.args ?? {}) as Record<string, unknown>;
  const command = typeof args.command === 'string' ? args.command.trim() : '';
  const risky = (isNetworkPrompt(decision) || isDestructivePrompt(decision)) && command !== '';
  if (risky && answer !== 'allow') {
    // Session and always answers to a network or destructive prompt approve this exact command
    // text with its risks, never a wider prefix; the command still runs sandboxed.
    const risks = decision.risk.categories.filter((c) => c === 'network' || c === 'destructive');
    engine.approveCommand(request.toolName, command, risks, { session: answer === 'allow_for_session' });
    if (isNetworkPrompt(decision)) cleanup = engine.grantRequestPermissions({ network: { enabled: true } }, 'turn');
    recorded = `\`${command}\` approved (${risks.join(', ')}) ${answer === 'always_allow' ? 'persistently' : 'for this session'}; the command still runs sandboxed`;
  } else if (isNetworkPrompt(decision)) {
    cleanup = engine.grantRequestPermissions({ network: { enabled: true } }, 'turn');
    recorded = 'network allowed for this call';
  } else if (isPathPrompt(decision)) {
    const path = decision.block?.path as string;
    const access = request.sideEffect === 'read' ? 'read' : 'write';
    cleanup = engine.grantRequestPermissions({ file_system: access === 'read' ? { read: [path] } : { write: [path] } }, overlayScope);
    recorded = `${access} access to ${path} for this ${overlayScope}`;
    if (answer === 'always_allow') {
      // The same directory the session answer opens (the path itself when it is a directory, else
      // its parent; never the filesystem root), stored as an allow grant of this tool and spelled
      // as requests name it, so the identical request in a later session is allowed by it. Hard
      // denies (deny lists, `..` escapes) are checked before grants and still refuse.
      const dir = widenToRoot(path) === tryRealpath(path) ? resolve(path) : dirname(resolve(path));
      engine.grant({ toolName: request.toolName, decision: 'allow', scope: dir, scopeKind: 'dir' });
      recorded = `${access} access to ${dir} for ${request.toolName} persistently`;
    }
  } else if (answer !== 'allow' && !risky) {
    const isShell = SHELL_TOOLS.has(request.toolName) || request.sideEffect === 'shell';
    const prefix = isShell ? engine.proposeCommandPrefix(request.toolName, args) : undefined;
    if (prefix !== undefined) {
      engine.grantCommandPrefix(request.toolName, prefix, { session: answer === 'allow_for_session' });
      recorded = `command prefix \`${prefix.join(' ')}\` approved ${answer === 'always_allow' ? 'persistently' : 'for this session'} (still sandboxed)`;
    } else if (answer === 'always_allow' && !isShell && !FILE_MUTATION_TOOLS.has(request.toolName)) {
      const scope = resolveScope(deriveScope(request.toolName, args), engine.workspaceRoot);
      engine.grant({ toolName: request.toolName, decision: 'allow', scope: scope.raw, scopeKind: scope.kind });
      recorded = 'allowed persistently';
    } else {
      const scope = resolveScope(deriveScope(request.toolName, args), engine.workspaceRoot);
      engine.grantForSession({ toolName: request.toolName, decision: 'allow', scope: scope.raw, scopeKind: scope.kind });
      recorded = 'allowed for this session';
    }
  }
  const after = engine.evaluate({ ...request, permissionGranted: true });
  if (after.action !== 'allow') cleanup();
  return { answer, decision: after, granted: after.action === 'allow', cancelled: false, cleanup: after.action === 'allow' ? cleanup : none, recorded };
}

/** A `permission_request` event (stream-json v2 shape, without schemaVersion/runId). */
export function buildPermissionRequestEvent(id: string, request: Request, decision: Decision): PermissionRequestPayload {
  const event: Record<string, unknown> = {
    type: 'permission_request',
    id,
    name: request.toolName,
    action: decision.action,
    permission: typeof request.permission === 'string' ? request.permission : 'prompt',
    permissionMode: typeof request.permissionMode === 'string' ? request.permissionMode : 'auto',
    sideEffect: request.sideEffect,
    reason: decision.reason ?? '',
    risk: { level: decision.risk.level, categories: decision.risk.categories },
  };
  if (decision.block !== undefined) event.block = decision.block;
  if (decision.grantMatched) event.grantMatched = true;
  if (decision.grant !== undefined) event.grant = decision.grant;
  return event as unknown as PermissionRequestPayload;
}

/**
 * A `permission_decision` event for the final outcome. `outcome.allowed` says the call may go
 * ahead when `granted` does not: an automatic allow (by policy or a stored grant) that nobody
 * granted on this call.
 */
export function buildPermissionDecisionEvent(id: string, request: Request, decision: Decision, outcome: { granted: boolean; allowed?: boolean; cancelled?: boolean; reason: string }): PermissionDecisionPayload {
  const event: Record<string, unknown> = {
    type: 'permission_decision',
    id,
    name: request.toolName,
    action: outcome.cancelled ? 'cancel' : outcome.granted || outcome.allowed === true ? 'allow' : 'deny',
    permission: typeof request.permission === 'string' ? request.permission : 'prompt',
    // The request's mode and side effect and the engine's reason, as on the request event: a
    // client that saw no request (an automatic allow or deny) learns them here.
    permissionMode: typeof request.permissionMode === 'string' ? request.permissionMode : 'auto',
    sideEffect: request.sideEffect,
    reason: decision.reason ?? '',
    permissionGranted: outcome.granted,
    decisionReason: outcome.reason,
    risk: { level: decision.risk.level, categories: decision.risk.categories },
  };
  if (decision.block !== undefined) event.block = decision.block;
  if (decision.grantMatched) event.grantMatched = true;
  if (decision.grant !== undefined) event.grant = decision.grant;
  return event as unknown as PermissionDecisionPayload;
}
