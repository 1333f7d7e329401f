// SPDX-License-Identifier: MIT
// Structured sandbox denials: what the sandbox itself blocked and can attribute (a protected path,
// a refused network request, a masked credential, a cap that was hit). They come from what the
// sandbox did, never from the command's output text, which the command controls.

/** Capability kinds a denial names (the same vocabulary as the permission engine's requests). */
export const DENIAL_CAPABILITIES = [
  'filesystem_read',
  'workspace_write',
  'protected_metadata',
  'external_network',
  'isolated_loopback',
  'host_visible_binding',
  'process_spawn',
  'process_control',
  'environment',
  'unrestricted',
  /** A resource cap of the run (output kept, time, memory, processes, file size). */
  'resource_limit',
] as const;
/** A capability kind. */
export type DenialCapabilityKind = (typeof DENIAL_CAPABILITIES)[number];

/** Who decided the denial: the configured policy, the platform sandbox, or an approval answer. */
export const DENIAL_SOURCES = ['configured_policy', 'platform_sandbox', 'approval'] as const;
/** Source of a denial. */
export type DenialSource = (typeof DENIAL_SOURCES)[number];

/** What the caller can do next. */
export const DENIAL_NEXT_ACTIONS = ['none', 'request_approval', 'change_command', 'enable_sandbox'] as const;
/** Next action after a denial. */
export type DenialNextAction = (typeof DENIAL_NEXT_ACTIONS)[number];

/** One thing the sandbox blocked, as an agent needs it to ask for exactly the grant it lacks. */
export interface SandboxDenial {
  /** What was blocked: the capability kind and, when known, its scope (a path, host, variable or cap name). */
  capability: { kind: DenialCapabilityKind; scope?: string };
  /** Who decided it. */
  source: DenialSource;
  /** Human-readable reason naming the path, host, variable or cap. */
  reason: string;
  /** Whether a grant, an approval or a different command can get past it. */
  recoverable: boolean;
  /** What to do next. */
  nextAction: DenialNextAction;
}

/**
 * A denial for protected workspace metadata the command created or changed (the sandbox removed
 * it); `why` says what it was (for example a git config with a key that runs a program).
 */
export function protectedPathDenial(path: string, why?: string): SandboxDenial {
  return {
    capability: { kind: 'protected_metadata', scope: path },
    source: 'platform_sandbox',
    reason: why === undefined
      ? `the sandbox blocked creation of protected workspace metadata path ${path} (removed)`
      : `the sandbox removed protected workspace metadata path ${path}: ${why}`,
    recoverable: false,
    nextAction: 'change_command',
  };
}

/** A denial for a stream whose output went over the kept cap (the middle was dropped, or the sandbox killed). */
export function outputCapDenial(stream: 'stdout' | 'stderr', maxBuffer: number, killed: boolean): SandboxDenial {
  const what = killed ? 'the sandbox was killed' : 'only its head and tail were kept';
  return {
    capability: { kind: 'resource_limit', scope: `maxBuffer.${stream}` },
    source: 'configured_policy',
    reason: `${stream} went over maxBuffer (${maxBuffer} bytes); ${what}`,
    recoverable: true,
    nextAction: 'change_command',
  };
}

/** A denial for a run killed on its timeout. */
export function timeoutDenial(timeoutMs: number): SandboxDenial {
  return {
    capability: { kind: 'resource_limit', scope: 'timeoutMs' },
    source: 'configured_policy',
    reason: `the command ran longer than timeoutMs (${timeoutMs} ms); the sandbox was killed`,
    recoverable: true,
    nextAction: 'change_command',
  };
}

/** A denial for forks refused at the process cap (limits.processes, default 4096). */
export function processCapDenial(): SandboxDenial {
  return {
    capability: { kind: 'resource_limit', scope: 'limits.processes' },
    source: 'configured_policy',
    reason: 'the command reached the process cap (limits.processes); further forks were refused',
    recoverable: true,
    nextAction: 'change_command',
  };
}

/** What each tmpfs cap covers, for its denial and the CLI's message. */
export const TMPFS_CAPS = {
  tmpBytes: { mount: '/tmp', flag: '--limit-tmp' },
  shmBytes: { mount: '/dev/shm', flag: '--limit-shm' },
} as const;

/** A denial for the private /tmp or /dev/shm found full once the command had ended. */
export function tmpfsCapDenial(cap: keyof typeof TMPFS_CAPS): SandboxDenial {
  const { mount, flag } = TMPFS_CAPS[cap];
  return {
    capability: { kind: 'resource_limit', scope: `limits.${cap}` },
    source: 'configured_policy',
    reason: `the private ${mount} was full when the command ended (limits.${cap}); writes past it failed with ENOSPC. Raise it with ${flag} SIZE`,
    recoverable: true,
    nextAction: 'change_command',
  };
}

/**
 * A denial for network access the sandbox refused: with the network denied, `sends` packets the
 * command sent (connects, datagrams, name lookups to a resolver off loopback) had no route out of
 * its network namespace. The kernel counts them; which host was asked is not known.
 */
export function networkDenial(sends: number): SandboxDenial {
  return {
    capability: { kind: 'external_network' },
    source: 'platform_sandbox',
    reason: `the sandbox refused ${sends} network send${sends === 1 ? '' : 's'} to addresses outside it (network: deny); allow it with network: 'allow' (--network allow) or an approval`,
    recoverable: true,
    nextAction: 'request_approval',
  };
}

/**
 * A denial for a hidden file the command opened: the sandbox showed it an empty file in place of
 * `path` (a credential store, or a --deny-read entry), hidden as part of `mask` (the path itself,
 * or the hidden directory holding it, which is what a grant has to name). Linux learns of the open
 * from the kernel (an inotify watch on the mask, outside the command's reach), never from the
 * command's output.
 */
export function maskedReadDenial(path: string, mask: string = path, named = false): SandboxDenial {
  const read = `the sandbox hid ${path} (deny-read): the command read an empty file in its place`;
  // A store of the credential baseline opens to an allowRead at or above it; an entry the run's own
  // policy names (`named`) does not, and is taken out where it was given.
  const capability = { kind: 'filesystem_read' as const, scope: path };
  if (named) {
    const where = '--deny-read, the denyRead option or sandbox.denyRead in a config file';
    return { capability, source: 'platform_sandbox', reason: `${read}; ${mask} is in the run's denyRead (${where}): remove it there to let commands read it`, recoverable: false, nextAction: 'change_command' };
  }
  return { capability, source: 'platform_sandbox', reason: `${read}; allow it with --allow-read ${mask} (allowRead) or an approval`, recoverable: true, nextAction: 'request_approval' };
}
