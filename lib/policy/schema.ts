// SPDX-License-Identifier: MIT
// zod schemas of every policy-engine data shape (the single source of truth) and their inferred types.
// Only boundaries import this module at run time; the engine imports its types only, so zod stays
// off the hot path and off the `run` start-up path.
import { z } from 'zod';

import {
  ACTIONS,
  BLOCK_CODES,
  normalizeNetworkMode,
  PERMISSION_MODES,
  PERMISSIONS,
  RISK_LEVELS,
  SIDE_EFFECTS,
  TOOL_NAME_PATTERN,
} from './engine/constants.js';

/** Shell egress mode; anything but `allow` normalizes to `deny` (fail closed). */
export const NetworkModeSchema = z
  .string()
  .transform((value) => normalizeNetworkMode(value))
  .describe('Shell network egress: "allow" or "deny"; any other value is treated as "deny".');
/** Normalized network mode. */
export type NetworkModeValue = z.infer<typeof NetworkModeSchema>;

const pathList = (what: string) => z.array(z.string()).optional().describe(what);

/** The sandbox policy the engine evaluates against. */
export const PolicySchema = z
  .object({
    mode: z.enum(['enforce', 'disabled']).default('enforce').describe('"disabled" allows everything and runs commands unwrapped.'),
    network: NetworkModeSchema.default('deny'),
    enforceWorkspace: z.boolean().default(true).describe('Check path arguments against the workspace and write roots.'),
    blockUnixSockets: z.boolean().optional().describe('Block creating Unix sockets inside the sandbox.'),
    monitorDenials: z.boolean().optional().describe('macOS: tag and report sandbox denials.'),
    allowRead: pathList('Read-allow carve-outs inside denyRead entries (absolute, existing).'),
    denyRead: pathList('Paths that must not be read (absolute; entries that do not exist are dropped).'),
    allowWrite: pathList('Extra absolute directories writes may go to.'),
    denyWrite: pathList('Paths that must not be written, even inside the workspace.'),
  })
  .strict()
  .describe('Sandbox policy.');
/** A normalized policy. */
export type Policy = z.infer<typeof PolicySchema>;

/** One tool call the engine decides on. */
export const RequestSchema = z
  .object({
    workspaceRoot: z.string().optional().describe('Overrides the engine workspace root for this request (validated against that root alone).'),
    toolName: z.string().min(1).describe('Tool name, e.g. "bash", "write_file".'),
    sideEffect: z.enum(SIDE_EFFECTS).or(z.string()).default('read').describe('Side effect; unknown values are treated as "out_of_workspace".'),
    permission: z.enum(PERMISSIONS).or(z.string()).optional().describe('Tool safety metadata: allow, prompt (default) or deny.'),
    permissionGranted: z.boolean().optional().describe('The caller already holds an explicit approval for this call.'),
    permissionMode: z.enum(PERMISSION_MODES).or(z.string()).optional().describe('auto (default), ask or unsafe.'),
    args: z.record(z.string(), z.unknown()).optional().describe('Tool arguments: command/cmd/script/shell, path keys, url, patch, sandbox_permissions.'),
    reason: z.string().optional().describe('The tool\'s own reason text.'),
  })
  .strict()
  .describe('A tool request.');
/** A tool request as callers pass it (before normalization). */
export type Request = z.input<typeof RequestSchema>;

/** Risk of a request: the highest level over its categories. */
export const RiskSchema = z
  .object({
    level: z.enum(RISK_LEVELS).describe('low < medium < high < critical.'),
    categories: z.array(z.string()).describe('Sorted risk categories, e.g. "shell", "network", "destructive".'),
    reason: z.string().describe('"<level> risk: <cat1>, <cat2>" or the level alone.'),
  })
  .describe('Risk classification.');
/** Risk classification. */
export type RiskInfo = z.infer<typeof RiskSchema>;

/** Structured reason a request was blocked or needs approval. */
export const BlockSchema = z
  .object({
    code: z.enum(BLOCK_CODES).describe('Block code.'),
    toolName: z.string().optional().describe('Tool the block is about.'),
    action: z.enum(['deny', 'prompt']).describe('deny, or prompt for a recoverable block.'),
    risk: RiskSchema,
    path: z.string().optional().describe('The path at fault, as given.'),
    reason: z.string().describe('Human-readable reason.'),
    recoverable: z.boolean().describe('Whether an approval can lift the block.'),
  })
  .describe('Sandbox block.');
/** Sandbox block. */
export type Block = z.infer<typeof BlockSchema>;

/** A persistent or session grant. */
export const GrantSchema = z
  .object({
    toolName: z.string().regex(TOOL_NAME_PATTERN).describe('Tool the grant applies to.'),
    scope: z.string().optional().describe('Absolute path, lower-case host, or absent for tool-wide.'),
    scopeKind: z.enum(['', 'file', 'dir', 'host']).optional().describe('file, dir, host, or absent/empty for tool-wide.'),
    decision: z.enum(['allow', 'deny']).describe('allow or deny.'),
    approvedAt: z.string().describe('RFC 3339 UTC time of approval.'),
    reason: z.string().optional().describe('Why it was granted (secrets redacted).'),
    session: z.boolean().optional().describe('True for in-memory session grants.'),
  })
  .describe('Sandbox grant.');
/** Sandbox grant. */
export type Grant = z.infer<typeof GrantSchema>;

/** An approved command prefix: matching commands are not asked about again, and still run sandboxed. */
export const CommandPrefixGrantSchema = z
  .object({
    toolName: z.string().regex(TOOL_NAME_PATTERN).describe('Shell tool the prefix applies to.'),
    prefix: z.array(z.string().min(1)).min(1).describe('argv prefix, e.g. ["cargo", "build"].'),
    approvedAt: z.string().optional().describe('RFC 3339 UTC time of approval.'),
    reason: z.string().optional().describe('Why it was approved.'),
    session: z.boolean().optional().describe('True for in-memory session prefixes.'),
  })
  .describe('Command-prefix grant.');
/** Command-prefix grant. */
export type CommandPrefixGrant = z.infer<typeof CommandPrefixGrantSchema>;

/**
 * A network or destructive command approved for the session or always: it covers exactly this
 * command text (trimmed) with at most these risks, never a wider prefix, and still runs sandboxed.
 */
export const ApprovedCommandSchema = z
  .object({
    toolName: z.string().regex(TOOL_NAME_PATTERN).describe('Shell tool the approval applies to.'),
    command: z.string().min(1).describe('The exact command text that was approved (trimmed).'),
    risks: z.array(z.enum(['network', 'destructive'])).min(1).describe('The risks the approval covers.'),
    approvedAt: z.string().optional().describe('RFC 3339 UTC time of approval.'),
    session: z.boolean().optional().describe('True for in-memory session approvals.'),
  })
  .describe('Approval of one exact risky command.');
/** Approval of one exact risky command. */
export type ApprovedCommand = z.infer<typeof ApprovedCommandSchema>;

/** Record of the last migration of the grants file. */
export const GrantsMigrationSchema = z
  .object({
    fromSchemaVersion: z.number().int().describe('Schema version migrated from.'),
    fromPolicyVersion: z.number().int().optional().describe('Policy version migrated from, for policy invalidations.'),
    backupPath: z.string().describe('Where the original bytes were kept.'),
    migrated: z.number().int().describe('Entries kept.'),
    invalidated: z.number().int().describe('Entries dropped.'),
    noticePending: z.boolean().optional().describe('The one-time notice has not been shown yet.'),
  })
  .describe('Migration record.');
/** Migration record. */
export type GrantsMigration = z.infer<typeof GrantsMigrationSchema>;

/** The grants file, schema 3 / policy version 2. */
export const GrantsFileSchema = z
  .object({
    schemaVersion: z.literal(3).describe('Grants file schema version.'),
    policyVersion: z.number().int().describe('Policy version the grants were approved under (current: 2).'),
    grants: z.record(z.string(), z.array(GrantSchema)).describe('Tool name → grants.'),
    commandPrefixes: z.record(z.string(), z.array(CommandPrefixGrantSchema)).optional().describe('Tool name → command prefixes.'),
    approvedCommands: z.record(z.string(), z.array(ApprovedCommandSchema)).optional().describe('Tool name → exact network/destructive commands approved always.'),
    migration: GrantsMigrationSchema.optional(),
  })
  .describe('Sandbox grants file (schema 3).');
/** The grants file (schema 3). */
export type GrantsFile = z.infer<typeof GrantsFileSchema>;

/** Legacy grants file, schema 1: one grant per tool. Read and migrated, never written. */
export const GrantsFileV1Schema = z
  .object({
    schemaVersion: z.literal(1).describe('Legacy schema 1.'),
    grants: z.record(z.string(), GrantSchema.partial({ toolName: true })).describe('Tool name → one grant.'),
  })
  .describe('Legacy grants file (schema 1).');
/** Legacy grants file (schema 1). */
export type GrantsFileV1 = z.infer<typeof GrantsFileV1Schema>;

/** Legacy grants file, schema 2: arrays per tool, no policy version. Read and migrated, never written. */
export const GrantsFileV2Schema = z
  .object({
    schemaVersion: z.literal(2).describe('Legacy schema 2.'),
    grants: z.record(z.string(), z.array(GrantSchema.partial({ toolName: true }))).describe('Tool name → grants.'),
    commandPrefixes: z.record(z.string(), z.array(CommandPrefixGrantSchema.partial({ toolName: true }))).optional().describe('Tool name → prefixes.'),
  })
  .describe('Legacy grants file (schema 2).');
/** Legacy grants file (schema 2). */
export type GrantsFileV2 = z.infer<typeof GrantsFileV2Schema>;

/** The result of one evaluation. */
export const DecisionSchema = z
  .object({
    action: z.enum(ACTIONS).describe('allow, prompt or deny.'),
    reason: z.string().optional().describe('Why.'),
    risk: RiskSchema,
    grantMatched: z.boolean().optional().describe('A persistent or session grant or command prefix decided it.'),
    grant: GrantSchema.optional().describe('The matched grant.'),
    commandPrefix: z.array(z.string()).optional().describe('The matched command prefix (the command still runs sandboxed).'),
    approvedRisks: z.array(z.string()).optional().describe('Risks (network, destructive) an earlier session/always approval of this exact command covered; network ones run with network allowed.'),
    block: BlockSchema.optional(),
    autoAllowed: z.boolean().optional().describe('Allowed without a prompt: workspace write or active native sandbox.'),
  })
  .describe('Engine decision.');
/** Engine decision. */
export type Decision = z.infer<typeof DecisionSchema>;

const fsPathEntry = z.union([
  z.string(),
  z
    .object({
      kind: z.string().optional().describe('"path" (other kinds are ignored).'),
      type: z.string().optional().describe('Alias of kind.'),
      path: z.string().optional().describe('The path.'),
      pattern: z.string().optional().describe('Accepted, unused.'),
    })
    .describe('Structured path entry.'),
]);

const fileSystemRequest = z
  .object({
    read: z.array(z.string()).optional().describe('Paths to read (widened to their directory).'),
    write: z.array(z.string()).optional().describe('Paths to write (widened to their directory).'),
    deny_read: z.array(z.string()).optional().describe('Paths to deny reading.'),
    denyRead: z.array(z.string()).optional().describe('Alias of deny_read.'),
    glob_scan_max_depth: z.number().optional().describe('Accepted, unused.'),
    entries: z
      .array(z.object({ path: fsPathEntry, access: z.enum(['read', 'write', 'deny', 'none']).describe('Access mode; none = deny.') }))
      .optional()
      .describe('Structured entries.'),
  })
  .describe('File-system request.');

/** Capabilities requested through request_permissions or an approval. */
export const RequestPermissionProfileSchema = z
  .object({
    network: z.object({ enabled: z.boolean().describe('Request shell network access.') }).optional().describe('Network request.'),
    file_system: fileSystemRequest.optional(),
    fileSystem: fileSystemRequest.optional().describe('Alias of file_system.'),
  })
  .describe('Requested permission profile.');
/** Requested permission profile. */
export type RequestPermissionProfile = z.infer<typeof RequestPermissionProfileSchema>;

const positiveCount = (what: string) => z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().describe(`${what} (a positive integer)`);
// A byte size: a positive integer, or a string with a K, M, G or T suffix ("4G").
const byteSize = (what: string) =>
  z
    .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^\d+[KMGT]?$/i, 'must be bytes, or a size such as "512M" or "4G"')])
    .optional()
    .describe(`${what} (bytes, or a string with K, M, G or T)`);

/** The `limits` object of the sandbox config: the same caps as the API's `limits` and the --limit-* flags. */
export const ConfigLimitsSchema = z
  .object({
    processes: positiveCount('processes and threads (default 4096)'),
    tmpBytes: byteSize('size of the private /tmp (default 1G)'),
    shmBytes: byteSize('size of the private /dev/shm (default 256M)'),
    cpuSeconds: positiveCount('CPU seconds (default: none)'),
    memoryBytes: byteSize('heap and private memory (default: none)'),
    fileSizeBytes: byteSize('largest file written (default: none)'),
    openFiles: positiveCount('open file descriptors (default: none)'),
  })
  .strict();

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

/** The `sandbox` object of the user or project config file. Unknown keys are errors. */
export const SandboxConfigSchema = z
  .object({
    enabled: z.boolean().optional().describe('false disables the sandbox (user config only; a project config may not).'),
    network: z
      .string()
      .optional()
      .describe('Shell network egress: "allow" or "deny" (any other value is "deny", with a warning); a project config may only set "deny".')
      .meta({ examples: ['deny', 'allow'] }),
    additionalWriteRoots: z.array(z.string().min(1)).optional().describe('Extra existing directories commands may write (user config only).'),
    blockUnixSockets: z.boolean().optional().describe('Block creating Unix sockets (can only be turned on).'),
    monitorDenials: z.boolean().optional().describe('macOS: report sandbox denials (can only be turned on).'),
    denyRead: z.array(z.string().min(1)).optional().describe('Extra paths commands must not read (~ is expanded).'),
    denyWrite: z.array(z.string().min(1)).optional().describe('Paths commands must not write, even inside write roots.'),
    env: z
      .object({ pass: z.array(envName).optional().describe('Sensitive variables to let through on purpose.') })
      .strict()
      .optional()
      .describe('Environment handling.'),
    limits: ConfigLimitsSchema.optional().describe('Resource caps of every run (Linux); a project config may only lower them.'),
  })
  .strict()
  .describe('zero-sandbox settings (the "sandbox" key of Zero\'s config.json).');
/** The `sandbox` config object. */
export type SandboxConfig = z.infer<typeof SandboxConfigSchema>;

/** A config file: only the `sandbox` key is ours; other keys belong to Zero and pass through. */
export const ConfigFileSchema = z
  .object({ sandbox: SandboxConfigSchema.optional() })
  .passthrough()
  .describe('Zero config.json (user: $XDG_CONFIG_HOME/zero/config.json; project: <workspace>/.zero/config.json).');
/** A config file. */
export type ConfigFile = z.infer<typeof ConfigFileSchema>;
