// SPDX-License-Identifier: MIT
// Pure builder: SandboxPlan → AppContainerSpec (container name, capability SIDs, ACL plan, command
// line, job limits) that native/windows/ applies without deciding anything.
import { createHash } from 'node:crypto';
import { win32 } from 'node:path';

import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { buildWindowsCommandLine } from './command-line.js';
import { buildWindowsReadGrants, type WindowsReadGrantInput } from './read-grants.js';

/** Well-known capability SIDs (winnt.h `SECURITY_CAPABILITY_*`). */
export const CAPABILITY_SIDS = {
  /** internetClient: outbound connections to the internet. */
  internetClient: 'S-1-15-3-1',
  /** privateNetworkClientServer: home and work networks, inbound and outbound. */
  privateNetworkClientServer: 'S-1-15-3-3',
} as const;

/** A capability the container may hold. */
export type AppContainerCapability = keyof typeof CAPABILITY_SIDS;

export type { AclEntry, AclKind } from './acl-entry.js';
import type { AclEntry, AclKind } from './acl-entry.js';

/** Job object settings; the job always kills the whole tree when its handle closes. */
export interface JobLimits {
  /** Always true: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. */
  killOnClose: true;
  /** Committed memory limit for the job in bytes; 0 means none. */
  memoryBytes: number;
  /** Active process limit; 0 means none. */
  processLimit: number;
}

/** Everything native/windows/ needs; field for field the `WindowsSpec` of native/binding/backend.h. */
export interface AppContainerSpec {
  /** Profile name: `zero-sandbox.` + 32 hex digits of SHA-256 of the lower-cased workspace and ACL plan. */
  containerName: string;
  /** Human-readable profile name shown by Windows tools. */
  displayName: string;
  /** Capability names, in SID order; empty for network deny. */
  capabilities: AppContainerCapability[];
  /** The SIDs of `capabilities`; empty for network deny. */
  capabilitySids: string[];
  /** ACL plan, de-duplicated case-insensitively, in application order. */
  aclPlan: AclEntry[];
  /** The full, quoted command line (argv[0] resolved by the caller). */
  commandLine: string;
  /** The working directory. */
  cwd: string;
  /** Environment block entries `KEY=value`, sorted case-insensitively as Windows expects. */
  env: string[];
  job: JobLimits;
}

/** Inputs beyond the plan. */
export interface AppContainerOptions {
  /** The command's private temp directory (TEMP/TMP); gets an allow-write entry. */
  tmpDir: string;
  /**
   * Facts for the read set beyond ALL APPLICATION PACKAGES (read-grants.ts): the user's profile,
   * node.exe's directory, the system directories. Absent: no read grants (tests of the rest).
   */
  readGrants?: Omit<WindowsReadGrantInput, 'roots' | 'path'>;
}

/**
 * The container name for a workspace and its ACL plan (every entry, grants and denies): stable
 * across runs with one policy and case-insensitive, like the paths. The plan is part of the name
 * because ACEs stay on the files between runs: a policy that later narrows allowWrite or allowRead
 * gets a new container SID, which the old ACEs do not name, instead of silently keeping the wider
 * grants; the old container's ACEs are then reverted through the journal (acl-journal.ts).
 */
export function buildContainerName(workspace: string, grantedRoots: readonly string[] = []): string {
  const roots = [...new Set(grantedRoots.map((root) => win32.normalize(root).toLowerCase()))].sort();
  const key = [win32.normalize(workspace).toLowerCase(), ...roots].join('\0');
  const digest = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32);
  return `zero-sandbox.${digest}`;
}

/** Rejects anything that is not an absolute, normalised drive-letter or UNC path. */
function checkWindowsPath(field: string, path: string): void {
  const fail = (why: string): never => {
    throw new SandboxError('invalid_argument', `appcontainer spec: ${field} ${JSON.stringify(path)} ${why}`, { path });
  };
  if (path.includes('\0')) fail('contains a NUL character');
  if (/^[A-Za-z]:[\\/]/.test(path) && win32.normalize(path) !== path && !path.split(/[\\/]/).includes('..')) {
    fail(`is not normalised (expected ${JSON.stringify(win32.normalize(path))})`);
  }
  if (!/^[A-Za-z]:\\/.test(path) && !/^\\\\[^\\?.]+\\[^\\]+/.test(path)) {
    fail('is not an absolute drive-letter or UNC path');
  }
  if (path.split('\\').some((part) => part === '.' || part === '..')) fail('contains . or .. components');
  if (win32.normalize(path) !== path) fail(`is not normalised (expected ${JSON.stringify(win32.normalize(path))})`);
  if (path.length > 3 && path.endsWith('\\') && !isVolumeRoot(path)) fail('ends with a backslash');
}

/** A drive or share root: granting the container rights there would rewrite every ACL below. */
function isVolumeRoot(path: string): boolean {
  return /^[A-Za-z]:\\$/.test(path) || /^\\\\[^\\]+\\[^\\]+\\?$/.test(path);
}

/**
 * A write root on a whole drive or share would put an inheritable allow ACE at its top: the
 * container could write everywhere on it, and applying it rewrites every ACL below. Refused.
 */
function refuseVolumeRoot(field: string, path: string): void {
  if (isVolumeRoot(path)) {
    throw new SandboxError('invalid_argument', `appcontainer spec: ${field} ${JSON.stringify(path)} is a volume root; a write root must be a directory below it (granting the container the whole drive would rewrite every ACL on it)`, { path });
  }
}

/** Lists the entries for one plan, checking each path once. */
function buildAclPlan(plan: SandboxPlan, tmpDir: string, readGrants?: AppContainerOptions['readGrants']): AclEntry[] {
  const entries: AclEntry[] = [];
  const seen = new Set<string>();
  const add = (kind: AclKind, path: string, ifMissing: AclEntry['ifMissing']): void => {
    const key = `${kind}\0${path.toLowerCase()}`;
    if (seen.has(key)) return;
    seen.add(key);
    entries.push({ kind, path, ifMissing });
  };
  // Allows first, denies after: the native side writes deny ACEs ahead of allows in each DACL
  // (canonical order), so a deny below an allowed root always wins.
  plan.readRoots.forEach((root, i) => {
    checkWindowsPath(`readRoots[${i}]`, root);
    // The read-all posture cannot be granted by ACL on a whole volume; reads there are limited to
    // what ALL APPLICATION PACKAGES may read (the system directories). Stricter, never weaker.
    if (!isVolumeRoot(root)) add('allow-read', root, 'fail');
  });
  plan.writeRoots.forEach((w, i) => {
    checkWindowsPath(`writeRoots[${i}].root`, w.root);
    refuseVolumeRoot(`writeRoots[${i}].root`, w.root);
    add('allow-write', w.root, 'fail');
  });
  checkWindowsPath('tmpDir', tmpDir);
  refuseVolumeRoot('tmpDir', tmpDir);
  add('allow-write', tmpDir, 'fail');
  if (readGrants !== undefined) {
    const roots = [...plan.readRoots.filter((r) => !isVolumeRoot(r)), ...plan.writeRoots.map((w) => w.root), tmpDir];
    const path = plan.env.PATH ?? plan.env.Path ?? '';
    for (const e of buildWindowsReadGrants({ ...readGrants, roots, path, denied: plan.denyRead })) add(e.kind, e.path, e.ifMissing);
  }
  plan.writeRoots.forEach((w, i) => {
    w.readOnlySubpaths.forEach((sub, j) => {
      checkWindowsPath(`writeRoots[${i}].readOnlySubpaths[${j}]`, sub);
      if (!sub.toLowerCase().startsWith(`${w.root.toLowerCase()}\\`)) {
        throw new SandboxError('invalid_argument', `appcontainer spec: writeRoots[${i}].readOnlySubpaths[${j}] ${JSON.stringify(sub)} is not inside its root ${JSON.stringify(w.root)}`, { path: sub });
      }
      add('deny-write', sub, 'skip');
    });
    w.protectedNames.forEach((name, j) => {
      if (name === '' || name === '.' || name === '..' || /[\\/:\0]/.test(name)) {
        throw new SandboxError('invalid_argument', `appcontainer spec: writeRoots[${i}].protectedNames[${j}] ${JSON.stringify(name)} is not a single file name`);
      }
      add('deny-write', win32.join(w.root, name), 'skip');
    });
  });
  plan.denyWrite.forEach((path, i) => {
    checkWindowsPath(`denyWrite[${i}]`, path);
    add('deny-write', path, 'fail');
  });
  plan.denyRead.forEach((path, i) => {
    checkWindowsPath(`denyRead[${i}]`, path);
    add('deny-read', path, 'fail');
  });
  // Parents inside a writable tree of every denied or protected path: no delete, no rename.
  const writable = [...plan.writeRoots.map((w) => w.root), tmpDir];
  for (const entry of [...entries]) {
    if (!entry.kind.startsWith('deny')) continue;
    for (const root of writable) {
      const prefix = `${root.toLowerCase()}\\`;
      if (!entry.path.toLowerCase().startsWith(prefix)) continue;
      const parts = entry.path.slice(prefix.length).split('\\').slice(0, -1);
      for (let n = 1; n <= parts.length; n++) add('deny-delete', win32.join(root, ...parts.slice(0, n)), 'skip');
    }
  }
  return entries;
}

/** Windows sorts environment blocks case-insensitively; duplicate names differing in case fail. */
function buildEnvBlock(env: Record<string, string>): string[] {
  const names = Object.keys(env).sort((a, b) => {
    const x = a.toUpperCase();
    const y = b.toUpperCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const upper = new Set<string>();
  for (const name of names) {
    const value = env[name]!;
    if (name === '' || (name.includes('=') && !name.startsWith('=')) || name.includes('\0') || value.includes('\0')) {
      throw new SandboxError('invalid_argument', `appcontainer spec: environment variable ${JSON.stringify(name)} has an invalid name or value`);
    }
    if (upper.has(name.toUpperCase())) {
      throw new SandboxError('invalid_argument', `appcontainer spec: environment variable ${JSON.stringify(name)} is set twice with different case`);
    }
    upper.add(name.toUpperCase());
  }
  return names.map((name) => `${name}=${env[name]!}`);
}

/**
 * Builds the AppContainer spec for one command. Network deny grants no capability; allow grants
 * internetClient and privateNetworkClientServer. Limits a job object cannot enforce (cpu seconds,
 * file size, open files) fail closed with `sandbox_unavailable` naming the limit.
 */
export function buildAppContainerSpec(plan: SandboxPlan, options: AppContainerOptions): AppContainerSpec {
  // CreateProcessW would search for a bare name in node.exe's directory and the caller's current
  // directory before PATH: the caller resolves the program against the command's PATH instead.
  checkWindowsPath('argv[0]', plan.argv[0] ?? '');
  checkWindowsPath('workspace', plan.workspace);
  checkWindowsPath('cwd', plan.cwd);
  if (plan.network !== 'deny' && plan.network !== 'allow') {
    throw new SandboxError('invalid_argument', `appcontainer spec: network ${JSON.stringify(plan.network)} is neither "deny" nor "allow"`);
  }
  for (const name of ['cpuSeconds', 'fileSizeBytes', 'openFiles', 'tmpBytes', 'shmBytes'] as const) {
    if (plan.limits[name] !== undefined) {
      throw new SandboxError('sandbox_unavailable', `appcontainer: the limit ${name} cannot be enforced by a Windows job object; remove it or run on Linux`, { layer: 'job' });
    }
  }
  const positive = (name: 'memoryBytes' | 'processes'): number => {
    const value = plan.limits[name];
    if (value === undefined) return 0;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new SandboxError('invalid_argument', `appcontainer spec: limits.${name} must be a positive integer, got ${String(value)}`);
    }
    return value;
  };
  const capabilities: AppContainerCapability[] =
    plan.network === 'allow' ? ['internetClient', 'privateNetworkClientServer'] : [];
  const base = win32.basename(plan.workspace) || plan.workspace;
  const aclPlan = buildAclPlan(plan, options.tmpDir, options.readGrants);
  // The per-run temp dir is granted too but is not part of the policy (it differs every run).
  const tmp = options.tmpDir.toLowerCase();
  const granted = aclPlan.filter((e) => e.path.toLowerCase() !== tmp && !e.path.toLowerCase().startsWith(`${tmp}\\`)).map((e) => `${e.kind}:${e.path}`);
  return {
    containerName: buildContainerName(plan.workspace, granted),
    displayName: `zero-sandbox: ${base}`.slice(0, 256),
    capabilities,
    capabilitySids: capabilities.map((name) => CAPABILITY_SIDS[name]),
    aclPlan,
    commandLine: buildWindowsCommandLine(plan.argv),
    cwd: plan.cwd,
    env: buildEnvBlock(plan.env),
    job: { killOnClose: true, memoryBytes: positive('memoryBytes'), processLimit: positive('processes') },
  };
}

/**
 * The flat object the addon glue copies field for field into `backend::WindowsSpec`
 * (native/binding/backend.h): strings, string arrays and numbers only.
 */
export interface NativeWindowsSpec {
  /** `container_name`: the AppContainer profile name. */
  containerName: string;
  /** `display_name`: the profile's display name. */
  displayName: string;
  /** `capability_sids`: empty for network deny. */
  capabilitySids: string[];
  /** `command_line`: the full, quoted command line. */
  commandLine: string;
  /**
   * `acl_kinds`; a trailing `?` marks an entry skipped when its path does not exist, a trailing `~`
   * one also skipped when the user may not change its ACL.
   */
  aclKinds: string[];
  /** `acl_paths`, index for index with `aclKinds`. */
  aclPaths: string[];
  /** `acl_redo`: set present entries again (a run of this container stopped while propagating). */
  aclRedo: boolean;
  /** `job_memory_bytes`; 0 means no limit. */
  jobMemoryBytes: number;
  /** `job_process_limit`; 0 means no limit. */
  jobProcessLimit: number;
}

/** Flattens a spec for the native boundary (C++ receives one flat, validated object). */
export function buildNativeWindowsSpec(spec: AppContainerSpec): NativeWindowsSpec {
  return {
    containerName: spec.containerName,
    displayName: spec.displayName,
    capabilitySids: [...spec.capabilitySids],
    commandLine: spec.commandLine,
    aclKinds: spec.aclPlan.map((e) => `${e.kind}${e.ifMissing === 'skip' ? '?' : e.ifMissing === 'best-effort' ? '~' : ''}`),
    aclPaths: spec.aclPlan.map((e) => e.path),
    aclRedo: false,
    jobMemoryBytes: spec.job.memoryBytes,
    jobProcessLimit: spec.job.processLimit,
  };
}
