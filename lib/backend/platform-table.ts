// SPDX-License-Identifier: MIT
// Which backend serves which platform, and the probe layer(s) it stands on: the one table the
// probe, the backend selection, the loss report and the dispatch read. Pure (the platform is
// always an argument); lib/backend/current.ts applies it to the running platform.
import type { SandboxBackendName } from './types.js';

/** A sandbox layer the probe measures (Linux: one per kernel mechanism; macOS, Windows: one each). */
export type LayerName =
  | 'userns'
  | 'mountns'
  | 'pidns'
  | 'netns'
  | 'ipcns'
  | 'utsns'
  | 'landlock'
  | 'seccomp'
  | 'seatbelt'
  | 'appcontainer';

/** One platform's backend. */
export interface PlatformBackendEntry {
  /** The backend's name, as results and reports carry it. */
  name: Exclude<SandboxBackendName, 'unavailable'>;
  /**
   * The layers every run needs (Linux adds `netns` under network deny: `networkDenyLayer`); macOS
   * and Windows stand on one layer that covers every capability.
   */
  layers: readonly LayerName[];
  /** The extra layer a network-deny run needs (Linux: its own network namespace). */
  networkDenyLayer?: LayerName;
  /** macOS/Windows: the one layer; undefined on Linux, whose layers are measured one by one. */
  singleLayer?: 'seatbelt' | 'appcontainer';
}

const TABLE: Readonly<Record<string, PlatformBackendEntry>> = {
  linux: { name: 'linux-native', layers: ['userns', 'mountns', 'pidns', 'ipcns', 'utsns', 'landlock', 'seccomp'], networkDenyLayer: 'netns' },
  darwin: { name: 'macos-seatbelt', layers: ['seatbelt'], singleLayer: 'seatbelt' },
  win32: { name: 'windows-appcontainer', layers: ['appcontainer'], singleLayer: 'appcontainer' },
};

/** The platforms a backend exists for. */
export const SUPPORTED_PLATFORMS = Object.keys(TABLE);

/** The backend of `platform`, or undefined when none exists (then every run is refused). */
export function backendForPlatform(platform: string): PlatformBackendEntry | undefined {
  return Object.hasOwn(TABLE, platform) ? TABLE[platform] : undefined;
}

/** The backend name for `platform` (`unavailable` where none exists). */
export function backendNameFor(platform: string): SandboxBackendName {
  return backendForPlatform(platform)?.name ?? 'unavailable';
}
