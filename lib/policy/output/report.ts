// SPDX-License-Identifier: MIT
// Pure builders of what `check`, `policy` and `grants` print: restrictions, capabilities, the check
// report, the policy report and the grant list text.
import type { BackendInfo } from '../../backend/types.js';
import type { ApprovedCommand, CommandPrefixGrant, Decision, Grant, Policy } from '../schema.js';

/** The backend in the JSON shape of the Go Zero CLI, so tools that read its output read ours. */
export function buildBackendJson(backend: BackendInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: backend.name,
    available: backend.available,
    platform: backend.platform,
    fallback: !backend.available,
    commandWrapping: backend.commandWrapping,
    nativeIsolation: backend.nativeIsolation,
  };
  if (backend.message !== undefined) out.message = backend.message;
  return out;
}

function native(backend: BackendInfo): boolean {
  return backend.available && backend.nativeIsolation && backend.commandWrapping;
}

/** Human restrictions of a policy on a backend, sorted. */
export function buildRestrictions(policy: Policy, backend: BackendInfo): string[] {
  const out: string[] = [];
  if (policy.mode === 'disabled') return ['sandbox disabled: commands run unwrapped and every request is allowed'];
  if (policy.enforceWorkspace) out.push('filesystem writes must stay inside workspace');
  out.push(policy.network === 'allow' ? 'network access allowed for shell commands' : 'network access denied unless approved for a turn or session');
  if (native(backend)) {
    out.push(`shell commands are wrapped through ${backend.name} when launched by the sandbox engine`);
  } else {
    out.push(`native process isolation unavailable on ${backend.platform}`);
    out.push('shell commands are not wrapped by a native platform sandbox');
  }
  return out.sort();
}

/** Capability rows `{key, status, detail}`. */
export function buildCapabilities(policy: Policy, backend: BackendInfo): Array<{ key: string; status: string; detail: string }> {
  const disabled = policy.mode === 'disabled';
  const isNative = native(backend);
  return [
    { key: 'permission_review', status: disabled ? 'disabled' : 'preflight', detail: 'tool requests are reviewed before execution' },
    {
      key: 'workspace_write_guard',
      status: disabled || !policy.enforceWorkspace ? 'disabled' : isNative ? 'native' : 'preflight',
      detail: 'filesystem writes are checked against the workspace root before execution',
    },
    {
      key: 'network_guard',
      status: disabled || policy.network === 'allow' ? 'disabled' : isNative ? 'native' : 'preflight',
      detail: 'network-capable shell commands need approval and run without network unless approved',
    },
    { key: 'native_process_isolation', status: isNative ? 'native' : 'unavailable', detail: isNative ? `${backend.name} isolates shell commands` : (backend.message ?? 'no native sandbox backend') },
    { key: 'command_wrapping', status: isNative ? 'native' : 'unavailable', detail: isNative ? 'shell commands are wrapped by the native sandbox' : 'shell commands are not wrapped by a native platform sandbox' },
  ];
}

/** The policy fields the Go Zero CLI prints, in its shape for the tools that read it (lists only when set). */
export function buildPolicyJson(policy: Policy): Record<string, unknown> {
  const out: Record<string, unknown> = { mode: policy.mode, network: policy.network, enforceWorkspace: policy.enforceWorkspace };
  for (const key of ['blockUnixSockets', 'monitorDenials'] as const) if (policy[key]) out[key] = true;
  for (const key of ['allowRead', 'denyRead', 'allowWrite', 'denyWrite'] as const) {
    const list = policy[key];
    if (list !== undefined && list.length > 0) out[key] = [...list];
  }
  return out;
}

/** Inputs of buildCheckReport. */
export interface CheckReportInput {
  tool: string;
  policy: Policy;
  backend: BackendInfo;
  workspaceRoot: string;
  decision: Decision;
  grant: Grant | undefined;
  grantsError: string | undefined;
}

/** The `check --json` report. */
export interface CheckReport {
  /** The tool checked. */
  tool: string;
  /** Policy, backend, restrictions and workspace the decision was made under. */
  plan: {
    policy: { mode: string; network: string; enforceWorkspace: boolean; effectiveMode: string };
    backend: Record<string, unknown>;
    restrictions: string[];
    workspaceRoot: string;
  };
  /** The decision, with the block when there is one. */
  decision: {
    action: string;
    reason: string;
    risk: { level: string; categories: string[]; reason: string };
    grantMatched: boolean;
    grant?: Grant;
    commandPrefix?: string[];
    autoAllowed?: boolean;
    block?: { code: string; toolName: string; action: string; path?: string; reason: string; recoverable: boolean };
  };
  /** The persistent grant for the tool and path (or workspace), or why it could not be read. */
  grant: { toolName: string; matched: boolean; grant?: Grant; error?: string };
}

/** Builds the `check --json` report. */
export function buildCheckReport(input: CheckReportInput): CheckReport {
  const { decision } = input;
  const out: CheckReport['decision'] = {
    action: decision.action,
    reason: decision.reason ?? '',
    risk: { level: decision.risk.level, categories: decision.risk.categories, reason: decision.risk.reason },
    grantMatched: decision.grantMatched === true,
  };
  if (decision.grant !== undefined) out.grant = decision.grant;
  if (decision.commandPrefix !== undefined) out.commandPrefix = decision.commandPrefix;
  if (decision.autoAllowed) out.autoAllowed = true;
  if (decision.block !== undefined) {
    const b = decision.block;
    out.block = { code: b.code, toolName: b.toolName ?? input.tool, action: b.action, ...(b.path === undefined ? {} : { path: b.path }), reason: b.reason, recoverable: b.recoverable };
  }
  const grant: CheckReport['grant'] = { toolName: input.tool, matched: input.grant !== undefined };
  if (input.grant !== undefined) grant.grant = input.grant;
  if (input.grantsError !== undefined) grant.error = input.grantsError;
  return {
    tool: input.tool,
    plan: {
      policy: { mode: input.policy.mode, network: input.policy.network, enforceWorkspace: input.policy.enforceWorkspace, effectiveMode: input.policy.mode },
      backend: buildBackendJson(input.backend),
      restrictions: buildRestrictions(input.policy, input.backend),
      workspaceRoot: input.workspaceRoot,
    },
    decision: out,
    grant,
  };
}

/** The `check` text output. */
export function formatCheckText(r: CheckReport): string {
  const lines = [`Sandbox check: ${r.tool}`, `decision: ${r.decision.action}`];
  if (r.decision.reason) lines.push(`reason: ${r.decision.reason}`);
  lines.push(`risk: ${r.decision.risk.level}${r.decision.risk.categories.length ? ` [${r.decision.risk.categories.join(', ')}]` : ''}`);
  const b = r.decision.block;
  if (b) lines.push(`block: [${b.code}] ${b.reason}${b.path ? ` (path: ${b.path})` : ''}`);
  if (r.decision.commandPrefix) lines.push(`command prefix: ${r.decision.commandPrefix.join(' ')} (still sandboxed)`);
  lines.push(r.grant.grant ? `grant: matched ${r.grant.grant.decision}` : 'grant: no grant matched this action');
  if (r.grant.error) lines.push(`grants error: ${r.grant.error}`);
  const p = r.plan.policy;
  lines.push(`policy: mode=${p.mode} network=${p.network} enforceWorkspace=${p.enforceWorkspace}`);
  lines.push(`backend: ${String(r.plan.backend.name)} (available=${String(r.plan.backend.available)})`);
  lines.push('restrictions:', ...r.plan.restrictions.map((x) => `  - ${x}`));
  return `${lines.join('\n')}\n`;
}

/** "No persistent sandbox grants." or the "Sandbox Grants:" list. */
export function formatGrantList(grants: readonly Grant[], prefixes: readonly CommandPrefixGrant[], approved: readonly ApprovedCommand[] = []): string {
  if (grants.length === 0 && prefixes.length === 0 && approved.length === 0) return 'No persistent sandbox grants.\n';
  const lines = ['Sandbox Grants:'];
  for (const g of grants) lines.push(`  ${g.toolName} (${g.scope || '*'}) [${g.decision}] approved ${g.approvedAt}${g.reason ? ` - ${g.reason}` : ''}`);
  for (const p of prefixes) lines.push(`  ${p.toolName} (\`${p.prefix.join(' ')}\`) [command-prefix] approved ${p.approvedAt ?? ''}`.trimEnd() + (p.reason ? ` - ${p.reason}` : ''));
  for (const a of approved) lines.push(`  ${a.toolName} (\`${a.command}\`) [exact command: ${a.risks.join(', ')}] approved ${a.approvedAt ?? ''}`.trimEnd());
  return `${lines.join('\n')}\n`;
}
