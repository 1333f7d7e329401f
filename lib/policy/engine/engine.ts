// SPDX-License-Identifier: MIT
// The permission engine: evaluate(request) → Decision (the order of checks is decision-order.ts:
// a broken grants file allows nothing; approvals never lift the sandbox), plus persistent/session
// grants, command prefixes and request-permission overlays. Pure TypeScript; zod and tree-sitter are never loaded here eagerly.
import type { BackendInfo } from '../../backend/types.js';
import { SandboxError } from '../../errors.js';
import type { Analyzer, AnalyzerRisk } from './analyzer.js';
import {
  normalizePermission,
  normalizePermissionMode,
  normalizeSideEffect,
} from './constants.js';
import { approvableRisks, coversCommand, SessionApprovals } from '../approval/approved-commands.js';
import { resolveScope } from '../grants/grant-match.js';
import { normalizeGrantRecord } from '../grants/grants-file.js';
import type { GrantInput, GrantStore } from '../grants/grants-store.js';
import { buildOverlaidLists, buildGrantProfile, normalizeRequestPermissions, type PermissionOverlay } from './overlays.js';
import { checkRequestPath } from '../paths/path-check.js';
import { commandOf, deny, isReentrant, riskPathCode, splitPlainCommand } from './decision-helpers.js';
import { buildPathLists, buildReadExclusionGlobs, pathListsActive, type PathLists } from '../paths/path-lists.js';
import { resolveBestEffort, withFsMemo } from '../paths/paths.js';
import type { ApprovedCommand, Block, CommandPrefixGrant, Decision, Grant, Policy, Request, RequestPermissionProfile } from '../schema.js';
import { WorkspaceScope } from '../paths/scope.js';
import { decide, type DecisionDeps } from './decision-order.js';

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
  private readonly decisionDeps: DecisionDeps = {
    platform: '',
    store: undefined,
    sessionGrants: this.sessionGrants,
    matchApprovedCommand: (toolName, args, categories, persistentToo) => this.matchApprovedCommand(toolName, args, categories, persistentToo),
    matchPrefix: (toolName, args) => this.matchPrefix(toolName, args),
    parserFailure: () => this.analyzer.parserFailure?.(),
    isShellSandboxActive: () => this.isShellSandboxActive(),
  };

  constructor(parts: EngineParts) {
    this.workspaceRoot = parts.workspaceRoot;
    this.base = parts.policy;
    this.scope = parts.scope;
    this.store = parts.store;
    this.analyzer = parts.analyzer;
    this.backendFn = parts.backend;
    this.env = parts.env;
    this.platform = parts.platform;
    this.decisionDeps.platform = parts.platform;
    this.decisionDeps.store = parts.store;
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

  /**
   * False while the policy names any deny-read entry, present or not: escalating out of the
   * sandbox would bypass it, and a file missing now may exist by the time the command reads it.
   */
  unsandboxedExecutionAllowed(): boolean {
    return !(this.effectivePolicy().denyRead ?? []).some((entry) => entry.trim() !== '');
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
    return decide(this.decisionDeps, { toolName, args, sideEffect, permission, mode, root, scope, policy, lists, active, risk, request });
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

