// SPDX-License-Identifier: MIT
// The only process.platform switch in lib/: which native backend serves a platform.
import type { SandboxBackendName } from './types.js';

/** The backend this platform would use when its layers are available. */
export function selectBackend(platform: NodeJS.Platform | string = process.platform): SandboxBackendName {
  switch (platform) {
    case 'linux':
      return 'linux-native';
    case 'darwin':
      return 'macos-seatbelt';
    case 'win32':
      return 'windows-appcontainer';
    default:
      return 'unavailable';
  }
}
