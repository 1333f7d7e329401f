// SPDX-License-Identifier: MIT
// The order in which the permission engine decides one request: the checks run from the hardest
// deny to the weakest allow, and the first that speaks decides. A broken grants file allows
// nothing (its error is in every reason) and no approval lifts the sandbox.
import { isAbsolute } from 'node:path';

import {
  FILE_MUTATION_TOOLS,
  REASON_DESTRUCTIVE,
  REASON_ESCALATED_SANDBOX_REQUIRED,
  REASON_NETWORK_BLOCKED,
  REASON_NO_WORKSPACE_ROOT,
  type PermissionModeName,
  type SideEffectName,
} from './constants.js';
import { deriveScope, resolveScope, selectGrant } from '../grants/grant-match.js';
import type { GrantStore } from '../grants/grants-store.js';
import { isPatchEscape } from './patch.js';
import { checkRequestPath, collectRequestPaths, touchesProtectedPath, type PathBlock } from '../paths/path-check.js';
import { blockDecision, deny, withGrantsError } from './decision-helpers.js';
import type { PathLists } from '../paths/path-lists.js';
import type { Decision, Grant, Policy, Request } from '../schema.js';
import type { WorkspaceScope } from '../paths/scope.js';

/** What the decision reads from the engine's state. */
export interface DecisionDeps {
  /** Platform for path semantics. */
  platform: string;
  /** Persistent grants; undefined for an engine without a store. */
  store: GrantStore | undefined;
  /** Session grants by tool name. */
  sessionGrants: ReadonlyMap<string, Grant[]>;
  /** The session or always approval of this exact command for its risks, if any. */
  matchApprovedCommand(toolName: string, args: Record<string, unknown>, categories: readonly string[], persistentToo: boolean): { session: boolean } | undefined;
  /** The approved command prefix covering the command, if any. */
  matchPrefix(toolName: string, args: Record<string, unknown>): { prefix: string[]; session: boolean } | undefined;
  /** Why the shell parser could not be loaded, when it could not. */
  parserFailure?: (() => string | undefined) | undefined;
  /** Whether shell commands run inside an active native sandbox. */
  isShellSandboxActive(): boolean;
}

/** What evaluate() knows about a request by the time it decides. */
export interface RequestFacts {
  toolName: string;
  args: Record<string, unknown>;
  sideEffect: SideEffectName;
  permission: string;
  mode: PermissionModeName;
  root: string;
  scope: WorkspaceScope;
  policy: Policy;
}

/** Decides one request whose facts are known (see the file header for the order). */
export function decide(deps: DecisionDeps, c: RequestFacts & {
  lists: PathLists;
  active: boolean;
  risk: Decision['risk'];
  request: Request;
}): Decision {
  const { toolName, args, sideEffect, mode, risk } = c;
  const toolReason = typeof c.request.reason === 'string' && c.request.reason.trim() !== '' ? c.request.reason.trim() : undefined;
  const granted = c.request.permissionGranted === true;
  // The grants file is read first so that its error, if any, is in every reason (fail closed:
  // a broken file honours no allow grant and no auto-allow). The checks run from the hardest
  // deny to the weakest allow: the first that speaks decides.
  const requestScope = resolveScope(deriveScope(toolName, args), c.root, deps.platform).raw;
  let grantsError: string | undefined;
  let found: Grant | undefined;
  if (deps.store !== undefined) {
    try {
      found = deps.store.lookup(toolName, requestScope);
    } catch (error) {
      grantsError = (error as Error).message;
    }
  }
  const failClosed = (d: Decision): Decision => (grantsError === undefined ? d : withGrantsError(d, grantsError));
  // The tool's own safety verdict denies.
  if (c.permission === 'deny') return failClosed(deny(risk, 'denied_permission', toolName, toolReason ?? 'tool safety denies execution'));
  // A covering persistent or session deny (recoverable: the user can revoke it).
  if (found?.decision === 'deny') {
    return { ...deny(risk, 'persistent_deny', toolName, 'persistent sandbox deny grant matched', true), grantMatched: true, grant: found };
  }
  const persistentAllow = found;
  const sessionFound = selectGrant(deps.sessionGrants.get(toolName) ?? [], requestScope, deps.platform);
  if (sessionFound?.decision === 'deny') {
    return { ...deny(risk, 'persistent_deny', toolName, 'session sandbox deny grant matched', true), grantMatched: true, grant: sessionFound };
  }
  // apply_patch escapes are hard denies, ahead of any grant.
  const { paths, patchPaths } = collectRequestPaths(toolName, args);
  const escape = patchPaths.find(isPatchEscape);
  if (escape !== undefined) {
    return failClosed(blockDecision('deny', risk, toolName, { code: 'outside_workspace', reason: `${escape} is outside the workspace`, path: escape }));
  }
  // Every path the request names, against the scope and the policy lists.
  let promptable: PathBlock | undefined;
  const ctx = { sideEffect, scope: c.scope, lists: c.lists, listsActive: c.active, policyEnforce: c.policy.enforceWorkspace, workspaceRoot: c.root };
  for (const path of paths) {
    const block = checkRequestPath(path, ctx);
    if (block === undefined) continue;
    const isPromptable =
      block.code === 'outside_workspace' &&
      mode !== 'unsafe' &&
      toolName !== 'apply_patch' &&
      (sideEffect === 'read' || sideEffect === 'write' || sideEffect === 'out_of_workspace') &&
      isAbsolute(path) &&
      !block.reason.endsWith(REASON_NO_WORKSPACE_ROOT);
    if (!isPromptable) return failClosed(blockDecision('deny', risk, toolName, block));
    promptable ??= block;
  }
  const isShell = sideEffect === 'shell';
  // A session or always approval of this exact command text for its risks answers the network
  // and destructive prompts below (never a wider prefix; the command still runs sandboxed). A
  // broken grants file honours only session approvals.
  const approved = isShell && mode !== 'unsafe' ? deps.matchApprovedCommand(toolName, args, risk.categories, grantsError === undefined) : undefined;
  const usedRisks: string[] = [];
  // Network, ahead of every allow grant and of permissionGranted.
  if (c.policy.network !== 'allow' && risk.categories.includes('network') && sideEffect !== 'network') {
    if (isShell && approved !== undefined) usedRisks.push('network');
    else if (isShell && mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_NETWORK_BLOCKED, risk });
    else return failClosed(deny(risk, 'network', toolName, REASON_NETWORK_BLOCKED));
  }
  // A destructive shell command.
  if (isShell && risk.categories.includes('destructive') && !granted) {
    if (approved !== undefined) usedRisks.push('destructive');
    else if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_DESTRUCTIVE, risk });
    else return failClosed(deny(risk, 'destructive_command', toolName, 'destructive shell command denied in unsafe mode'));
  }
  // A shell command that could not be analyzed because the parser itself failed to load is never
  // auto-allowed: the user decides (headless: denied), as for a destructive command.
  const parserFailure = isShell && !granted ? deps.parserFailure?.() : undefined;
  if (parserFailure !== undefined) {
    const reason = `the shell command analyzer is unavailable (${parserFailure}), so the command needs approval`;
    if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason, risk });
    return failClosed(deny(risk, 'denied_permission', toolName, reason));
  }
  // The facts and what the checks above found go in two objects: a spread of the facts with more
  // properties after it cost more than the rest of a decision together (Node 20's V8 gives such
  // an object new hidden classes at every call: kilobytes of garbage per decision).
  const rest = decideAfterRisk(deps, c, { granted, approvedEarlier: usedRisks.length > 0, promptable, paths, isShell, grantsError, persistentAllow, sessionFound, toolReason });
  if (usedRisks.length === 0 || rest.action !== 'allow') return rest;
  const reason = `${approved?.session ? 'session' : 'persistent'} approval of this exact command (${usedRisks.join(', ')}); the command still runs sandboxed`;
  return { ...rest, reason, grantMatched: true, approvedRisks: usedRisks };
}

/** What the checks ahead of decideAfterRisk found. */
interface Reached {
  granted: boolean;
  /** An earlier approval of this exact command answered its risk prompt (not an escalation). */
  approvedEarlier: boolean;
  promptable: PathBlock | undefined;
  paths: string[];
  isShell: boolean;
  grantsError: string | undefined;
  persistentAllow: Grant | undefined;
  sessionFound: Grant | undefined;
  toolReason: string | undefined;
}

function decideAfterRisk(deps: DecisionDeps, c: RequestFacts & { risk: Decision['risk'] }, reached: Reached): Decision {
  const { toolName, args, sideEffect, mode, risk } = c;
  const { promptable, paths, isShell, grantsError, persistentAllow, sessionFound, toolReason } = reached;
  const failClosed = (d: Decision): Decision => (grantsError === undefined ? d : withGrantsError(d, grantsError));
  // Escalation out of the sandbox: only an approval of this very call lifts it.
  if (isShell && args.sandbox_permissions === 'require_escalated' && !reached.granted) {
    if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_ESCALATED_SANDBOX_REQUIRED, risk });
    return failClosed(deny(risk, 'denied_permission', toolName, 'unsafe mode must not silently run a command unsandboxed'));
  }
  if (grantsError === undefined) {
    // Grants, then approved command prefixes (which keep the command sandboxed).
    if (persistentAllow !== undefined) {
      return { action: 'allow', reason: 'persistent sandbox allow grant matched', risk, grantMatched: true, grant: persistentAllow };
    }
    if (sessionFound !== undefined) {
      return { action: 'allow', reason: 'session sandbox allow grant matched', risk, grantMatched: true, grant: sessionFound };
    }
    const prefix = isShell && promptable === undefined ? deps.matchPrefix(toolName, args) : undefined;
    if (prefix !== undefined) {
      const reason = `${prefix.session ? 'session' : 'persistent'} command prefix matched; the command still runs sandboxed`;
      return { action: 'allow', reason, risk, grantMatched: true, commandPrefix: [...prefix.prefix] };
    }
  }
  const granted = reached.granted || reached.approvedEarlier;
  // A recoverable outside-workspace path: a prompt carrying the block.
  if (promptable !== undefined) return failClosed(blockDecision('prompt', risk, toolName, promptable));
  if (grantsError !== undefined) {
    if (granted) return withGrantsError({ action: 'allow', reason: 'explicitly approved for this call', risk }, grantsError);
    return withGrantsError({ action: 'prompt', reason: toolReason ?? 'tool requires approval before execution', risk }, grantsError);
  }
  // The tool's own safety verdict allows.
  if (c.permission === 'allow') return { action: 'allow', reason: toolReason ?? 'tool safety allows execution', risk };
  // A file mutation inside the workspace (no protected path).
  if (c.policy.enforceWorkspace && c.root !== '' && sideEffect === 'write' && FILE_MUTATION_TOOLS.has(toolName) && paths.length > 0) {
    if (!paths.some((p) => touchesProtectedPath(p, c.root, c.scope.writeRoots()))) {
      return { action: 'allow', reason: 'workspace write is allowed', risk, autoAllowed: true };
    }
  }
  // A shell command inside an active native sandbox.
  if (isShell && deps.isShellSandboxActive()) {
    return { action: 'allow', reason: 'auto-allowed: sandbox is active for this shell command', risk, autoAllowed: true };
  }
  // An explicit approval of this call, or unsafe mode; else the user decides.
  if (granted) return { action: 'allow', reason: 'explicitly approved for this call', risk };
  if (mode === 'unsafe') return { action: 'allow', reason: 'unsafe mode allows execution', risk };
  return { action: 'prompt', reason: toolReason ?? 'tool requires approval before execution', risk };
}
