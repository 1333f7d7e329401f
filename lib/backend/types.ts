// SPDX-License-Identifier: MIT
// The platform-neutral plan TypeScript builds for one sandboxed command, and the backend
// descriptor the permission engine reasons about. Backends only apply a plan; they decide nothing.

/** Network is binary: anything that is not exactly `allow` is `deny`. */
export type NetworkMode = 'deny' | 'allow';

/** Native backend names. `unavailable` means no native isolation here. */
export type SandboxBackendName = 'linux-native' | 'macos-seatbelt' | 'windows-appcontainer' | 'unavailable';

/** A writable root and what stays protected inside it. All paths absolute and symlink-resolved. */
export interface WritableRoot {
  root: string;
  /** Always `<root>/.git/hooks` and `<root>/.git/config`, whether they exist yet or not. */
  readOnlySubpaths: string[];
  /** Names directly under the root that must not be created or changed: `.zero`, `.agents`. */
  protectedNames: string[];
}

/** Kernel-enforced resource limits; each is optional. */
export interface ResourceLimits {
  cpuSeconds?: number;
  memoryBytes?: number;
  fileSizeBytes?: number;
  openFiles?: number;
  /** Processes and threads in the sandbox (Linux default: 4096). */
  processes?: number;
  /** Size cap of the private /tmp in bytes (Linux default: 1 GiB or a quarter of RAM). */
  tmpBytes?: number;
  /** Size cap of the private /dev/shm in bytes (Linux default: 256 MiB or a sixteenth of RAM). */
  shmBytes?: number;
}

/** Everything a backend needs to confine one command. Built by TS, validated, then applied. */
export interface SandboxPlan {
  /** Program and arguments; a shell string arrives here as ['/bin/sh', '-c', text]. */
  argv: string[];
  /** Absolute working directory inside a write root. */
  cwd: string;
  /** The complete environment of the command (already scrubbed, markers set). */
  env: Record<string, string>;
  network: NetworkMode;
  /** The workspace root (absolute, symlink-resolved). */
  workspace: string;
  /** Workspace first, then extra write roots, shallowest first. */
  writeRoots: WritableRoot[];
  /** Read-all posture: `/` plus any extra read roots. */
  readRoots: string[];
  /** Existing paths (files or directories) the command must not read. */
  denyRead: string[];
  /** Existing paths inside write roots the command must not change. */
  denyWrite: string[];
  /** Block creating AF_UNIX sockets (always on under network deny on Linux). */
  blockUnixSockets: boolean;
  limits: ResourceLimits;
  /** Names of the caller's variables scrubbed from `env` as secrets (never their values). */
  scrubbedEnv?: string[];
  /**
   * Paths no read grant may cover, existing or not (deny-read paths and every credential store's
   * path, resolved as far as they exist), and directories granted entry by entry (~/.ssh): what
   * appears there while the command runs stays unreadable where the backend supports it.
   */
  denyReadTree?: { denied: string[]; guarded: string[] };
  /**
   * The deny-read paths the run's own policy names (the denyRead option, --deny-read, the config's
   * sandbox.denyRead), resolved; absent when there are none. allowRead does not open them, so a
   * read they hid is reported with where to take them out instead.
   */
  userDenyRead?: string[];
}

/** What the engine knows about the backend that would run a command. */
export interface BackendInfo {
  name: SandboxBackendName;
  /** Native isolation can be set up on this machine right now. */
  available: boolean;
  platform: NodeJS.Platform | string;
  nativeIsolation: boolean;
  commandWrapping: boolean;
  /** Windows only: the one-time setup has run. Always true elsewhere. */
  setupInitialized: boolean;
  /** Why the backend is unavailable, when it is. */
  message?: string;
}
