// SPDX-License-Identifier: MIT
// The permission engine: evaluate(request) → Decision in the reference's order of checks (a
// broken grants file allows nothing; approvals never lift the sandbox), plus persistent/session
// grants, command prefixes and request-permission overlays. Pure TypeScript; zod and tree-sitter are never loaded here eagerly.
import { isAbsolute } from 'node:path';

import type { BackendInfo } from '../backend/types.js';
import { SandboxError } from '../errors.js';
import type { Analyzer, AnalyzerRisk } from './analyzer.js';
import {
  FILE_MUTATION_TOOLS,
  normalizePermission,
  normalizePermissionMode,
  normalizeSideEffect,
  REASON_DESTRUCTIVE,
  REASON_ESCALATED_SANDBOX_REQUIRED,
  REASON_NETWORK_BLOCKED,
  REASON_NO_WORKSPACE_ROOT,
  type PermissionModeName,
  type SideEffectName,
} from './constants.js';
import { approvableRisks, coversCommand, SessionApprovals } from './approved-commands.js';
import { deriveScope, resolveScope, selectGrant } from './grant-match.js';
import { normalizeGrantRecord } from './grants-file.js';
import type { GrantInput, GrantStore } from './grants-store.js';
import { buildOverlaidLists, buildGrantProfile, normalizeRequestPermissions, type PermissionOverlay } from './overlays.js';
import { isPatchEscape } from './patch.js';
import { checkRequestPath, collectRequestPaths, touchesProtectedPath, type PathBlock } from './path-check.js';
import { blockDecision, commandOf, deny, isReentrant, riskPathCode, splitPlainCommand, withGrantsError } from './decision-helpers.js';
import { buildPathLists, buildReadExclusionGlobs, pathListsActive, type PathLists } from './path-lists.js';
import { resolveBestEffort, withFsMemo } from './paths.js';
import type { ApprovedCommand, Block, CommandPrefixGrant, Decision, Grant, Policy, Request, RequestPermissionProfile } from './schema.js';
import { WorkspaceScope } from './scope.js';

/** Everything an Engine is built from (createEngine resolves the defaults). */
export interface EngineParts {
  /** Absolute, symlink-resolved workspace root ('' for none). */
  workspaceRoot: string;
  /** Base policy before request-permission overlays. */
  policy: Policy;
  /** Write/read roots of the workspace. */
  scope: WorkspaceScope;
  /** Persistent grants; undefined for an engine without a store. */
  store: GrantStore | undefined;
  /** Risk classifier and prefix rules. */
  analyzer: Analyzer;
  /** Supplies the backend on first use. */
  backend: () => BackendInfo;
  /** Environment (re-entrancy markers). */
  env: NodeJS.ProcessEnv;
  /** Platform for path semantics. */
  platform: string;
}

/** Per-call evaluation options. */
export interface EvaluateOptions {
  /** An aborted signal makes the decision a `context_canceled` deny. */
  signal?: AbortSignal;
}

const SCOPE_LESS = undefined;

function riskOf(risk: AnalyzerRisk): Decision['risk'] {
  return { level: risk.level, categories: [...risk.categories], reason: risk.reason };
}

/** What evaluate() knows about a request by the time it decides. */
interface RequestFacts {
  toolName: string;
  args: Record<string, unknown>;
  sideEffect: SideEffectName;
  permission: string;
  mode: PermissionModeName;
  root: string;
  scope: WorkspaceScope;
  policy: Policy;
}

/** The permission engine. Create it with createEngine(). */
export class Engine {
  readonly workspaceRoot: string;
  readonly scope: WorkspaceScope;
  private readonly base: Policy;
  private readonly store: GrantStore | undefined;
  private readonly analyzer: Analyzer;
  private readonly backendFn: () => BackendInfo;
  private backendInfo: BackendInfo | undefined;
  private readonly env: NodeJS.ProcessEnv;
  private readonly platform: string;
  private readonly sessionGrants = new Map<string, Grant[]>();
  private readonly sessionPrefixes = new Map<string, string[][]>();
  private readonly sessionApprovals = new SessionApprovals();
  private readonly sessionOverlays: PermissionOverlay[] = [];
  private readonly turnOverlays = new Map<number, PermissionOverlay>();
  private nextOverlay = 1;
  private effective: { policy: Policy; lists: PathLists; active: boolean } | undefined;
  private readonly adhoc = new Map<string, WorkspaceScope>();

  constructor(parts: EngineParts) {
    this.workspaceRoot = parts.workspaceRoot;
    this.base = parts.policy;
    this.scope = parts.scope;
    this.store = parts.store;
    this.analyzer = parts.analyzer;
    this.backendFn = parts.backend;
    this.env = parts.env;
    this.platform = parts.platform;
  }

  /** Path of the persistent grants file ('' when the engine has no store). */
  get grantsPath(): string {
    return this.store?.path ?? '';
  }

  /** The backend the engine reasons about (probed lazily when none was given). */
  backend(): BackendInfo {
    this.backendInfo ??= this.backendFn();
    return this.backendInfo;
  }

  /** Base policy, then session overlays, then turn overlays (network → allow, list unions). */
  effectivePolicy(): Policy {
    return this.effectiveState().policy;
  }

  private effectiveState(): { policy: Policy; lists: PathLists; active: boolean } {
    if (this.effective === undefined) {
      const policy = buildOverlaidLists(this.base, [...this.sessionOverlays, ...this.turnOverlays.values()]);
      const lists = buildPathLists(policy, this.workspaceRoot === '' ? process.cwd() : this.workspaceRoot);
      this.effective = { policy, lists, active: pathListsActive(lists) };
    }
    return this.effective;
  }

  /** The resolved path lists of the effective policy. */
  pathLists(): PathLists {
    return this.effectiveState().lists;
  }

  /** The grants-file error that makes the engine fail closed, if any. */
  grantsError(): string | undefined {
    if (this.store === undefined) return undefined;
    try {
      this.store.read();
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  /** Whether shell commands would really run inside a native sandbox (so they may be auto-allowed). */
  isShellSandboxActive(): boolean {
    if (this.effectivePolicy().mode !== 'enforce') return false;
    if (isReentrant(this.env)) return false;
    const backend = this.backend();
    // Windows needs its one-time setup; elsewhere only an explicit `false` counts as not set up.
    const windows = backend.platform === 'win32' || backend.platform === 'windows';
    const setUp = windows ? backend.setupInitialized === true : backend.setupInitialized !== false;
    return backend.available && backend.commandWrapping && backend.nativeIsolation && setUp;
  }

  /** Write roots a sandboxed command gets: scope write roots plus AllowWrite directories. */
  shellWriteRoots(): string[] {
    return [...new Set([...this.scope.writeRoots(), ...this.effectiveState().lists.allowWrite])];
  }

  /** Extra read roots a sandboxed command gets on top of the read-all posture: scope read roots and AllowRead. */
  shellReadRoots(): string[] {
    return [...new Set([...this.scope.readRoots(), ...this.effectiveState().lists.allowRead])];
  }

  /** ripgrep exclusion globs for in-workspace DenyRead entries; null when the policy is disabled. */
  readExclusionGlobs(): string[] | null {
    const { policy, lists } = this.effectiveState();
    return policy.mode === 'disabled' ? null : buildReadExclusionGlobs(lists, this.workspaceRoot);
  }

  /** False while any deny-read entry exists: escalating out of the sandbox would bypass it. */
  unsandboxedExecutionAllowed(): boolean {
    return this.effectiveState().lists.denyRead.length === 0;
  }

  private scopeFor(root: string): WorkspaceScope {
    if (root === this.workspaceRoot) return this.scope;
    let scope = this.adhoc.get(root);
    if (scope === undefined) {
      scope = new WorkspaceScope(root, [], { env: this.env, platform: this.platform });
      if (this.adhoc.size > 64) this.adhoc.clear();
      this.adhoc.set(root, scope);
    }
    return scope;
  }

  /** Decides one request. Never throws for request content; a broken grants file fails closed. */
  evaluate(request: Request, options: EvaluateOptions = {}): Decision {
    return withFsMemo(() => this.evaluateOnce(request, options));
  }

  private evaluateOnce(input: Request, options: EvaluateOptions): Decision {
    const request = (typeof input === 'object' && input !== null ? input : {}) as Request;
    const toolName = typeof request.toolName === 'string' ? request.toolName.trim() : '';
    const args = typeof request.args === 'object' && request.args !== null ? (request.args as Record<string, unknown>) : {};
    const sideEffect = normalizeSideEffect(request.sideEffect);
    const permission = normalizePermission(request.permission);
    const mode = normalizePermissionMode(request.permissionMode);
    const requested = typeof request.workspaceRoot === 'string' ? request.workspaceRoot.trim() : '';
    const root = requested === '' ? this.workspaceRoot : resolveBestEffort(requested);
    const scope = this.scopeFor(root);
    const classify = (withScope: boolean) =>
      riskOf(
        this.analyzer.classifyRisk(
          { toolName, sideEffect, args, workspaceRoot: root, permissionMode: mode },
          withScope && root !== '' ? { validateWritePath: (abs) => riskPathCode(scope.validate(abs, 'write').code) } : SCOPE_LESS,
        ),
      );
    if (options.signal?.aborted) {
      const risk = classify(false);
      return deny(risk, 'context_canceled', toolName, 'request was cancelled');
    }
    const { policy, lists, active } = this.effectiveState();
    const risk = classify(true);
    if (policy.mode === 'disabled') return { action: 'allow', reason: 'sandbox disabled', risk };
    const decision = this.decide({ toolName, args, sideEffect, permission, mode, root, scope, policy, lists, active, risk, request });
    return decision;
  }

  private decide(c: RequestFacts & {
    lists: PathLists;
    active: boolean;
    risk: Decision['risk'];
    request: Request;
  }): Decision {
    const { toolName, args, sideEffect, mode, risk } = c;
    const toolReason = typeof c.request.reason === 'string' && c.request.reason.trim() !== '' ? c.request.reason.trim() : undefined;
    const granted = c.request.permissionGranted === true;
    // The grants file is read first so that its error, if any, is in every reason (fail closed:
    // a broken file honours no allow grant and no auto-allow). The order of outcomes is the reference's.
    const requestScope = resolveScope(deriveScope(toolName, args), c.root, this.platform).raw;
    let grantsError: string | undefined;
    let found: Grant | undefined;
    if (this.store !== undefined) {
      try {
        found = this.store.lookup(toolName, requestScope);
      } catch (error) {
        grantsError = (error as Error).message;
      }
    }
    const failClosed = (d: Decision): Decision => (grantsError === undefined ? d : withGrantsError(d, grantsError));
    // 7: tool safety deny.
    if (c.permission === 'deny') return failClosed(deny(risk, 'denied_permission', toolName, toolReason ?? 'tool safety denies execution'));
    // 8-9: a covering persistent or session deny (recoverable: the user can revoke it).
    if (found?.decision === 'deny') {
      return { ...deny(risk, 'persistent_deny', toolName, 'persistent sandbox deny grant matched', true), grantMatched: true, grant: found };
    }
    const persistentAllow = found;
    const sessionFound = selectGrant(this.sessionGrants.get(toolName) ?? [], requestScope, this.platform);
    if (sessionFound?.decision === 'deny') {
      return { ...deny(risk, 'persistent_deny', toolName, 'session sandbox deny grant matched', true), grantMatched: true, grant: sessionFound };
    }
    // 11: apply_patch escapes are hard denies, ahead of any grant.
    const { paths, patchPaths } = collectRequestPaths(toolName, args);
    const escape = patchPaths.find(isPatchEscape);
    if (escape !== undefined) {
      return failClosed(blockDecision('deny', risk, toolName, { code: 'outside_workspace', reason: `${escape} is outside the workspace`, path: escape }));
    }
    // 12: paths.
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
    const approved = isShell && mode !== 'unsafe' ? this.matchApprovedCommand(toolName, args, risk.categories, grantsError === undefined) : undefined;
    const usedRisks: string[] = [];
    // 13: network, ahead of every allow grant and of permissionGranted.
    if (c.policy.network !== 'allow' && risk.categories.includes('network') && sideEffect !== 'network') {
      if (isShell && approved !== undefined) usedRisks.push('network');
      else if (isShell && mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_NETWORK_BLOCKED, risk });
      else return failClosed(deny(risk, 'network', toolName, REASON_NETWORK_BLOCKED));
    }
    // 14: destructive shell.
    if (isShell && risk.categories.includes('destructive') && !granted) {
      if (approved !== undefined) usedRisks.push('destructive');
      else if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_DESTRUCTIVE, risk });
      else return failClosed(deny(risk, 'destructive_command', toolName, 'destructive shell command denied in unsafe mode'));
    }
    // A shell command that could not be analyzed because the parser itself failed to load is never
    // auto-allowed: the user decides (headless: denied), as for a destructive command.
    const parserFailure = isShell && !granted ? this.analyzer.parserFailure?.() : undefined;
    if (parserFailure !== undefined) {
      const reason = `the shell command analyzer is unavailable (${parserFailure}), so the command needs approval`;
      if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason, risk });
      return failClosed(deny(risk, 'denied_permission', toolName, reason));
    }
    const rest = this.decideAfterRisk({ ...c, granted, approvedEarlier: usedRisks.length > 0, promptable, paths, isShell, grantsError, persistentAllow, sessionFound, toolReason });
    if (usedRisks.length === 0 || rest.action !== 'allow') return rest;
    const reason = `${approved?.session ? 'session' : 'persistent'} approval of this exact command (${usedRisks.join(', ')}); the command still runs sandboxed`;
    return { ...rest, reason, grantMatched: true, approvedRisks: usedRisks };
  }

  private decideAfterRisk(c: RequestFacts & {
    risk: Decision['risk'];
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
  }): Decision {
    const { toolName, args, sideEffect, mode, risk, promptable, paths, isShell, grantsError, persistentAllow, sessionFound, toolReason } = c;
    const failClosed = (d: Decision): Decision => (grantsError === undefined ? d : withGrantsError(d, grantsError));
    // 15: escalation out of the sandbox: only an approval of this very call lifts it.
    if (isShell && args.sandbox_permissions === 'require_escalated' && !c.granted) {
      if (mode !== 'unsafe') return failClosed({ action: 'prompt', reason: REASON_ESCALATED_SANDBOX_REQUIRED, risk });
      return failClosed(deny(risk, 'denied_permission', toolName, 'unsafe mode must not silently run a command unsandboxed'));
    }
    if (grantsError === undefined) {
      // 16-17: grants, then approved command prefixes (which keep the command sandboxed).
      if (persistentAllow !== undefined) {
        return { action: 'allow', reason: 'persistent sandbox allow grant matched', risk, grantMatched: true, grant: persistentAllow };
      }
      if (sessionFound !== undefined) {
        return { action: 'allow', reason: 'session sandbox allow grant matched', risk, grantMatched: true, grant: sessionFound };
      }
      const prefix = isShell && promptable === undefined ? this.matchPrefix(toolName, args) : undefined;
      if (prefix !== undefined) {
        const reason = `${prefix.session ? 'session' : 'persistent'} command prefix matched; the command still runs sandboxed`;
        return { action: 'allow', reason, risk, grantMatched: true, commandPrefix: [...prefix.prefix] };
      }
    }
    const granted = c.granted || c.approvedEarlier;
    // 18: recoverable outside-workspace path → prompt carrying the block.
    if (promptable !== undefined) return failClosed(blockDecision('prompt', risk, toolName, promptable));
    if (grantsError !== undefined) {
      if (granted) return withGrantsError({ action: 'allow', reason: 'explicitly approved for this call', risk }, grantsError);
      return withGrantsError({ action: 'prompt', reason: toolReason ?? 'tool requires approval before execution', risk }, grantsError);
    }
    // 19: tool safety allow.
    if (c.permission === 'allow') return { action: 'allow', reason: toolReason ?? 'tool safety allows execution', risk };
    // 20: workspace file mutation.
    if (c.policy.enforceWorkspace && c.root !== '' && sideEffect === 'write' && FILE_MUTATION_TOOLS.has(toolName) && paths.length > 0) {
      if (!paths.some((p) => touchesProtectedPath(p, c.root, c.scope.writeRoots()))) {
        return { action: 'allow', reason: 'workspace write is allowed', risk, autoAllowed: true };
      }
    }
    // 21: shell inside an active native sandbox.
    if (isShell && this.isShellSandboxActive()) {
      return { action: 'allow', reason: 'auto-allowed: sandbox is active for this shell command', risk, autoAllowed: true };
    }
    // 22-23.
    if (granted) return { action: 'allow', reason: 'explicitly approved for this call', risk };
    if (mode === 'unsafe') return { action: 'allow', reason: 'unsafe mode allows execution', risk };
    return { action: 'prompt', reason: toolReason ?? 'tool requires approval before execution', risk };
  }

  private matchPrefix(toolName: string, args: Record<string, unknown>): { prefix: string[]; session: boolean } | undefined {
    const command = commandOf(args);
    return command === undefined ? undefined : this.matchCommandPrefix(toolName, command);
  }

  /** The approved prefix (persistent first, then session) covering a command, if any. */
  matchCommandPrefix(toolName: string, command: string): { prefix: string[]; session: boolean } | undefined {
    const session = this.sessionPrefixes.get(toolName) ?? [];
    let persistent: string[][];
    try {
      persistent = (this.store?.read().commandPrefixes[toolName] ?? []).map((p) => p.prefix);
    } catch {
      return undefined;
    }
    if (persistent.length + session.length === 0) return undefined;
    if (this.analyzer.matchCommandPrefix !== undefined) return this.analyzer.matchCommandPrefix(command, persistent, session);
    const argv = splitPlainCommand(command);
    if (argv === undefined) return undefined;
    const hit = (list: string[][]) => list.find((p) => p.length <= argv.length && p.every((t, i) => argv[i] === t));
    const fromPersistent = hit(persistent);
    if (fromPersistent !== undefined) return { prefix: fromPersistent, session: false };
    const fromSession = hit(session);
    return fromSession === undefined ? undefined : { prefix: fromSession, session: true };
  }

  /**
   * The session or always approval covering this exact command text and every one of its risky
   * categories (network, destructive), if any. Persistent ones only when the grants file is sound.
   */
  private matchApprovedCommand(toolName: string, args: Record<string, unknown>, categories: readonly string[], persistentToo: boolean): { session: boolean } | undefined {
    const command = commandOf(args)?.trim();
    const needed = approvableRisks(categories);
    if (command === undefined || command === '' || needed.length === 0) return undefined;
    if (persistentToo && this.store !== undefined) {
      try {
        if (coversCommand(this.store.approvedCommandsOf(toolName), command, needed)) return { session: false };
      } catch {
        // a broken grants file honours no persistent approval
      }
    }
    return coversCommand(this.sessionApprovals.of(toolName), command, needed) ? { session: true } : undefined;
  }

  /**
   * Approves one exact network/destructive command for the session or persistently ("always"): the
   * identical command text with at most these risks is not asked about again. Never a prefix.
   */
  approveCommand(toolName: string, command: string, risks: readonly string[], options: { session?: boolean } = {}): void {
    const text = command.trim();
    const kept = approvableRisks(risks);
    if (text === '' || kept.length === 0) throw new SandboxError('invalid_argument', 'approveCommand needs a command and at least one of the risks network, destructive');
    if (options.session) this.sessionApprovals.add(toolName, text, kept);
    else this.requireStore().approveCommand(toolName, text, kept);
  }

  /** Persistent approvals of exact network/destructive commands, sorted. */
  listApprovedCommands(): ApprovedCommand[] {
    return this.requireStore().listApprovedCommands();
  }

  /** The prefix to offer when approving a shell call (undefined when none is safe to offer). */
  proposeCommandPrefix(toolName: string, args: Record<string, unknown>): string[] | undefined {
    return this.analyzer.proposeCommandPrefix?.(toolName, args);
  }

  /** The blocks a deny would carry (a bare deny gets a synthesized `denied` block); none otherwise. */
  precheck(request: Request, options: EvaluateOptions = {}): Block[] {
    const decision = this.evaluate(request, options);
    if (decision.action !== 'deny') return [];
    if (decision.block !== undefined) return [decision.block];
    return [{ code: 'denied', toolName: request.toolName, action: 'deny', risk: decision.risk, reason: decision.reason ?? 'denied', recoverable: false }];
  }

  private requireStore(): GrantStore {
    if (this.store === undefined) throw new SandboxError('invalid_argument', 'this engine has no persistent grants store');
    return this.store;
  }

  private anchor(input: GrantInput): GrantInput {
    const kind = input.scopeKind ?? '';
    if ((kind === 'file' || kind === 'dir') && input.scope !== undefined && input.scope !== '') {
      return { ...input, scope: resolveScope({ raw: input.scope, kind }, this.workspaceRoot, this.platform).raw };
    }
    return input;
  }

  /** Stores a persistent grant (relative file/dir scopes are anchored at the workspace root). */
  grant(input: GrantInput): Grant {
    return this.requireStore().grant(this.anchor(input));
  }

  /** Records an in-memory grant for this engine's lifetime. */
  grantForSession(input: GrantInput): Grant {
    const anchored = this.anchor(input);
    let grant: Grant;
    try {
      grant = normalizeGrantRecord({ ...anchored, approvedAt: new Date().toISOString() }, anchored.toolName, 'session grant');
    } catch (error) {
      throw new SandboxError('invalid_argument', (error as Error).message, { cause: error });
    }
    grant.session = true;
    const list = this.sessionGrants.get(grant.toolName) ?? [];
    const at = list.findIndex((g) => (g.scope ?? '') === (grant.scope ?? '') && (g.scopeKind ?? '') === (grant.scopeKind ?? ''));
    if (at === -1) list.push(grant);
    else list[at] = grant;
    this.sessionGrants.set(grant.toolName, list);
    return grant;
  }

  /** Removes every persistent grant and prefix of a tool. */
  revoke(toolName: string): number {
    return this.requireStore().revoke(toolName);
  }

  /** Removes persistent grants of a tool scoped exactly at `path`. */
  revokePath(toolName: string, path: string): number {
    return this.requireStore().revokePath(toolName, path);
  }

  /** Removes every persistent grant and prefix. */
  clear(): number {
    return this.requireStore().clear();
  }

  /** The persistent grant covering a tool and resolved scope ('' = tool-wide), if any. */
  lookupGrant(toolName: string, requestScope: string): Grant | undefined {
    return this.requireStore().lookup(toolName, requestScope);
  }

  /** Persistent grants, sorted. */
  list(): Grant[] {
    return this.requireStore().list();
  }

  /** Persistent command prefixes, sorted. */
  listCommandPrefixes(): CommandPrefixGrant[] {
    return this.requireStore().listCommandPrefixes();
  }

  /** Approves a command prefix persistently or for the session; refused prefixes throw invalid_argument. */
  grantCommandPrefix(toolName: string, prefix: readonly string[], options: { session?: boolean; reason?: string } = {}): CommandPrefixGrant {
    if (!options.session) return this.requireStore().grantCommandPrefix(toolName, prefix, options.reason);
    const tokens = prefix.map((t) => t.trim());
    if (!this.analyzer.validateCommandPrefix(tokens)) {
      throw new SandboxError('invalid_argument', `${JSON.stringify(tokens)} is not an allowed command prefix`);
    }
    const list = this.sessionPrefixes.get(toolName) ?? [];
    if (!list.some((p) => p.join('\0') === tokens.join('\0'))) list.push(tokens);
    this.sessionPrefixes.set(toolName, list);
    return { toolName, prefix: tokens, session: true };
  }

  /**
   * Applies a request_permissions profile for the current turn or the session and returns the
   * cleanup (a no-op for session scope). Read/write paths widen to their directory.
   */
  grantRequestPermissions(profile: RequestPermissionProfile, scope: 'turn' | 'session'): () => void {
    const grant = buildGrantProfile(normalizeRequestPermissions(profile, this.workspaceRoot));
    const undo: Array<() => void> = [];
    try {
      for (const root of grant.read) {
        if (scope === 'session') this.scope.addRead(root);
        else undo.push(this.scope.addTemporaryRead(root));
      }
      for (const root of grant.write) {
        if (scope === 'session') this.scope.add(root);
        else undo.push(this.scope.addTemporaryWrite(root));
      }
    } catch (error) {
      for (const fn of undo) fn();
      throw error;
    }
    const overlay: PermissionOverlay = { network: grant.network, allowRead: grant.read, allowWrite: grant.write, denyRead: grant.denyRead };
    this.effective = undefined;
    if (scope === 'session') {
      this.sessionOverlays.push(overlay);
      return () => undefined;
    }
    const token = this.nextOverlay++;
    this.turnOverlays.set(token, overlay);
    return () => {
      if (!this.turnOverlays.delete(token)) return;
      for (const fn of undo) fn();
      this.effective = undefined;
    };
  }

  /** Whether the effective policy already grants everything the profile asks for. */
  coversRequestPermissions(profile: RequestPermissionProfile): boolean {
    let wanted;
    try {
      wanted = normalizeRequestPermissions(profile, this.workspaceRoot);
    } catch {
      return false;
    }
    const { policy, lists, active } = this.effectiveState();
    if (wanted.network && policy.network !== 'allow') return false;
    const ctx = { scope: this.scope, lists, listsActive: active, policyEnforce: true, workspaceRoot: this.workspaceRoot };
    if (wanted.read.some((p) => checkRequestPath(p, { ...ctx, sideEffect: 'read' }) !== undefined)) return false;
    if (wanted.write.some((p) => checkRequestPath(p, { ...ctx, sideEffect: 'write' }) !== undefined)) return false;
    return wanted.denyRead.every((p) => lists.denyRead.includes(p));
  }

  /** The one-time grants migration notice, or undefined. Never throws. */
  consumeMigrationNotice(): string | undefined {
    try {
      return this.store?.consumeMigrationNotice();
    } catch {
      return undefined;
    }
  }
}

