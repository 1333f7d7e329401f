// SPDX-License-Identifier: MIT
// createEngine(): resolves the workspace, config, grants store, analyzer and backend for an Engine.
import { statSync } from 'node:fs';

import type { BackendInfo } from '../../backend/types.js';
import { SandboxError } from '../../errors.js';
import { loadAnalyzer, type Analyzer } from './analyzer.js';
import { loadSandboxConfig, resolveConfigPaths, type ConfigPaths, type LoadedConfig } from '../config/config.js';
import { normalizeNetworkMode } from './constants.js';
import { Engine } from './engine.js';
import { GrantStore, resolveGrantsPath } from '../grants/grants-store.js';
import { resolveBestEffort } from '../paths/paths.js';
import type { Policy } from '../schema.js';
import { WorkspaceScope } from '../paths/scope.js';

/** The default (the Go Zero CLI's too, so a missing policy means the same in both): enforce, network deny, workspace enforced. */
export const DEFAULT_POLICY: Policy = Object.freeze({ mode: 'enforce', network: 'deny', enforceWorkspace: true }) as Policy;

/** Options of createEngine. */
export interface CreateEngineOptions {
  /** Workspace root (an existing directory); defaults to the process cwd; `null` for none. */
  workspaceRoot?: string | null;
  /** Explicit policy fields; applied on top of config. Validated with PolicySchema. */
  policy?: Partial<Record<keyof Policy, unknown>>;
  /** Config files to read; `false` reads none. Default: the user and project files, unless `policy` is given. */
  configPaths?: ConfigPaths | false;
  /** Grants file; `null` for no persistent store. Default: resolveGrantsPath(env). */
  grantsPath?: string | null;
  /** The backend to reason about; default: derived lazily from probeSync(). */
  backend?: BackendInfo;
  /** Extra write roots (like --add-dir); each must be an existing directory. */
  extraWriteRoots?: string[];
  /** Environment for markers, temp roots and paths (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The shell analyzer to use instead of loading lib/bash lazily (tests; the CLI passes buildAnalyzer over its static imports). */
  analyzer?: Analyzer;
}

/** An engine plus what config contributed. */
export interface EngineWithConfig extends Engine {
  readonly config: LoadedConfig | undefined;
}

async function validatePolicy(input: Partial<Record<keyof Policy, unknown>>): Promise<Partial<Policy>> {
  const { PolicySchema } = await import('../schema.js');
  const fields = { ...input };
  if (fields.mode === '') delete fields.mode; // an empty mode means the default policy, as configs written for the Go Zero CLI expect
  const result = PolicySchema.partial().safeParse(fields);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.map(String).join('.');
    throw new SandboxError('policy_invalid', `invalid policy${where === '' ? '' : ` field ${where}`}: ${issue.message}`);
  }
  const out: Partial<Policy> = {};
  for (const [key, value] of Object.entries(result.data)) if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  if ('network' in input) out.network = normalizeNetworkMode(input.network);
  return out;
}

/** Derives the backend from the measured probe: available when the default policy can be enforced. */
export async function defaultBackendFactory(): Promise<() => BackendInfo> {
  const [{ probeSync }, { selectBackend }] = await Promise.all([import('../../probe.js'), import('../../backend/select.js')]);
  return () => {
    const report = probeSync();
    const info = selectBackend({ platform: report.platform, facts: report.facts, linuxMissing: report.missing });
    if (!report.canEnforceDefaultPolicy) {
      info.available = false;
      info.message ??= report.missing.map((m) => `${m.layer}: ${m.reason}`).join('; ') || 'no native sandbox backend on this platform';
    }
    return info;
  };
}

function checkWorkspace(root: string): string {
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    throw new SandboxError('invalid_argument', `workspace root ${root} does not exist`, { path: root });
  }
  if (!isDir) throw new SandboxError('invalid_argument', `workspace root ${root} is not a directory`, { path: root });
  return resolveBestEffort(root);
}

/** Builds an engine: config (strict), grants store, scope, analyzer and backend. */
export async function createEngine(options: CreateEngineOptions = {}): Promise<EngineWithConfig> {
  const env = options.env ?? process.env;
  const workspaceRoot = options.workspaceRoot === null ? '' : checkWorkspace(options.workspaceRoot ?? process.cwd());
  let config: LoadedConfig | undefined;
  const readConfig = options.configPaths !== false && (options.configPaths !== undefined || options.policy === undefined);
  if (readConfig) {
    const paths = { ...resolveConfigPaths(workspaceRoot, env), ...(options.configPaths || {}) };
    config = await loadSandboxConfig(paths);
  }
  const policy: Policy = { ...DEFAULT_POLICY, ...(config?.policy ?? {}), ...(options.policy ? await validatePolicy(options.policy) : {}) };
  const analyzer = options.analyzer ?? (await loadAnalyzer());
  const grantsPath = options.grantsPath === null ? undefined : (options.grantsPath ?? resolveGrantsPath(env));
  const store = grantsPath === undefined ? undefined : new GrantStore(grantsPath, { validatePrefix: analyzer.validateCommandPrefix });
  const extras = [...(config?.extraWriteRoots ?? []), ...(options.extraWriteRoots ?? [])];
  // process.platform: paths and shell commands are judged with the host OS's rules (case, separators, cmd.exe vs sh).
  const scope = new WorkspaceScope(workspaceRoot, extras, { env, platform: process.platform });
  const backend = options.backend;
  const backendFn = backend !== undefined ? () => backend : await defaultBackendFactory();
  const engine = new Engine({ workspaceRoot, policy, scope, store, analyzer, backend: backendFn, env, platform: process.platform });
  return Object.assign(engine, { config }) as EngineWithConfig;
}
