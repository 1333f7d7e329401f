// SPDX-License-Identifier: MIT
// Turns a SandboxPlan into the flat spec native/binding/args.cc reads: mount operations, the
// Landlock ruleset, the seccomp program and resource limits. Reads the host only to learn which
// paths exist; every decision is made by the pure builders it calls.
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { SandboxError } from '../../errors.js';
import type { HostFacts } from '../../host-facts.js';
import type { SandboxPlan } from '../types.js';
import { buildLinuxLimits, LIMIT_RLIMITS } from '../../sandbox/default-limits.js';
import { listDirEntries } from '../../dir-listing.js';
import { buildLandlockPlan, type RootEntry } from './landlock.js';
import { buildMountPlan, PROC_READONLY, type HostView, type MountOp } from './mounts.js';
import { buildSeccompWords, seccompArchFor } from './seccomp.js';
import { hardLimit } from '../../process-limits.js';

/** The spec object native spawn() takes on Linux (mirrors native/binding/args.cc). */
export interface LinuxNativeSpec {
  argv: string[];
  env: readonly string[];
  cwd: string;
  stdio: [StdioMode, StdioMode, StdioMode];
  linux: {
    initPath: string;
    newNetwork: boolean;
    mounts: MountOp[];
    landlockAbi: number;
    landlockHandledFs: number;
    landlockScoped: number;
    landlockRules: Array<{ path: string; access: number; afterMounts: boolean }>;
    seccomp: BigUint64Array;
    rlimits: Array<{ resource: number; soft: number; hard: number }>;
    /** A pids cgroup's cgroup.procs descriptor the first process joins (root callers' process limit). */
    cgroupProcsFd?: number;
    /** The sandbox PID namespace's pid_max (a root caller's process limit without a pids cgroup). */
    pidMax?: number;
  };
}

/** 'pipe': a new pipe back to us; 'ignore': /dev/null; a number: one of our descriptors. */
/**
 * How a stream is wired: a pipe exposed to JavaScript, /dev/null, one of our descriptors, output
 * read by the addon and delivered with the exit ('capture', stdout/stderr), or a small input
 * (stdin, at most one page) written before the command starts.
 */
export type StdioMode = 'pipe' | 'ignore' | 'capture' | Uint8Array | number;

/**
 * The rlimits for a plan. A root caller's process limit is not an rlimit (the kernel exempts root
 * from RLIMIT_NPROC): `processesByCgroup` says a pids cgroup or the PID namespace's pid_max
 * enforces it instead; without either it refuses. Each is at most the caller's hard limit
 * (`hardOf`): the sandbox's first process cannot raise one (it has no capability outside its own
 * user namespace), and a cap above it, the default process cap included, failed every start. The
 * caller's own limit binds the command anyway, so the cap given is never above what was asked.
 */
export function buildRlimits(limits: SandboxPlan['limits'], isRoot: boolean, processesByCgroup = false, hardOf: (resource: number) => number = () => Number.POSITIVE_INFINITY): LinuxNativeSpec['linux']['rlimits'] {
  const out: LinuxNativeSpec['linux']['rlimits'] = [];
  const add = (resource: number, asked: number | undefined) => {
    if (asked === undefined) return;
    const value = Math.min(asked, hardOf(resource));
    out.push({ resource, soft: value, hard: value });
  };
  add(LIMIT_RLIMITS.cpuSeconds, limits.cpuSeconds);
  // RLIMIT_DATA (heap and private mappings) rather than RLIMIT_AS: runtimes such as V8 reserve
  // far more address space than they use, and would not start under an address-space cap.
  add(LIMIT_RLIMITS.memoryBytes, limits.memoryBytes);
  add(LIMIT_RLIMITS.fileSizeBytes, limits.fileSizeBytes);
  add(LIMIT_RLIMITS.openFiles, limits.openFiles);
  if (limits.processes !== undefined && !processesByCgroup) {
    if (isRoot) {
      throw new SandboxError(
        'sandbox_unavailable',
        'limits.processes (--limit-processes) cannot be enforced for a root caller here: the kernel exempts root from RLIMIT_NPROC, no writable pids cgroup was found, and the PID namespace cap needs Linux 6.14 or later (and at least 300 processes). Run as an ordinary user, raise the limit or drop it.',
        { layer: 'limits' },
      );
    }
    add(LIMIT_RLIMITS.processes, limits.processes);
  }
  return out;
}

/**
 * The limits applied at spawn: the defaults filled in, except the default process cap for a root
 * caller with neither a pids cgroup nor a per-namespace pid_max (the kernel exempts root from
 * RLIMIT_NPROC; the run reports it in limitsNotEnforced). A process limit the caller set is kept,
 * and refused in that case (buildRlimits).
 */
function spawnLimits(asked: SandboxPlan['limits'], limits: SandboxPlan['limits'], context: LinuxSpecContext): SandboxPlan['limits'] {
  if (asked.processes !== undefined || !context.isRoot || processesEnforcedElsewhere(context)) return limits;
  const { processes: _default, ...rest } = limits;
  return rest;
}

/** True when a root caller's process limit is a pids cgroup or a PID namespace pid_max. */
function processesEnforcedElsewhere(context: LinuxSpecContext): boolean {
  return context.pidsCgroup === true || context.pidMax !== undefined;
}

let rootEntries: RootEntry[] | undefined;

/** The top-level entries of `/` (followed through symlinks), read once per process. */
export function hostRootEntries(): RootEntry[] {
  if (rootEntries === undefined) {
    rootEntries = readdirSync('/').map((name) => {
      let directory = false;
      let target: string | undefined;
      try {
        directory = statSync(join('/', name)).isDirectory();
        if (lstatSync(join('/', name)).isSymbolicLink()) target = realpathSync(join('/', name));
      } catch {
        directory = false;
      }
      return target === undefined ? { name, directory } : { name, directory, target };
    });
  }
  return rootEntries;
}

/** Lists a directory for the read tree (names and kinds, symlinks not followed). */
export const listTreeDir = listDirEntries;

export const hostView: HostView = {
  kind(path) {
    let st;
    try {
      st = statSync(path, { throwIfNoEntry: false });
    } catch {
      return 'missing'; // ENOTDIR (a path through a file, such as a worktree's .git file), EACCES, ...
    }
    if (st === undefined) return 'missing';
    return st.isDirectory() ? 'dir' : 'file';
  },
  procReadonly: PROC_READONLY.filter((path) => existsSync(path)),
  files: fileNames,
};

function fileNames(path: string): string[] {
  return listDirEntries(path)?.filter((entry) => entry.kind === 'file').map((entry) => entry.name) ?? [];
}

/** The host as one call's facts show it (each path looked up once per call; see host-facts.ts). */
export function hostViewOf(facts: HostFacts): HostView {
  return {
    kind(path) {
      const looked = facts.lookedKind(path);
      if (looked !== undefined) return looked;
      let st;
      try {
        st = facts.stat(path);
      } catch {
        return 'missing'; // ENOTDIR (a path through a file, such as a worktree's .git file), EACCES, ...
      }
      if (st === undefined) return 'missing';
      return st.isDirectory() ? 'dir' : 'file';
    },
    procReadonly: hostView.procReadonly,
    files: fileNames,
    listedIn: (dir) => facts.listedIn(dir),
  };
}

export interface LinuxSpecContext {
  landlockAbi: number;
  isRoot: boolean;
  /**
   * A pids cgroup enforces limits.processes: the sandbox's first process joins it (its cgroup.procs
   * descriptor goes into the native spec at the spawn, `linux.cgroupProcsFd`).
   */
  pidsCgroup?: boolean;
  /** Else the pid_max of the sandbox's PID namespace that enforces it (see pidNamespaceMax). */
  pidMax?: number;
  arch: string;
  bindingPath: string;
}

/** Where the init helper lives: next to the loaded .node file. */
export function initHelperPath(bindingPath: string): string {
  return join(dirname(bindingPath), 'zero_sandbox_init');
}

export function buildLinuxSpec(
  plan: SandboxPlan,
  stdio: [StdioMode, StdioMode, StdioMode],
  context: LinuxSpecContext,
  host: HostView = hostView,
  entries: RootEntry[] = hostRootEntries(),
): LinuxNativeSpec {
  return launchSpec(plan, stdio, buildLinuxSandbox(plan, context, host, entries));
}

/** The last environment made into `NAME=value` strings: it, its names and values in order, and the strings (frozen). */
let lastEnv: { env: object; names: string[]; values: string[]; strings: readonly string[] } | undefined;

/**
 * `plan.env` as `NAME=value` strings in its order. A run's environment is the last run's frozen
 * object or a new one, nearly always of the same variables: the strings made for the last one are
 * handed out again while it is the same frozen object, or every name and value is the same, in the
 * same order (compared without allocating; a burst's runs made ~60 strings and pairs each, about
 * 11 KB of the young generation per run).
 */
export function envStrings(env: Readonly<Record<string, string>>): readonly string[] {
  const last = lastEnv;
  // A frozen environment (command-env.ts keeps one while its inputs stay the same) cannot have
  // changed since its strings were made.
  if (last !== undefined && last.env === env && Object.isFrozen(env)) return last.strings;
  if (last !== undefined) {
    let i = 0;
    let same = true;
    for (const name in env) {
      if (name !== last.names[i] || env[name] !== last.values[i]) {
        same = false;
        break;
      }
      i++;
    }
    if (same && i === last.names.length) return last.strings;
  }
  const names = Object.keys(env);
  const values = names.map((name) => env[name] as string);
  const strings = Object.freeze(names.map((name, i) => `${name}=${values[i]}`));
  lastEnv = { env, names, values, strings };
  return strings;
}

/** A spec from the plan's launch fields (argv, env, cwd), the stdio and the sandbox itself. */
export function launchSpec(plan: Pick<SandboxPlan, 'argv' | 'env' | 'cwd'>, stdio: [StdioMode, StdioMode, StdioMode], linux: LinuxNativeSpec['linux']): LinuxNativeSpec {
  return { argv: plan.argv, env: envStrings(plan.env), cwd: plan.cwd, stdio, linux };
}

/** The plan fields the sandbox itself (mounts, Landlock, seccomp, limits) is built from. */
export type SandboxFields = Pick<SandboxPlan, 'writeRoots' | 'denyRead' | 'denyWrite' | 'denyReadTree' | 'network' | 'blockUnixSockets' | 'limits'>;

/** The sandbox of a plan: everything of the spec but argv, env, cwd and stdio. */
export function buildLinuxSandbox(plan: SandboxFields, context: LinuxSpecContext, host: HostView = hostView, entries: RootEntry[] = hostRootEntries()): LinuxNativeSpec['linux'] {
  const arch = seccompArchFor(context.arch);
  if (arch === undefined) {
    throw new SandboxError('sandbox_unavailable', `no seccomp filter is defined for the ${context.arch} architecture; refusing to run unfiltered`, { layer: 'seccomp' });
  }
  const limits = buildLinuxLimits(plan.limits);
  const mounts = buildMountPlan(plan, host, limits);
  const readTree = plan.denyReadTree === undefined ? undefined : { ...plan.denyReadTree, list: listTreeDir };
  const landlock = buildLandlockPlan(plan, { abi: context.landlockAbi, rootEntries: entries, privateTmp: mounts.privateTmp, separateRoots: mounts.separateRoots, ...(readTree === undefined ? {} : { readTree }) });
  const seccomp = buildSeccompWords({ arch, network: plan.network, blockUnixSockets: plan.blockUnixSockets });
  return {
    initPath: initHelperPath(context.bindingPath),
    newNetwork: plan.network === 'deny',
    mounts: mounts.ops,
    landlockAbi: landlock.abi,
    landlockHandledFs: landlock.handledFs,
    landlockScoped: landlock.scoped,
    landlockRules: landlock.rules,
    seccomp,
    rlimits: buildRlimits(spawnLimits(plan.limits, limits, context), context.isRoot, processesEnforcedElsewhere(context), hardLimit),
    ...(context.pidMax === undefined ? {} : { pidMax: context.pidMax }),
  };
}
