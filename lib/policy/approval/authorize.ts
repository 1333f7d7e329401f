// SPDX-License-Identifier: MIT
// The permission flow in front of a sandboxed command: evaluate, ask the responder on a prompt,
// record the answer, report every step as stream-json-shaped events, and say which network mode
// the (still sandboxed) command gets. runSandboxed and `zero-sandbox run` call this first.
import { SandboxError } from '../../errors.js';
import {
  applyApproval,
  availableApprovalAnswers,
  buildPermissionDecisionEvent,
  buildPermissionRequestEvent,
  buildPromptText,
  describePromptScope,
  type PermissionEvent,
} from './approval.js';
import { APPROVAL_ANSWERS, REASON_NETWORK_BLOCKED, type ApprovalAnswer } from '../engine/constants.js';
import type { Engine } from '../engine/engine.js';
import type { Decision, Request } from '../schema.js';

/** What a responder is asked. */
export interface PermissionPrompt {
  /** The request as the engine saw it. */
  request: Request;
  /** The prompt decision (reason, risk, block). */
  decision: Decision;
  /** Human scope, e.g. "network all outbound access". */
  scope: string;
  /** Ready-to-print prompt text: action, reason, scope, block details. */
  text: string;
  /** Answers that may be given. */
  availableDecisions: ApprovalAnswer[];
}

/** Options of authorizeCommand. */
export interface AuthorizeOptions {
  engine: Engine;
  /** Tool name the command is evaluated as (default `bash`). */
  toolName?: string;
  /** Working directory argument of the request (validated as the Go Zero CLI validates `cwd`, so a request valid for one is valid for both). */
  cwd?: string;
  /** Permission mode (default `ask`). */
  permissionMode?: 'auto' | 'ask' | 'unsafe';
  /** Asked on a prompt; no responder means the prompt is denied (headless). */
  onPermissionRequest?: (prompt: PermissionPrompt) => ApprovalAnswer | string | Promise<ApprovalAnswer | string>;
  /** Receives `permission_request` / `permission_decision` events. */
  onPermissionEvent?: (event: PermissionEvent) => void;
  /**
   * Who reads the errors: hints name CLI flags and the terminal's answers (`cli`), the flags of a
   * CLI run with no terminal to ask (`headless`: exec, run with a structured output format), or API
   * options and answers (`api`, default).
   */
  surface?: HintSurface;
  /** Tool call id used in events (default `call_1`). */
  callId?: string;
  signal?: AbortSignal;
}

/** The outcome of an allowed command. */
export interface Authorization {
  decision: Decision;
  /** Network mode the command runs with (allow only after an approval or by policy). */
  network: 'allow' | 'deny';
  /** Ends turn-scoped approvals; call when the command is done. */
  cleanup: () => void;
  /** The responder's answer, when one was asked. */
  answer?: ApprovalAnswer;
}

/** "Sandbox block [<code>] for <tool> at <path>: <reason>". */
export function formatBlockError(decision: Decision, toolName: string): string {
  const b = decision.block;
  if (b === undefined) return decision.reason ? `Sandbox decision: ${decision.reason}` : 'Sandbox decision denied.';
  return `Sandbox block [${b.code}] for ${b.toolName ?? toolName}${b.path !== undefined ? ` at ${b.path}` : ''}: ${b.reason}`;
}

/** Who reads a denial: the CLI on a terminal, the CLI with no terminal to ask, or the API. */
export type HintSurface = 'cli' | 'headless' | 'api';

/** What would allow a prompt or deny, for the error message: a flag, an option or an answer. */
export function allowHint(decision: Decision, surface: HintSurface, interactive: boolean): string {
  const answer = surface === 'api'
    ? 'answer "allow", "allow_for_session" or "always_allow" from onPermissionRequest'
    : surface === 'headless'
      ? 'answer "always" to it once in `zero-sandbox run` on a terminal (stored in the grants file)'
      : interactive ? 'answer "once", "session" or "always" at the prompt' : 'run it from a terminal to be asked';
  const cli = surface !== 'api';
  const block = decision.block;
  if (decision.action === 'prompt' && decision.reason === REASON_NETWORK_BLOCKED && block === undefined) {
    return cli ? `to allow it: --network allow, or ${answer}` : `to allow it: network: 'allow', or ${answer}`;
  }
  if (block?.code === 'persistent_deny') return `a stored deny grant matched; remove it with \`zero-sandbox grants revoke ${block.toolName ?? 'TOOL'}\``;
  if (block?.code === 'outside_workspace' && block.path !== undefined) {
    const flag = cli ? `--allow-write DIR (or --workspace)` : `allowWrite: [DIR] (or workspace)`;
    return block.recoverable ? `to allow it: ${flag}, or ${answer}` : `to allow it: ${flag}`;
  }
  if (block?.code === 'network') return cli ? 'to allow it: --network allow' : "to allow it: network: 'allow'";
  if (decision.action === 'prompt') return `to allow it: ${answer}`;
  return '';
}

function withHint(message: string, hint: string): string {
  return hint === '' ? message : `${message} (${hint})`;
}

/**
 * Evaluates a shell command and runs the approval flow. Resolves when it may run (still inside the
 * sandbox); rejects with SandboxError `permission_denied`, `approval_required` (a prompt with no
 * responder) or `aborted` (cancelled).
 */
export async function authorizeCommand(command: string, options: AuthorizeOptions): Promise<Authorization> {
  const { engine } = options;
  const toolName = options.toolName ?? 'bash';
  const id = options.callId ?? 'call_1';
  const surface = options.surface ?? 'api';
  const emit = (event: PermissionEvent) => options.onPermissionEvent?.(event);
  const args: Record<string, unknown> = { command };
  if (options.cwd !== undefined) args.cwd = options.cwd;
  const request: Request = { toolName, sideEffect: 'shell', permission: 'prompt', permissionMode: options.permissionMode ?? 'ask', args };
  const evaluateOptions = options.signal === undefined ? {} : { signal: options.signal };
  const decision = engine.evaluate(request, evaluateOptions);
  const network = () => engine.effectivePolicy().network;
  if (decision.action === 'allow') {
    // Granted: by the caller's unsafe mode or an approved command prefix, as Zero reports it; an
    // allow by policy or by a stored grant was granted by nobody on this call.
    const granted = request.permissionMode === 'unsafe' || decision.commandPrefix !== undefined;
    emit(buildPermissionDecisionEvent(id, request, decision, { granted, allowed: true, reason: decision.reason ?? 'allowed' }));
    // An earlier session/always approval of this exact network command: network for this call only.
    const cleanup = decision.approvedRisks?.includes('network') && engine.effectivePolicy().network !== 'allow'
      ? engine.grantRequestPermissions({ network: { enabled: true } }, 'turn')
      : () => undefined;
    return { decision, network: network(), cleanup };
  }
  if (decision.action === 'deny') {
    emit(buildPermissionDecisionEvent(id, request, decision, { granted: false, reason: decision.reason ?? 'denied' }));
    throw new SandboxError('permission_denied', withHint(formatBlockError(decision, toolName), allowHint(decision, surface, false)));
  }
  emit(buildPermissionRequestEvent(id, request, decision));
  if (options.onPermissionRequest === undefined) {
    emit(buildPermissionDecisionEvent(id, request, decision, { granted: false, reason: 'no responder: approval required' }));
    throw new SandboxError('approval_required', withHint(`Sandbox approval required for ${toolName}: ${decision.reason ?? 'approval required'}`, allowHint(decision, surface, false)));
  }
  const answer = await options.onPermissionRequest({
    request,
    decision,
    scope: describePromptScope(request, decision),
    text: buildPromptText(request, decision),
    availableDecisions: availableApprovalAnswers(request, decision),
  });
  if (options.signal?.aborted) throw new SandboxError('aborted', 'the permission request was aborted');
  if (typeof answer !== 'string' || !(APPROVAL_ANSWERS as readonly string[]).includes(answer)) {
    emit(buildPermissionDecisionEvent(id, request, decision, { granted: false, reason: 'invalid answer from the responder' }));
    const got = typeof answer === 'string' ? JSON.stringify(answer) : String(answer);
    throw new SandboxError('invalid_argument', `onPermissionRequest returned ${got}; accepted: ${APPROVAL_ANSWERS.join(', ')}`);
  }
  const outcome = applyApproval(engine, request, decision, answer);
  emit(buildPermissionDecisionEvent(id, request, outcome.decision, { granted: outcome.granted, cancelled: outcome.cancelled, reason: outcome.recorded }));
  if (outcome.cancelled) throw new SandboxError('aborted', `permission request for ${toolName} was cancelled`);
  if (!outcome.granted) {
    const text = outcome.decision.action === 'deny' ? formatBlockError(outcome.decision, toolName) : `Permission denied for ${toolName}: ${decision.reason ?? ''}`.trim();
    throw new SandboxError('permission_denied', withHint(text, allowHint(outcome.decision.action === 'deny' ? outcome.decision : decision, surface, true)));
  }
  return { decision: outcome.decision, network: network(), cleanup: outcome.cleanup, answer: outcome.answer };
}
