// SPDX-License-Identifier: MIT
// The loss report: for the current backend, which parts of the effective
// policy are enforced natively and by what, and which cannot be — the latter make runSandboxed
// refuse rather than run weaker. Also the known limits of what is enforced. Pure.
import type { LayerName, ProbeReport } from '../probe.js';
import { backendForPlatform } from './platform-table.js';
import type { NetworkMode } from './types.js';
import { SEATBELT_ENFORCED, SEATBELT_LIMITATIONS } from './macos/limitations.js';
import { APPCONTAINER_ENFORCED, APPCONTAINER_LIMITATIONS } from './windows/limitations.js';

export interface EnforcedCapability {
  capability: string;
  /** The mechanisms that enforce it. */
  by: string[];
  enforced: boolean;
  /** Why it cannot be enforced here (absent when enforced). */
  reason?: string;
}

export interface EnforcementReport {
  backend: ProbeReport['backend'];
  /** True when every capability the policy needs is enforced; otherwise commands are refused. */
  complete: boolean;
  capabilities: EnforcedCapability[];
  /** Honest limits of the mechanisms even when everything is enforced. */
  limitations: string[];
}

const LINUX_LIMITATIONS = [
  'a hardlink created on the host before the command, joining a file inside a write root to one outside, lets the command write that file through the inside path (the kernel checks paths, not inodes)',
  '.zero, .agents and missing git hooks, configs and pointer files cannot be made read-only before they exist without creating them on the host: if the command creates them they are removed and reported when it ends (the run exits non-zero)',
  'under network deny, creating AF_UNIX sockets is refused (socketpair still works), so Unix-domain servers inside the sandbox do not work',
  'network namespaces are reused, one sandbox at a time, once every process of the previous sandbox is gone: its TCP connections in TIME_WAIT stay listed in /proc/net/tcp for up to a minute and can make that port busy for a server that binds without SO_REUSEADDR',
  'credential and deny-read paths that appear while the command runs stay unreadable because the directories on the way to them (the home directory, ~/.config, /etc for a root caller, ...) get Landlock read grants per entry existing when the command starts: anything created in those directories during the run, credential or not, is unreadable until the next command, its name stays listable, and an entry that existed at the start and is renamed into a credential path keeps its grant',
  'for a root caller, /etc/shadow, /etc/gshadow, sudo rules, SSH host keys and /root are masked when the command starts; one the host replaces by a rename while it runs (passwd rewriting /etc/shadow) becomes readable to it',
  'a credential store inside a write root (a workspace that is the home directory or holds it) is not hidden: the write root grants reading everything in it',
  'git protection covers the repository a write root is or lies in, every populated gitlink of its index (recursively), its submodule and worktree git dirs and what their configs point at, and untracked repositories one level down; at most 256 git dirs per run, and an untracked repository deeper down that host git does not enter by itself is not guarded',
  'limits.processes for a root caller (whom the kernel exempts from RLIMIT_NPROC) is a pids cgroup where one is writable (cgroup v1 pids, or v2 with pids delegated), else the sandbox PID namespace\'s own pid_max (Linux 6.14 and later, caps of 300 or more; once pid numbers wrap a long run may hold up to 300 fewer processes at once; the kernel counts no refusals there, so the init tries a fork of its own every 200 ms and a cap that holds for less than that between its tries is not reported in limitsHit, and the try takes one slot for an instant); with neither, a cap the caller set is refused and a run without one goes uncapped and says so (limitsNotEnforced, a warning on the CLI)',
  'for an unprivileged caller the process cap is RLIMIT_NPROC, counted in the sandbox\'s own user namespace on kernels 5.14 and later; on older kernels the caller\'s other processes count against it too',
  'the process cap bounds how many processes a fork bomb holds, not the CPU they burn until the command ends or times out',
  'a command that fills the private /tmp or /dev/shm (default caps 1 GiB and 256 MiB, less on machines with little memory) gets ENOSPC; the sandbox\'s init reports the one that is full (no inode left, or within 1/64 of its size and at most 2 MiB) once every other process is gone (limitsHit tmpBytes / shmBytes): one the command emptied again before it ended, a failed all-or-nothing allocation (fallocate), and a sandbox killed first (timeout, abort) are not reported',
  'for an unprivileged caller the kernel counts no forks refused at RLIMIT_NPROC either: the init tries a fork of its own every 200 ms as under pid_max, so a cap that holds for less than that between its tries is not reported in limitsHit, and the try takes one slot for an instant',
];

/** The one-layer backends (macOS, Windows): what their layer enforces and its limits. */
const SINGLE_LAYER: Record<'seatbelt' | 'appcontainer', { enforced: ReadonlyArray<{ capability: string; by: string[] }>; limitations: readonly string[] }> = {
  seatbelt: { enforced: SEATBELT_ENFORCED, limitations: SEATBELT_LIMITATIONS },
  appcontainer: { enforced: APPCONTAINER_ENFORCED, limitations: APPCONTAINER_LIMITATIONS },
};

/** macOS/Windows: every capability stands or falls with the platform's one sandbox layer. */
function buildPlatformReport(report: ProbeReport, policy: { network: NetworkMode }, single: 'seatbelt' | 'appcontainer'): EnforcementReport {
  const backend = { layer: single, ...SINGLE_LAYER[single] };
  const layer = report.layers[backend.layer];
  const enforced = layer?.available === true;
  const reason = `${backend.layer} is not available on ${report.platform}: ${layer?.reason ?? 'not measured'}`;
  // Windows: the in-container connection probe, once measured, decides the network deny line.
  const netProbe = single === 'appcontainer' ? report.windows.networkProbe : undefined;
  const capabilities: EnforcedCapability[] = backend.enforced.map(({ capability, by }) => {
    if (policy.network === 'allow' && capability.startsWith('network deny')) {
      return { capability: 'network allowed (policy allow)', by: ['no network rule'], enforced: true };
    }
    if (enforced && netProbe?.denyRunsAllowed === false && capability.startsWith('network deny')) {
      return { capability, by: [...by], enforced: false, reason: `the in-container connection probe found ${netProbe.outcome}: ${netProbe.detail}` };
    }
    return enforced ? { capability, by: [...by], enforced } : { capability, by: [...by], enforced, reason };
  });
  const limitations = [...backend.limitations];
  if (policy.network === 'deny' && netProbe?.outcome === 'inconclusive') limitations.push(`the in-container connection probe was inconclusive here: ${netProbe.detail}`);
  capabilities.push({ capability: 'secrets scrubbed from the environment', by: ['environment filter'], enforced: true });
  return {
    backend: report.backend,
    complete: capabilities.every((c) => c.enforced),
    capabilities,
    limitations,
  };
}

export function buildEnforcementReport(report: ProbeReport, policy: { network: NetworkMode }): EnforcementReport {
  const entry = backendForPlatform(report.platform);
  if (entry?.singleLayer !== undefined) return buildPlatformReport(report, policy, entry.singleLayer);
  if (entry === undefined) {
    return {
      backend: report.backend,
      complete: false,
      capabilities: [{ capability: 'native isolation', by: [], enforced: false, reason: `no native backend exists for ${report.platform}; commands are refused` }],
      limitations: [],
    };
  }
  const layer = (name: LayerName) => report.layers[name];
  const capability = (name: string, by: string[], layers: LayerName[]): EnforcedCapability => {
    const missing = layers.filter((l) => layer(l)?.available !== true);
    if (missing.length === 0) return { capability: name, by, enforced: true };
    return {
      capability: name,
      by,
      enforced: false,
      reason: missing.map((l) => `${l}: ${layer(l)?.reason ?? 'not available'}`).join('; '),
    };
  };
  const capabilities = [
    capability('writes only inside write roots and a private /tmp', ['landlock', 'read-only mounts'], ['userns', 'mountns', 'landlock']),
    capability('no metadata changes outside write roots (chmod, chown, utimes, xattrs), also for root', ['read-only mounts'], ['userns', 'mountns']),
    capability('.git/hooks, .git/config, existing .zero/.agents and denyWrite paths read-only; their parent directories cannot be renamed away', ['read-only bind mounts', 'pinned parent directories'], ['mountns']),
    capability('credential stores and deny-read paths unreadable, also when created or replaced during the run', ['read-only masks (empty stand-in files, reported when opened; hidden directories unlistable)', 'landlock read grants per existing entry', 'dropped capabilities'], ['mountns', 'landlock']),
    capability('raw devices unreachable (only null, zero, full, random, urandom, tty, private ptys)', ['landlock'], ['landlock']),
    policy.network === 'deny'
      ? capability('no network contact outside the sandbox (TCP, UDP, host Unix sockets)', ['network namespace', 'seccomp (AF_UNIX, AF_VSOCK)', 'landlock scope (abstract sockets)'], ['netns', 'seccomp'])
      : { capability: 'network allowed (policy allow)', by: ['shared network namespace'], enforced: true },
    capability('host processes invisible, unsignalable and untraceable', ['pid namespace', 'fresh /proc', 'seccomp (ptrace)'], ['pidns', 'seccomp']),
    capability('no terminal injection (TIOCSTI, TIOCLINUX)', ['new session', 'seccomp'], ['seccomp']),
    capability('kernel attack surface reduced (bpf, io_uring, keyctl, mount API, perf, userfaultfd, modules)', ['seccomp'], ['seccomp']),
    capability('hostname and IPC isolated', ['uts and ipc namespaces'], ['utsns', 'ipcns']),
    capability('every process killed when the command ends, times out or is aborted', ['pid namespace init'], ['pidns']),
    { capability: 'secrets scrubbed from the environment', by: ['environment filter'], enforced: true },
  ];
  return {
    backend: report.backend,
    complete: capabilities.every((c) => c.enforced),
    capabilities,
    limitations: LINUX_LIMITATIONS,
  };
}
