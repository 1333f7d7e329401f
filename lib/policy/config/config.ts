// SPDX-License-Identifier: MIT
// Loads the `sandbox` object of the user and project config files. Strict: broken JSON, an unknown
// key or a wrong type is a config_invalid error naming the file and the JSON path. zod is imported
// only when a config file exists, so starting without config stays cheap.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ResourceLimits } from '../../backend/types.js';
import { SandboxError } from '../../errors.js';
import { DEFAULT_PROCESSES, DEFAULT_SHM_BYTES, DEFAULT_TMP_BYTES } from '../../sandbox/default-limits.js';
import type { SandboxConfig } from '../schema.js';
import { normalizeWriteRoot } from '../paths/scope.js';
import { userSettingsDir } from './settings-dir.js';

/** Where the config files are; `null` skips one. */
export interface ConfigPaths {
  user?: string | null;
  project?: string | null;
}

/** What the config files contribute. */
export interface LoadedConfig {
  /** Policy fields set by config (only those present). */
  policy: {
    mode?: 'enforce' | 'disabled';
    network?: 'allow' | 'deny';
    blockUnixSockets?: boolean;
    monitorDenials?: boolean;
    denyRead?: string[];
    denyWrite?: string[];
  };
  /** Extra write roots (user config), resolved and checked. */
  extraWriteRoots: string[];
  /** Sensitive environment variables to pass through on purpose (user config). */
  envPass: string[];
  /** Resource caps (`limits`): the user config's, lowered by the project config's. */
  limits: ResourceLimits;
  /** Config files that exist and were read. */
  files: string[];
  /** Settings a project config may not loosen, reported instead of applied. */
  warnings: string[];
}

/** `$XDG_CONFIG_HOME/zero/config.json` (or `~/.config/zero/config.json`) and `<workspace>/.zero/config.json`. */
export function resolveConfigPaths(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): { user: string; project: string | null } {
  const user = join(userSettingsDir(env), 'config.json');
  return { user, project: workspaceRoot === '' ? null : join(workspaceRoot, '.zero', 'config.json') };
}

function configError(file: string, path: string, message: string): SandboxError {
  return new SandboxError('config_invalid', `${file}: ${path === '' ? '' : `${path}: `}${message}`, { path: file });
}

function readJson(file: string): unknown | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw configError(file, '', `cannot read the file (${(error as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw configError(file, '', `not valid JSON (${(error as Error).message})`);
  }
}

function jsonPath(segments: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

async function validate(file: string, data: unknown): Promise<SandboxConfig | undefined> {
  const { ConfigFileSchema } = await import('../schema.js');
  const result = ConfigFileSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0] ?? '';
      throw configError(file, jsonPath([...issue.path, key]), 'unknown key');
    }
    throw configError(file, jsonPath(issue.path), issue.message);
  }
  return result.data.sandbox;
}

/** Reads and merges the config files. The project file may only tighten the user settings. */
export async function loadSandboxConfig(paths: ConfigPaths): Promise<LoadedConfig> {
  const loaded: LoadedConfig = { policy: {}, extraWriteRoots: [], envPass: [], limits: {}, files: [], warnings: [] };
  const sources: Array<[string | null | undefined, typeof applyUser]> = [
    [paths.user, applyUser],
    [paths.project, applyProject],
  ];
  for (const [file, apply] of sources) {
    if (!file) continue;
    const data = readJson(file);
    if (data === undefined) continue;
    loaded.files.push(file);
    const sandbox = await validate(file, data);
    if (sandbox !== undefined) apply(file, sandbox, loaded);
  }
  return loaded;
}

/**
 * A config file's network mode. Network is binary: a value other than "allow" or "deny" (the
 * Go Zero CLI's retired "scoped" or "proxy", a typo) is "deny", the closed side, with a warning
 * naming the file, rather than an error that would stop every run over a stale key.
 */
function configNetwork(file: string, value: string | undefined, loaded: LoadedConfig): 'allow' | 'deny' | undefined {
  if (value === undefined) return undefined;
  const mode = value.trim().toLowerCase();
  if (mode === 'allow' || mode === 'deny') return mode;
  loaded.warnings.push(`${file}: sandbox.network: ${JSON.stringify(value)} is neither "allow" nor "deny"; network is denied`);
  return 'deny';
}

function applyUser(file: string, sandbox: SandboxConfig, loaded: LoadedConfig): void {
  if (sandbox.enabled === false) loaded.policy.mode = 'disabled';
  if (sandbox.enabled === true) loaded.policy.mode = 'enforce';
  const network = configNetwork(file, sandbox.network, loaded);
  if (network !== undefined) loaded.policy.network = network;
  if (sandbox.blockUnixSockets === true) loaded.policy.blockUnixSockets = true;
  if (sandbox.monitorDenials === true) loaded.policy.monitorDenials = true;
  (sandbox.additionalWriteRoots ?? []).forEach((root, i) => {
    try {
      loaded.extraWriteRoots.push(normalizeWriteRoot(root, 'additional write root'));
    } catch (error) {
      // A write root refused for what it is on disk (missing, reached through a symlink, handing
      // the host over) is the same refusal as --allow-write gives: invalid_argument (CLI exit 2),
      // still naming the file and the key.
      const message = `${file}: sandbox.additionalWriteRoots[${i}]: ${(error as Error).message}`;
      if (error instanceof SandboxError && error.code === 'invalid_argument') throw new SandboxError('invalid_argument', message, { path: error.path ?? root });
      throw configError(file, `sandbox.additionalWriteRoots[${i}]`, (error as Error).message);
    }
  });
  if (sandbox.denyRead) loaded.policy.denyRead = [...sandbox.denyRead];
  if (sandbox.denyWrite) loaded.policy.denyWrite = [...sandbox.denyWrite];
  if (sandbox.env?.pass) loaded.envPass.push(...sandbox.env.pass);
  Object.assign(loaded.limits, configLimits(sandbox.limits));
}

const SIZE_UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** The config's `limits` as numbers (sizes such as "4G" in bytes; the schema checked their form). */
function configLimits(limits: SandboxConfig['limits']): ResourceLimits {
  const out: ResourceLimits = {};
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (value === undefined) continue;
    const match = /^(\d+)([KMGT]?)$/i.exec(String(value)) as RegExpExecArray;
    out[key as keyof ResourceLimits] = Number(match[1]) * (SIZE_UNITS[(match[2] as string).toUpperCase()] as number);
  }
  return out;
}

// The caps every run has without config; a project value above these would loosen them.
const DEFAULT_CAPS: ResourceLimits = { processes: DEFAULT_PROCESSES, tmpBytes: DEFAULT_TMP_BYTES, shmBytes: DEFAULT_SHM_BYTES };

function applyProject(file: string, sandbox: SandboxConfig, loaded: LoadedConfig): void {
  const ignored = (path: string, what: string) =>
    loaded.warnings.push(`${file}: ${path}: ignored; a project config may only tighten the sandbox (${what})`);
  if (sandbox.enabled === false) ignored('sandbox.enabled', 'it cannot disable it');
  const network = configNetwork(file, sandbox.network, loaded);
  if (network === 'allow') ignored('sandbox.network', 'it cannot allow network access');
  if (network === 'deny') loaded.policy.network = 'deny';
  if (sandbox.additionalWriteRoots !== undefined && sandbox.additionalWriteRoots.length > 0) {
    ignored('sandbox.additionalWriteRoots', 'it cannot add write roots');
  }
  if (sandbox.env?.pass !== undefined && sandbox.env.pass.length > 0) ignored('sandbox.env.pass', 'it cannot let secrets through');
  if (sandbox.blockUnixSockets === true) loaded.policy.blockUnixSockets = true;
  if (sandbox.monitorDenials === true) loaded.policy.monitorDenials = true;
  if (sandbox.denyRead) loaded.policy.denyRead = [...(loaded.policy.denyRead ?? []), ...sandbox.denyRead];
  if (sandbox.denyWrite) loaded.policy.denyWrite = [...(loaded.policy.denyWrite ?? []), ...sandbox.denyWrite];
  for (const [key, value] of Object.entries(configLimits(sandbox.limits)) as Array<[keyof ResourceLimits, number]>) {
    const current = loaded.limits[key] ?? DEFAULT_CAPS[key];
    if (current !== undefined && value > current) ignored(`sandbox.limits.${key}`, `it cannot raise a cap above ${current}`);
    else loaded.limits[key] = value;
  }
}
