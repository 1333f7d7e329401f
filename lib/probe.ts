// SPDX-License-Identifier: MIT
// probe(): what this machine can enforce, measured by the native addon trying each layer in a
// short-lived child, then explained here (reasons and fixes are decisions, so they live in TS).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';

import { callNative, callNativeAsync } from './native/load.js';
import { namespaceCountsAboveZero } from './process-limits.js';
import type { NativeFact, NativeProbe } from './native/types.js';
import { selectBackend } from './backend/select.js';
import { backendForPlatform, backendNameFor, type LayerName } from './backend/platform-table.js';
import type { SandboxBackendName } from './backend/types.js';
import type { NetworkProbeResult } from './backend/windows/net-probe.js';

export type { LayerName } from './backend/platform-table.js';

/** Whether one layer can be enforced here, and if not, why and how to fix it. */
export interface LayerStatus {
  available: boolean;
  /** Why the layer is unavailable (absent when available). */
  reason?: string;
  /** What to do about it (absent when available). */
  fix?: string;
  /** errno of the failing attempt, and its symbolic name. */
  errno?: number;
  errnoName?: string;
  /** The call that failed. */
  syscall?: string;
  /** How the answer was obtained. */
  measuredBy: string;
}

/** The name of the native backend this machine would use. */

export interface ProbeReport {
  platform: string;
  arch: string;
  kernelRelease: string;
  isRoot: boolean;
  uid: number;
  /** The backend selected for this platform, or `unavailable`. */
  backend: SandboxBackendName;
  /** Landlock ABI version offered by the kernel (0 when absent). */
  landlockAbi: number;
  layers: Partial<Record<LayerName, LayerStatus>>;
  /** macOS facts; `applicable: false` on other platforms. */
  macos: { applicable: boolean; reason?: string; sandboxExec?: boolean };
  /**
   * Windows facts; `applicable: false` on other platforms. `networkProbe`: the connection tried
   * from inside a container (async `probe()` measures it once per process where the AppContainer
   * layer works; `probeSync()` shows it once measured), else `networkProbeSkipped` says why not.
   */
  windows: { applicable: boolean; reason?: string; networkProbe?: NetworkProbeResult; networkProbeSkipped?: string };
  /** True when every layer the default policy needs is available. */
  canEnforceDefaultPolicy: boolean;
  /** The layers the default policy needs that are missing here. */
  missing: Array<{ layer: LayerName; reason: string; fix: string }>;
  /** Layers switched off by ZERO_SANDBOX_TEST_DISABLE_LAYERS (tests only; they can only refuse). */
  disabledForTesting: LayerName[];
  /** The raw native facts, for diagnostics. */
  facts: Record<string, NativeFact>;
}

/** Layers the default Linux policy (network deny) needs. */
export const LINUX_DEFAULT_LAYERS: readonly LayerName[] = [
  'userns',
  'mountns',
  'pidns',
  'netns',
  'ipcns',
  'utsns',
  'landlock',
  'seccomp',
];

const ERRNO_NAMES = new Map<number, string>(
  Object.entries(constants.errno).map(([name, value]) => [value, name]),
);

export function errnoName(errno: number): string | undefined {
  return ERRNO_NAMES.get(errno);
}

function readSysctl(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function insideContainer(): string | undefined {
  if (existsSync('/.dockerenv')) return 'Docker';
  if (existsSync('/run/.containerenv')) return 'Podman';
  const cgroup = readSysctl('/proc/1/cgroup') ?? '';
  if (/kubepods/.test(cgroup)) return 'Kubernetes';
  if (/docker|containerd|lxc/.test(cgroup)) return 'a container';
  return undefined;
}

/** Explains why user namespaces failed, from the sysctls and container markers we can read. */
function explainUserns(): { reason: string; fix: string } {
  if (readSysctl('/proc/sys/kernel/unprivileged_userns_clone') === '0') {
    return {
      reason: 'unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone=0)',
      fix: 'sudo sysctl -w kernel.unprivileged_userns_clone=1',
    };
  }
  if (readSysctl('/proc/sys/user/max_user_namespaces') === '0') {
    return {
      reason: 'user namespaces are limited to zero (user.max_user_namespaces=0)',
      fix: 'sudo sysctl -w user.max_user_namespaces=15000',
    };
  }
  if (readSysctl('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return {
      reason:
        'AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later)',
      fix:
        'add an AppArmor profile that grants "userns," to node (see /etc/apparmor.d), or run sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0',
    };
  }
  const container = insideContainer();
  if (container !== undefined) {
    return {
      reason: `running inside ${container}, whose seccomp profile or capabilities do not allow new user namespaces`,
      fix: 'run the container with a seccomp profile that allows unshare/clone with CLONE_NEWUSER (for example --security-opt seccomp=unconfined) or on the host',
    };
  }
  return {
    reason: 'the kernel refused to create a user namespace',
    fix: 'check the kernel configuration (CONFIG_USER_NS) and security modules',
  };
}

function layerFromFacts(
  facts: Record<string, NativeFact>,
  names: string[],
  measuredBy: string,
  explain: (failed: NativeFact, name: string) => { reason: string; fix: string },
): LayerStatus {
  for (const name of names) {
    const fact = facts[name];
    if (fact === undefined || !fact.attempted) {
      return {
        available: false,
        reason: `not tried: an earlier step (${name}) could not run`,
        fix: 'fix the first missing layer reported above',
        measuredBy,
      };
    }
    if (!fact.ok) {
      const { reason, fix } = explain(fact, name);
      const status: LayerStatus = { available: false, reason, fix, measuredBy };
      if (fact.errno !== 0) {
        status.errno = fact.errno;
        const label = errnoName(fact.errno);
        if (label !== undefined) status.errnoName = label;
      }
      if (fact.syscall !== undefined) status.syscall = fact.syscall;
      return status;
    }
  }
  return { available: true, measuredBy };
}

function failedCall(fact: NativeFact): string {
  const label = fact.errno !== 0 ? ` (${errnoName(fact.errno) ?? `errno ${fact.errno}`})` : '';
  return `${fact.syscall ?? 'the call'} failed${label}`;
}

function linuxLayers(facts: Record<string, NativeFact>): Partial<Record<LayerName, LayerStatus>> {
  const generic = (fix: string) => (fact: NativeFact) => ({ reason: failedCall(fact), fix });
  const userns = layerFromFacts(
    facts,
    ['userNamespace', 'uidMap'],
    'created a user namespace and wrote its uid/gid maps in a child process',
    (fact, name) => {
      if (name === 'userNamespace') {
        const why = explainUserns();
        return { reason: `${failedCall(fact)}: ${why.reason}`, fix: why.fix };
      }
      return { reason: failedCall(fact), fix: 'check /proc/sys/user and the security modules' };
    },
  );
  const landlockAbi = facts.landlockAbi;
  const landlock = layerFromFacts(
    facts,
    ['landlockAbi', 'landlockEnforced'],
    'asked the kernel for its Landlock ABI, then checked that a ruleset really denies a write',
    (fact, name) => {
      if (name === 'landlockAbi') {
        return {
          reason: `Landlock is not available (${failedCall(fact)})`,
          fix: 'use a kernel 5.13 or later built with CONFIG_SECURITY_LANDLOCK and with landlock in the lsm= boot parameter',
        };
      }
      return {
        reason: `a Landlock ruleset was not enforced (${failedCall(fact)})`,
        fix: 'check the kernel Landlock configuration',
      };
    },
  );
  if (landlock.available && (landlockAbi?.value ?? 0) < 1) {
    landlock.available = false;
    landlock.reason = 'the kernel reports no Landlock ABI';
    landlock.fix = 'use a kernel 5.13 or later with Landlock enabled';
  }
  return {
    userns,
    mountns: layerFromFacts(
      facts,
      ['mountNamespace', 'mountPrivate', 'mountSetattr', 'tmpfs'],
      'created a mount namespace, made it private and read-only with mount_setattr, mounted a tmpfs',
      generic('use a kernel 5.12 or later (mount_setattr) and allow mounts in user namespaces'),
    ),
    pidns: layerFromFacts(
      facts,
      ['pidNamespace', 'procMount'],
      'created a pid namespace and mounted a fresh /proc from its first process',
      generic('allow pid namespaces and a procfs mount (containers that mask /proc prevent this)'),
    ),
    netns: layerFromFacts(
      facts,
      ['netNamespace', 'loopbackUp'],
      'created a network namespace and brought its loopback interface up',
      generic('allow network namespaces in user namespaces'),
    ),
    ipcns: layerFromFacts(facts, ['ipcNamespace'], 'created an IPC namespace', generic('allow IPC namespaces')),
    utsns: layerFromFacts(facts, ['utsNamespace'], 'created a UTS namespace', generic('allow UTS namespaces')),
    landlock,
    seccomp: layerFromFacts(
      facts,
      ['noNewPrivs', 'seccompFilter'],
      'installed a seccomp filter that fails getppid and checked that it did',
      generic('use a kernel built with CONFIG_SECCOMP_FILTER'),
    ),
  };
}

/** Layers named in ZERO_SANDBOX_TEST_DISABLE_LAYERS (comma-separated). Tests only. */
export function layersDisabledForTesting(env: NodeJS.ProcessEnv = process.env): LayerName[] {
  const raw = env.ZERO_SANDBOX_TEST_DISABLE_LAYERS;
  if (raw === undefined || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item): item is LayerName => item !== '');
}

/** Turns raw native facts into the report. Pure apart from reading sysctls for explanations. */
export function buildProbeReport(native: NativeProbe, env: NodeJS.ProcessEnv = process.env): ProbeReport {
  const platform = native.platform;
  const layers: Partial<Record<LayerName, LayerStatus>> =
    platform === 'linux' ? linuxLayers(native.facts) : {};
  const disabled = layersDisabledForTesting(env);
  for (const name of disabled) {
    layers[name] = {
      available: false,
      reason: 'disabled for testing by ZERO_SANDBOX_TEST_DISABLE_LAYERS',
      fix: 'unset ZERO_SANDBOX_TEST_DISABLE_LAYERS',
      measuredBy: 'test override (can only remove a layer, never add one)',
    };
  }
  const needed: readonly LayerName[] = platform === 'linux' ? LINUX_DEFAULT_LAYERS : [];
  const missing: ProbeReport['missing'] = [];
  for (const name of needed) {
    const layer = layers[name];
    if (layer === undefined || !layer.available) {
      missing.push({
        layer: name,
        reason: layer?.reason ?? 'not measured',
        fix: layer?.fix ?? 'not available on this platform',
      });
    }
  }
  // macOS and Windows: one layer each, judged by the backend selection from the measured facts.
  let otherInfo: ReturnType<typeof selectBackend> | undefined;
  const single = backendForPlatform(platform)?.singleLayer;
  if (single !== undefined) {
    otherInfo = selectBackend({ platform, facts: native.facts });
    const name: LayerName = single;
    const fix = platform === 'darwin'
      ? 'run outside any other sandbox, with /usr/bin/sandbox-exec present'
      : 'run as a user with a profile on Windows 10 or later, with the Windows Defender Firewall and Base Filtering Engine services running';
    layers[name] = otherInfo.available
      ? { available: true, measuredBy: 'ran a command under the platform sandbox and checked that a deny rule denied' }
      : { available: false, reason: otherInfo.message ?? 'not available', fix, measuredBy: 'ran a command under the platform sandbox' };
    if (disabled.includes(name)) layers[name] = { available: false, reason: 'disabled for testing by ZERO_SANDBOX_TEST_DISABLE_LAYERS', fix: 'unset ZERO_SANDBOX_TEST_DISABLE_LAYERS', measuredBy: 'test override' };
    if (!layers[name]!.available) missing.push({ layer: name, reason: layers[name]!.reason ?? '', fix: layers[name]!.fix ?? '' });
  } else if (platform !== 'linux') {
    missing.push({ layer: 'seatbelt', reason: `no native sandbox backend exists for ${platform}`, fix: 'use Linux, macOS or Windows' });
  }
  const landlockAbi = platform === 'linux' ? Math.max(0, native.facts.landlockAbi?.value ?? 0) : 0;
  const backend = backendNameFor(platform);
  return {
    platform,
    arch: native.arch,
    kernelRelease: native.release,
    isRoot: native.uid === 0,
    uid: native.uid,
    backend: missing.length === 0 ? backend : 'unavailable',
    landlockAbi,
    layers,
    macos:
      platform === 'darwin'
        ? { applicable: true, sandboxExec: native.facts.sandboxExec?.ok ?? false, ...(otherInfo?.message === undefined ? {} : { reason: otherInfo.message }) }
        : { applicable: false, reason: 'not this platform' },
    windows:
      platform === 'win32'
        ? { applicable: true, ...(otherInfo?.message === undefined ? {} : { reason: otherInfo.message }) }
        : { applicable: false, reason: 'not this platform' },
    canEnforceDefaultPolicy: missing.length === 0,
    missing,
    disabledForTesting: disabled,
    facts: native.facts,
  };
}

let cachedNative: NativeProbe | undefined;

const { EAGAIN, EMFILE, ENFILE, ENOSPC } = constants.errno;

/**
 * Whether a step of the measurement ran out of processes or descriptors (a burst of runs under the
 * user's limits), or of namespaces where none of the kinds is switched off (`countsAboveZero`):
 * that says nothing about the layer the step was for.
 */
export function ranOutMeasuring(measured: NativeProbe, countsAboveZero: () => boolean = namespaceCountsAboveZero): boolean {
  const failed = Object.values(measured.facts).filter((fact) => !fact.ok);
  if (failed.some((fact) => fact.errno === EAGAIN || fact.errno === EMFILE || fact.errno === ENFILE)) return true;
  return failed.some((fact) => fact.errno === ENOSPC) && countsAboveZero();
}

/** The measurement, kept for the process unless it ran out (then reported once and made again). */
function keep(measured: NativeProbe): NativeProbe {
  if (!ranOutMeasuring(measured)) cachedNative = measured;
  return measured;
}

/**
 * Measures this machine (once per process; later calls reuse the measurement, unless a step of it
 * ran out of processes, descriptors or namespaces: see keep()).
 */
export async function probe(): Promise<ProbeReport> {
  let native = cachedNative ?? keep(await callNativeAsync((binding) => binding.probe()));
  if (needsSeatbeltProfile(native)) {
    const { checkSeatbeltProfile } = await import('./backend/macos/profile-check.js');
    addProbeFacts({ seatbeltProfile: checkSeatbeltProfile() });
    native = cachedNative ?? native;
  }
  const report = buildProbeReport(native);
  if (report.platform !== 'win32') return report;
  if (report.layers.appcontainer?.available !== true) {
    return addNetworkProbe(report, undefined, 'the AppContainer layer is unavailable, so no container could try a connection');
  }
  const measured = (await networkProbeSource?.(report.platform)) ?? keptNetworkProbe;
  return addNetworkProbe(report, measured, 'the Windows backend is not loaded in this process, so no connection was tried');
}

let keptNetworkProbe: NetworkProbeResult | undefined;
let networkProbeSource: ((platform: string) => Promise<NetworkProbeResult | undefined>) | undefined;

/**
 * Windows: how probe() gets the in-container connection probe's finding (lib/backend/current.ts
 * sets it where the Windows backend loads; this module cannot load that backend itself).
 */
export function setNetworkProbeSource(source: (platform: string) => Promise<NetworkProbeResult | undefined>): void {
  networkProbeSource = source;
}

/** Keeps this process's in-container connection probe finding for `probeSync()` (Windows). */
export function noteNetworkProbe(result: NetworkProbeResult): void {
  keptNetworkProbe = result;
}

/**
 * Windows: the in-container connection probe's finding joins the report; one that refuses
 * network-deny runs makes the default policy (network deny) unenforceable here.
 */
export function addNetworkProbe(report: ProbeReport, result: NetworkProbeResult | undefined, skipped?: string): ProbeReport {
  if (result === undefined) {
    return { ...report, windows: { ...report.windows, networkProbeSkipped: skipped ?? 'not measured yet in this process (await probe() measures it)' } };
  }
  const out: ProbeReport = { ...report, windows: { ...report.windows, networkProbe: result } };
  if (!result.denyRunsAllowed) {
    out.missing = [...report.missing, { layer: 'appcontainer', reason: `network deny: the in-container connection probe found ${result.outcome}: ${result.detail}`, fix: 'start the Windows Defender Firewall and Base Filtering Engine services, remove firewall software that replaces them, then run zero-sandbox doctor again' }];
    out.canEnforceDefaultPolicy = false;
  }
  return out;
}

/** The synchronous form of `probe()`, for callers that cannot await. */
export function probeSync(): ProbeReport {
  let measured = cachedNative ?? keep(callNative((native) => native.probeSync()));
  if (needsSeatbeltProfile(measured)) {
    // The macOS backends measure it themselves when they load (platform-backends.ts); here it is
    // loaded synchronously where require(esm) works, and otherwise left unmeasured (unavailable).
    try {
      const check = createRequire(import.meta.url)('./backend/macos/profile-check.js') as typeof import('./backend/macos/profile-check.js');
      addProbeFacts({ seatbeltProfile: check.checkSeatbeltProfile() });
    } catch {
      // unmeasured: the seatbelt layer reports seatbeltProfile as not measured
    }
    measured = cachedNative ?? measured;
  }
  const report = buildProbeReport(measured);
  return report.platform === 'win32' ? addNetworkProbe(report, keptNetworkProbe) : report;
}

/**
 * macOS: the native probe applies a trivial profile; the real one this package builds must also
 * compile and run a command (seatbeltProfile, measured once in TS by profile-check.ts), so a rule
 * this macOS rejects is a refusal at the probe, not a failure of every command.
 */
function needsSeatbeltProfile(native: NativeProbe): boolean {
  return native.platform === 'darwin' && native.facts.sandboxExec?.ok === true && native.facts.seatbeltProfile === undefined;
}

/** Adds facts measured outside the addon to the cached measurement (macOS backends only). */
export function addProbeFacts(facts: Record<string, NativeFact>): void {
  if (cachedNative === undefined) cachedNative = callNative((native) => native.probeSync());
  cachedNative = { ...cachedNative, facts: { ...cachedNative.facts, ...facts } };
}

/** Whether the cached measurement still lacks the macOS real-profile check. */
export function seatbeltProfileUnmeasured(): boolean {
  return cachedNative !== undefined && needsSeatbeltProfile(cachedNative);
}
