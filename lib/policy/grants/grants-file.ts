// SPDX-License-Identifier: MIT
// Reading, validating and migrating the grants file content (schema 3, policy version 2; legacy
// schema 1 and 2). Pure and hand-written so the `run` start-up path does not load zod; the zod
// GrantsFileSchema documents the same shape and a unit test keeps the two in agreement.
import { isAbsolute, normalize } from 'node:path';

import { GRANTS_POLICY_VERSION, GRANTS_SCHEMA_VERSION, SHELL_TOOLS, TOOL_NAME_PATTERN } from '../engine/constants.js';
import { APPROVABLE_RISKS } from '../approval/approved-commands.js';
import { normalizeHost } from './grant-match.js';
import { redactString } from '../../redact.js';
import type { ApprovedCommand, CommandPrefixGrant, Grant, GrantsMigration } from '../schema.js';

/** Validates a command prefix (launcher bans etc.); supplied by the shell analyzer. */
export type PrefixValidator = (prefix: readonly string[]) => boolean;

/** The in-memory state of a grants file. */
export interface GrantsState {
  /** Tool → grants. */
  grants: Record<string, Grant[]>;
  /** Tool → command prefixes. */
  commandPrefixes: Record<string, CommandPrefixGrant[]>;
  /** Tool → exact network/destructive commands approved always. */
  approvedCommands: Record<string, ApprovedCommand[]>;
  /** The last migration, kept until its notice was shown. */
  migration?: GrantsMigration;
}

/** What reading a file produced: a current state, or one that must be migrated and rewritten. */
export type ParsedGrants =
  | { kind: 'current'; state: GrantsState }
  | { kind: 'migrate'; state: GrantsState; fromSchemaVersion: number; fromPolicyVersion?: number; backupSuffix: string; migrated: number; invalidated: number };

/** Raised for an unusable file; the store wraps it with the file path. */
export class GrantsFileError extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Empty state. */
export function emptyGrantsState(): GrantsState {
  return { grants: {}, commandPrefixes: {}, approvedCommands: {} };
}

/** Trims and validates a tool key. */
export function normalizeToolName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || !TOOL_NAME_PATTERN.test(name)) {
    throw new GrantsFileError(`invalid tool name ${JSON.stringify(value)} (letters, digits, ".", "_" and "-" only)`);
  }
  return name;
}

/** Validates and normalizes one grant record; throws GrantsFileError naming the field. */
export function normalizeGrantRecord(raw: unknown, toolKey: string, where: string): Grant {
  if (!isRecord(raw)) throw new GrantsFileError(`${where}: grant must be an object`);
  const tool = normalizeToolName(toolKey);
  const rawName = typeof raw.toolName === 'string' ? raw.toolName.trim() : raw.toolName === undefined ? '' : null;
  if (rawName === null) throw new GrantsFileError(`${where}.toolName: must be a string`);
  if (rawName !== '' && rawName !== tool) throw new GrantsFileError(`${where}.toolName: "${rawName}" does not match its key "${tool}"`);
  const decision = typeof raw.decision === 'string' ? raw.decision.trim().toLowerCase() : '';
  if (decision !== 'allow' && decision !== 'deny') throw new GrantsFileError(`${where}.decision: must be "allow" or "deny"`);
  if (typeof raw.approvedAt !== 'string' || raw.approvedAt.trim() === '') {
    throw new GrantsFileError(`${where}.approvedAt: required`);
  }
  if (raw.scope !== undefined && typeof raw.scope !== 'string') throw new GrantsFileError(`${where}.scope: must be a string`);
  if (raw.scopeKind !== undefined && typeof raw.scopeKind !== 'string') throw new GrantsFileError(`${where}.scopeKind: must be a string`);
  if (raw.reason !== undefined && typeof raw.reason !== 'string') throw new GrantsFileError(`${where}.reason: must be a string`);
  const kind = ((raw.scopeKind as string | undefined) ?? '').trim().toLowerCase();
  if (kind !== '' && kind !== 'file' && kind !== 'dir' && kind !== 'host') {
    throw new GrantsFileError(`${where}.scopeKind: must be "file", "dir", "host" or empty`);
  }
  let scope = ((raw.scope as string | undefined) ?? '').trim();
  const grant: Grant = { toolName: tool, decision, approvedAt: raw.approvedAt.trim() };
  if (kind !== '' && scope !== '') {
    if (kind === 'host') {
      scope = normalizeHost(scope);
      if (scope === '') throw new GrantsFileError(`${where}.scope: not a host`);
    } else {
      if (!isAbsolute(scope) && !/^[A-Za-z]:[\\/]/.test(scope) && !scope.startsWith('\\')) {
        throw new GrantsFileError(`${where}.scope: a ${kind} scope must be an absolute path`);
      }
      if (isAbsolute(scope)) scope = normalize(scope);
    }
    grant.scope = scope;
    grant.scopeKind = kind;
  }
  const reason = ((raw.reason as string | undefined) ?? '').trim();
  if (reason !== '') grant.reason = redactString(reason);
  return grant;
}

/** Validates one command-prefix record; throws GrantsFileError. */
export function normalizePrefixRecord(raw: unknown, toolKey: string, where: string, validate: PrefixValidator): CommandPrefixGrant {
  if (!isRecord(raw)) throw new GrantsFileError(`${where}: command prefix must be an object`);
  const tool = normalizeToolName(toolKey);
  const rawName = typeof raw.toolName === 'string' ? raw.toolName.trim() : '';
  if (rawName !== '' && rawName !== tool) throw new GrantsFileError(`${where}.toolName: "${rawName}" does not match its key "${tool}"`);
  if (!Array.isArray(raw.prefix) || raw.prefix.length === 0 || !raw.prefix.every((t) => typeof t === 'string')) {
    throw new GrantsFileError(`${where}.prefix: must be a non-empty array of strings`);
  }
  const prefix = (raw.prefix as string[]).map((token) => token.trim());
  if (!validate(prefix)) throw new GrantsFileError(`${where}.prefix: ${JSON.stringify(prefix)} is not an allowed command prefix`);
  const out: CommandPrefixGrant = { toolName: tool, prefix };
  if (typeof raw.approvedAt === 'string' && raw.approvedAt.trim() !== '') out.approvedAt = raw.approvedAt.trim();
  if (typeof raw.reason === 'string' && raw.reason.trim() !== '') out.reason = redactString(raw.reason.trim());
  return out;
}


/** Validates one approved-command record; throws GrantsFileError naming the field. */
export function normalizeApprovedCommand(raw: unknown, toolKey: string, where: string): ApprovedCommand {
  if (!isRecord(raw)) throw new GrantsFileError(`${where}: must be an object`);
  const tool = normalizeToolName(toolKey);
  const command = typeof raw.command === 'string' ? raw.command.trim() : '';
  if (command === '' || command.includes('\0')) throw new GrantsFileError(`${where}.command: must be a non-empty command text`);
  const risks = raw.risks;
  if (!Array.isArray(risks) || risks.length === 0 || risks.some((r) => typeof r !== 'string' || !(APPROVABLE_RISKS as readonly string[]).includes(r))) {
    throw new GrantsFileError(`${where}.risks: must be a non-empty array of "network" and "destructive"`);
  }
  const out: ApprovedCommand = { toolName: tool, command, risks: [...new Set(risks as ApprovedCommand['risks'])].sort() };
  if (typeof raw.approvedAt === 'string' && raw.approvedAt.trim() !== '') out.approvedAt = raw.approvedAt.trim();
  return out;
}

function readMigration(raw: unknown): GrantsMigration | undefined {
  if (!isRecord(raw)) return undefined;
  if (typeof raw.fromSchemaVersion !== 'number' || typeof raw.backupPath !== 'string') return undefined;
  const out: GrantsMigration = {
    fromSchemaVersion: raw.fromSchemaVersion,
    backupPath: raw.backupPath,
    migrated: typeof raw.migrated === 'number' ? raw.migrated : 0,
    invalidated: typeof raw.invalidated === 'number' ? raw.invalidated : 0,
  };
  if (typeof raw.fromPolicyVersion === 'number') out.fromPolicyVersion = raw.fromPolicyVersion;
  if (raw.noticePending === true) out.noticePending = true;
  return out;
}

function push<T>(map: Record<string, T[]>, key: string, value: T): void {
  (map[key] ??= []).push(value);
}

/** Parses file text. Throws GrantsFileError for anything unusable (the file is then left alone). */
export function parseGrantsText(text: string, validate: PrefixValidator): ParsedGrants {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new GrantsFileError(text.trim() === '' ? 'the file is empty' : `not valid JSON (${(error as Error).message})`);
  }
  if (!isRecord(data)) throw new GrantsFileError('the top level must be a JSON object');
  const version = data.schemaVersion;
  if (version === GRANTS_SCHEMA_VERSION) return parseV3(data, validate);
  if (version === 1 || version === 2) return parseLegacy(data, version, validate);
  if (version === undefined) throw new GrantsFileError('schemaVersion is missing');
  throw new GrantsFileError(
    `unsupported schemaVersion ${JSON.stringify(version)}${typeof version === 'number' && version > GRANTS_SCHEMA_VERSION ? ' (written by a newer version; upgrade zero-sandbox)' : ''}`,
  );
}

function parseV3(data: Record<string, unknown>, validate: PrefixValidator): ParsedGrants {
  const grants = data.grants ?? {};
  const prefixes = data.commandPrefixes ?? {};
  if (!isRecord(grants)) throw new GrantsFileError('grants: must be an object');
  if (!isRecord(prefixes)) throw new GrantsFileError('commandPrefixes: must be an object');
  const policyVersion = data.policyVersion;
  if (policyVersion !== undefined && (typeof policyVersion !== 'number' || !Number.isInteger(policyVersion))) {
    throw new GrantsFileError('policyVersion: must be an integer');
  }
  if (policyVersion !== undefined && policyVersion > GRANTS_POLICY_VERSION) {
    throw new GrantsFileError(`unsupported policyVersion ${policyVersion} (written by a newer version; upgrade zero-sandbox)`);
  }
  if (policyVersion !== GRANTS_POLICY_VERSION) return invalidateForPolicy(grants, prefixes, policyVersion ?? 0);
  const state = emptyGrantsState();
  for (const [key, list] of Object.entries(grants)) {
    if (!Array.isArray(list)) throw new GrantsFileError(`grants.${key}: must be an array`);
    const tool = normalizeToolName(key);
    list.forEach((raw, i) => push(state.grants, tool, normalizeGrantRecord(raw, tool, `grants.${key}[${i}]`)));
  }
  for (const [key, list] of Object.entries(prefixes)) {
    if (!Array.isArray(list)) throw new GrantsFileError(`commandPrefixes.${key}: must be an array`);
    const tool = normalizeToolName(key);
    list.forEach((raw, i) => push(state.commandPrefixes, tool, normalizePrefixRecord(raw, tool, `commandPrefixes.${key}[${i}]`, validate)));
  }
  const approved = data.approvedCommands ?? {};
  if (!isRecord(approved)) throw new GrantsFileError('approvedCommands: must be an object');
  for (const [key, list] of Object.entries(approved)) {
    if (!Array.isArray(list)) throw new GrantsFileError(`approvedCommands.${key}: must be an array`);
    const tool = normalizeToolName(key);
    list.forEach((raw, i) => push(state.approvedCommands, tool, normalizeApprovedCommand(raw, tool, `approvedCommands.${key}[${i}]`)));
  }
  const migration = readMigration(data.migration);
  if (migration !== undefined) state.migration = migration;
  return { kind: 'current', state };
}

function invalidateForPolicy(grants: Record<string, unknown>, prefixes: Record<string, unknown>, from: number): ParsedGrants {
  const state = emptyGrantsState();
  let migrated = 0;
  let invalidated = 0;
  for (const [key, list] of Object.entries(grants)) {
    for (const [i, raw] of (Array.isArray(list) ? list : [list]).entries()) {
      try {
        const grant = normalizeGrantRecord(raw, key, `grants.${key}[${i}]`);
        if (grant.decision === 'deny') {
          push(state.grants, grant.toolName, grant);
          migrated++;
          continue;
        }
      } catch {
        // an invalid entry of an outdated file is dropped like an approval
      }
      invalidated++;
    }
  }
  for (const list of Object.values(prefixes)) invalidated += Array.isArray(list) ? list.length : 1;
  return { kind: 'migrate', state, fromSchemaVersion: GRANTS_SCHEMA_VERSION, fromPolicyVersion: from, backupSuffix: `.policy-v${from}.backup`, migrated, invalidated };
}

function parseLegacy(data: Record<string, unknown>, version: 1 | 2, validate: PrefixValidator): ParsedGrants {
  const state = emptyGrantsState();
  let migrated = 0;
  let invalidated = 0;
  const grants = isRecord(data.grants) ? data.grants : {};
  for (const [key, value] of Object.entries(grants)) {
    const list = version === 1 ? [value] : Array.isArray(value) ? value : [];
    if (version === 2 && !Array.isArray(value)) invalidated++;
    for (const [i, raw] of list.entries()) {
      try {
        const grant = normalizeGrantRecord(raw, key, `grants.${key}[${i}]`);
        if (grant.decision === 'allow' && SHELL_TOOLS.has(grant.toolName)) {
          invalidated++;
          continue;
        }
        push(state.grants, grant.toolName, grant);
        migrated++;
      } catch {
        invalidated++;
      }
    }
  }
  const prefixes = version === 2 && isRecord(data.commandPrefixes) ? data.commandPrefixes : {};
  for (const [key, value] of Object.entries(prefixes)) {
    for (const [i, raw] of (Array.isArray(value) ? value : [value]).entries()) {
      try {
        push(state.commandPrefixes, normalizeToolName(key), normalizePrefixRecord(raw, key, `commandPrefixes.${key}[${i}]`, validate));
        migrated++;
      } catch {
        invalidated++;
      }
    }
  }
  return { kind: 'migrate', state, fromSchemaVersion: version, backupSuffix: `.v${version}.backup`, migrated, invalidated };
}

/** Serializes a state as schema 3 / current policy version, pretty-printed with a trailing newline. */
export function serializeGrantsState(state: GrantsState): string {
  const file: Record<string, unknown> = {
    schemaVersion: GRANTS_SCHEMA_VERSION,
    policyVersion: GRANTS_POLICY_VERSION,
    grants: sortedRecord(state.grants),
  };
  const prefixes = Object.fromEntries(Object.entries(state.commandPrefixes).filter(([, list]) => list.length > 0));
  if (Object.keys(prefixes).length > 0) file.commandPrefixes = sortedRecord(prefixes);
  const approved = Object.fromEntries(Object.entries(state.approvedCommands).filter(([, list]) => list.length > 0));
  if (Object.keys(approved).length > 0) file.approvedCommands = sortedRecord(approved);
  if (state.migration !== undefined) file.migration = state.migration;
  return `${JSON.stringify(file, null, 2)}\n`;
}

function sortedRecord<T>(record: Record<string, T[]>): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const key of Object.keys(record).sort()) {
    const list = record[key] as T[];
    if (list.length > 0) out[key] = list;
  }
  return out;
}

/** The one-time notice text after a migration. */
export function buildMigrationNotice(migration: GrantsMigration): string {
  return `sandbox grants updated for policy v${GRANTS_POLICY_VERSION}: migrated ${migration.migrated}, invalidated ${migration.invalidated}; backup: ${migration.backupPath}`;
}
