// SPDX-License-Identifier: MIT
// Whether the backend of a platform (platform-table.ts) can run here, judged from the measured
// facts. One function, platform and facts injected.
import type { NativeFact } from '../native/types.js';
import { backendForPlatform, SUPPORTED_PLATFORMS } from './platform-table.js';
import type { BackendInfo } from './types.js';

/** What the selection looks at; every field is injectable so each branch is testable anywhere. */
export interface BackendSelectionInput {
  /** `process.platform` of the machine (or the one under test). */
  platform: NodeJS.Platform | string;
  /** Raw facts from the native probe (`NativeProbe.facts`). */
  facts: Record<string, NativeFact>;
  /**
   * Linux only: the layers the default policy needs that the probe found missing, as listed in
   * `ProbeReport.missing` (already explained there). Ignored on other platforms.
   */
  linuxMissing?: ReadonlyArray<{ layer: string; reason: string }>;
}

/**
 * macOS facts the seatbelt backend needs: sandbox-exec ran a profile, a deny rule denied, and the
 * real profile this package builds compiled and ran a command (measured in TS, profile-check.ts).
 */
export const MACOS_REQUIRED_FACTS = ['sandboxExec', 'seatbeltEnforced', 'seatbeltProfile'] as const;

/** Windows facts the AppContainer backend needs, each tried for real by the probe. */
export const WINDOWS_REQUIRED_FACTS = [
  'appContainerProfile',
  'securityCapabilities',
  'jobObject',
  'appContainerSpawn',
  'firewallService',
] as const;

/** Why each required fact matters, for the message when it is missing. */
const FACT_HELP: Record<string, string> = {
  sandboxExec:
    '/usr/bin/sandbox-exec could not run a trivial profile (missing, or this process is already sandboxed)',
  seatbeltEnforced: 'a seatbelt profile denying one file did not stop cat from reading it',
  seatbeltProfile: 'the seatbelt profile zero-sandbox builds did not compile or run /usr/bin/true under sandbox-exec on this macOS',
  appContainerProfile:
    'no AppContainer profile could be created or opened (CreateAppContainerProfile; needs Windows 8 or later and a user profile)',
  securityCapabilities:
    'PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES could not be prepared for CreateProcess',
  appContainerSpawn: 'cmd.exe could not run inside an AppContainer and report its exit code',
  firewallService:
    'the Base Filtering Engine or Windows Defender Firewall service is not running, so AppContainer network isolation is not enforced',
  jobObject: 'no job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE could be created (nested job restrictions)',
};

/** The failed call's code as what it is: a Win32 error, an HRESULT (in hex, as Windows prints it) or an errno. */
function factError(fact: NativeFact): string {
  if (fact.win32Error !== undefined) return `Win32 error ${fact.win32Error}`;
  if (fact.hresult !== undefined) return `HRESULT 0x${(fact.hresult >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
  return `error ${fact.errno}`;
}

function describeFact(name: string, fact: NativeFact | undefined): string | undefined {
  if (fact !== undefined && fact.attempted && fact.ok) return undefined;
  const help = FACT_HELP[name] ?? name;
  if (fact === undefined || !fact.attempted) return `${name} not measured: ${help}`;
  const call = fact.syscall !== undefined ? ` (${fact.syscall}, ${factError(fact)})` : '';
  return `${name} failed${call}: ${help}`;
}

function fromFacts(
  name: BackendInfo['name'],
  platform: string,
  facts: Record<string, NativeFact>,
  required: readonly string[],
): BackendInfo {
  const problems = required.map((fact) => describeFact(fact, facts[fact])).filter((p): p is string => p !== undefined);
  const info: BackendInfo = {
    name,
    available: problems.length === 0,
    platform,
    nativeIsolation: true,
    commandWrapping: true,
    // AppContainer needs no elevated one-time step: the profile and ACLs are applied per run by
    // the user, so there is no setup marker to miss.
    setupInitialized: true,
  };
  if (problems.length > 0) info.message = problems.join('; ');
  return info;
}

/**
 * Selects the backend for a platform and says whether it can run here. `linux` → `linux-native`
 * (available when no default-policy layer is missing); `darwin` → `macos-seatbelt` (available when
 * sandbox-exec ran a profile and a deny rule denied); `win32` → `windows-appcontainer` (available when the profile, the security
 * capabilities attribute, a kill-on-close job and a real launch in a container all worked, and the
 * firewall services that enforce container network isolation run);
 * anything else → `unavailable`.
 */
export function selectBackend(input: BackendSelectionInput): BackendInfo {
  const { platform, facts } = input;
  const entry = backendForPlatform(platform);
  if (entry === undefined) {
    return {
      name: 'unavailable',
      available: false,
      platform,
      nativeIsolation: false,
      commandWrapping: false,
      setupInitialized: true,
      message: `no native sandbox backend for platform ${platform}; supported: ${SUPPORTED_PLATFORMS.join(', ')}`,
    };
  }
  if (entry.singleLayer === undefined) {
    // Linux: the probe measured each layer; the missing ones are already explained there.
    const missing = input.linuxMissing ?? [];
    const info: BackendInfo = {
      name: entry.name,
      available: missing.length === 0,
      platform,
      nativeIsolation: true,
      commandWrapping: true,
      setupInitialized: true,
    };
    if (missing.length > 0) info.message = missing.map((m) => `${m.layer}: ${m.reason}`).join('; ');
    return info;
  }
  return fromFacts(entry.name, platform, facts, entry.singleLayer === 'seatbelt' ? MACOS_REQUIRED_FACTS : WINDOWS_REQUIRED_FACTS);
}
