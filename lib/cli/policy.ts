// SPDX-License-Identifier: MIT
// `zero-sandbox policy [--json] [--effective]`: the policy from config, the backend, what it
// enforces natively and what it cannot (then runs are refused, never weakened).
import { probeSync } from '../probe.js';
import { existingCredentialPaths } from '../sandbox/credential-deny.js';
import { buildCredentialListJson } from '../credentials.js';
import { buildSandboxEnv } from '../env.js';
import { openCliEngine } from '../policy/output/cli-support.js';
import type { EngineWithConfig } from '../policy/engine/create-engine.js';
import { buildEnforcementReport, type EnforcementReport } from '../backend/enforcement.js';
import { PROTECTED_METADATA_NAMES } from '../protected-names.js';
import { buildBackendJson, buildCapabilities, buildPolicyJson, buildRestrictions } from '../policy/output/report.js';
import { DEFAULT_PROCESSES, effectiveLimits, underHardLimits } from '../sandbox/default-limits.js';
import { hardLimit } from '../process-limits.js';
import { processCapMechanism } from '../sandbox/cgroup.js';
import type { ResourceLimits } from '../backend/types.js';
import { flagBool, parseArgs } from './args.js';
import type { CliIo } from './io.js';
import { buildLimitsFromFlags, LIMIT_FLAG_DEFS, LIMIT_FLAGS_HELP } from './limit-flags.js';

export const POLICY_HELP = `Usage: zero-sandbox policy [--json] [--effective] [--limit-* ...]

Prints the sandbox policy of the current workspace (user and project config applied), the
backend, the sandbox profile shell commands get, the resource caps a run gets (the defaults, the
config's "limits", and the --limit-* flags given here as they would be to run or exec), and the
loss report: which parts of the policy this machine enforces natively and which it cannot (runs
are then refused).

Options:
  --effective  also print write roots and guards
  --json       print JSON
  -h, --help   show this help

Resource caps (shown as a run with these flags would get them):
${LIMIT_FLAGS_HELP}
Exit status: 0 when printed, 2 for usage errors, 3 for config errors.
`;

const PROFILE_NOTE =
  'permissionProfile is derived from this process\'s environment and working directory; a command run with its own environment can add further credential deny-read entries.';

/** A byte count as the --limit-* flags take it (1G, 256M, ...) when it is a whole number of units. */
function formatSize(bytes: number): string {
  for (const [unit, size] of [['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]] as const) if (bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}

const SIZE_LIMITS = new Set<keyof ResourceLimits>(['memoryBytes', 'fileSizeBytes', 'tmpBytes', 'shmBytes']);

/**
 * The caps a run gets here, where each comes from (default, config, flag, or the caller's own
 * hard limit below them), and what enforces the process cap; `limitsNotEnforced` as a run would
 * report it.
 */
function limitsReport(config: ResourceLimits | undefined, flags: ResourceLimits): Record<string, unknown> {
  const { limits, sources } = effectiveLimits(config, flags);
  // process.platform: only Linux chooses between a pids cgroup and a fork probe for the process cap.
  const mechanism = process.platform === 'linux' ? processCapMechanism(limits.processes ?? DEFAULT_PROCESSES) : undefined;
  // A cap above the caller's own hard limit is lowered to it at the spawn (the sandbox cannot raise it).
  if (process.platform === 'linux') underHardLimits(limits, sources, hardLimit, mechanism === 'rlimit');
  return {
    limits,
    limitSources: sources,
    ...(mechanism === undefined ? {} : { processLimitBy: mechanism }),
    ...(mechanism === 'none' ? { limitsNotEnforced: ['processes'] } : {}),
  };
}

function buildPlan(engine: EngineWithConfig, enforcement: EnforcementReport, flagLimits: ResourceLimits): Record<string, unknown> {
  const policy = engine.effectivePolicy();
  const backend = engine.backend();
  const isNative = backend.available && backend.nativeIsolation && backend.commandWrapping;
  const disabled = policy.mode === 'disabled';
  const lists = engine.pathLists();
  const temps = new Set(engine.scope.tempRoots);
  const writeRoots = engine.shellWriteRoots().filter((root) => !temps.has(root));
  const fileSystem: Record<string, unknown> = disabled
    ? { kind: 'unrestricted' }
    : {
        kind: 'restricted',
        readRoots: ['/', ...writeRoots, ...engine.shellReadRoots()],
        writeRoots: writeRoots.map((root) => ({
          root,
          readOnlySubpaths: [`${root}/.git/hooks`, `${root}/.git/config`],
          protectedMetadataNames: [...PROTECTED_METADATA_NAMES],
        })),
        ...(lists.denyRead.length > 0 ? { denyRead: lists.denyRead } : {}),
        denyReadIfExists: existingCredentialPaths([process.env], writeRoots),
        credentialList: buildCredentialListJson(),
        ...(lists.denyWrite.length > 0 ? { denyWrite: lists.denyWrite } : {}),
        includePlatformRoots: true,
        privateTemp: true,
      };
  // Which of this process's variables a command would not see (names only, never values).
  const envPass = engine.config?.envPass ?? [];
  const scrubbed: string[] = [];
  buildSandboxEnv(process.env, { backend: backend.name, network: policy.network, pass: envPass, scrubbed });
  const plan: Record<string, unknown> = {
    backend: buildBackendJson(backend),
    targetBackend: disabled ? 'none' : backend.name,
    workspaceRoot: engine.workspaceRoot,
    policy: buildPolicyJson(policy),
    permissionProfile: { fileSystem, network: { mode: disabled ? 'allow' : policy.network }, environment: { scrubbed, passed: [...envPass] } },
    commandWrapped: !disabled && isNative,
    enforcementLevel: disabled ? 'disabled' : isNative ? 'native' : 'unavailable',
    supportLevel: isNative ? 'native' : 'unavailable',
    requiresPlatformSandbox: !disabled,
    ...(disabled ? {} : limitsReport(engine.config?.limits, flagLimits)),
    capabilities: buildCapabilities(policy, backend),
    restrictions: buildRestrictions(policy, backend),
    ...(disabled ? {} : { enforcement }),
  };
  if (!isNative && !disabled) {
    plan.refusal = `shell commands are refused rather than run unsandboxed: ${backend.message ?? 'no native sandbox'}`;
    plan.warnings = [backend.message ?? 'no native sandbox backend', 'shell commands are not wrapped by a native platform sandbox'];
  }
  return plan;
}

export async function runPolicy(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: [{ name: 'json', type: 'boolean' }, { name: 'effective', type: 'boolean' }, ...LIMIT_FLAG_DEFS] });
  if (args.help) {
    io.stdout(POLICY_HELP);
    return 0;
  }
  const engine = await openCliEngine(io);
  const policy = engine.effectivePolicy();
  const backend = engine.backend();
  const enforcement = buildEnforcementReport(probeSync(), { network: policy.network });
  const plan = buildPlan(engine, enforcement, buildLimitsFromFlags(args));
  const effective = flagBool(args, 'effective');
  const writeRoots = engine.scope.writeRoots();
  if (flagBool(args, 'json')) {
    const out: Record<string, unknown> = effective
      ? {
          workspaceRoot: engine.workspaceRoot,
          writeRoots,
          policy: buildPolicyJson(policy),
          backend: buildBackendJson(backend),
          plan,
          guards: { interactiveCommand: true, network: policy.network !== 'allow', workspace: policy.enforceWorkspace },
          grantsPath: engine.grantsPath,
          permissionProfileNote: PROFILE_NOTE,
        }
      : { policy: buildPolicyJson(policy), backend: buildBackendJson(backend), plan, grantsPath: engine.grantsPath, permissionProfileNote: PROFILE_NOTE };
    if (engine.config !== undefined && engine.config.files.length > 0) out.configFiles = engine.config.files;
    io.stdout(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  const lines = [effective ? 'Zero effective sandbox policy' : 'Zero sandbox policy'];
  lines.push(`root: ${engine.workspaceRoot}`, `mode: ${policy.mode}`, `network: ${policy.network}`);
  if (effective) {
    lines.push(`enforce_workspace: ${policy.enforceWorkspace}`, `write_roots: ${writeRoots.join(', ')}`, `permission_profile_note: ${PROFILE_NOTE}`);
  }
  lines.push(
    `backend: ${backend.name}`,
    `target_backend: ${plan.targetBackend as string}`,
    `support_level: ${plan.supportLevel as string}`,
    `command_wrapped: ${plan.commandWrapped as boolean}`,
    `enforcement_level: ${plan.enforcementLevel as string}`,
    `requires_platform_sandbox: ${plan.requiresPlatformSandbox as boolean}`,
    `backend_platform: ${backend.platform}`,
    `backend_available: ${backend.available}`,
    `backend_command_wrapping: ${backend.commandWrapping}`,
    `backend_native_isolation: ${backend.nativeIsolation}`,
  );
  if (effective) {
    lines.push('interactive_command_guard: enabled', `network_guard: ${policy.network !== 'allow' ? 'enabled' : 'disabled'}`, `workspace_guard: ${policy.enforceWorkspace ? 'enabled' : 'disabled'}`);
  }
  const limits = (plan.limits ?? {}) as Record<keyof ResourceLimits, number>;
  const sources = (plan.limitSources ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(limits) as Array<[keyof ResourceLimits, number]>) {
    lines.push(`limit: ${key} ${SIZE_LIMITS.has(key) ? formatSize(value) : value} (${sources[key] ?? 'default'})`);
  }
  if (plan.processLimitBy !== undefined) lines.push(`process_limit_by: ${plan.processLimitBy as string}`);
  lines.push(`grants: ${engine.grantsPath}`);
  if (backend.message !== undefined) lines.push(`backend_message: ${backend.message}`);
  if (policy.mode !== 'disabled') {
    for (const item of enforcement.capabilities) {
      lines.push(item.enforced ? `enforced: ${item.capability} (${item.by.join(', ')})` : `not_enforced: ${item.capability} (${item.reason ?? ''})`);
    }
  }
  if (effective) for (const r of plan.restrictions as string[]) lines.push(`restriction: ${r}`);
  for (const w of (plan.warnings as string[] | undefined) ?? []) lines.push(`warning: ${w}`);
  io.stdout(`${lines.join('\n')}\n`);
  return 0;
}
