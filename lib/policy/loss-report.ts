// SPDX-License-Identifier: MIT
// The enforcement loss report: for each part of the effective policy, whether this machine's
// backend enforces it natively and, if not, which measured layer is missing (decisions.md rule 10).
import type { LayerName, ProbeReport } from '../probe.js';
import type { Policy } from './schema.js';

/** One policy aspect and whether it is enforced here. */
export interface EnforcementItem {
  /** What the policy asks for. */
  aspect: string;
  /** Layers that enforce it on this platform. */
  layers: LayerName[];
  /** True when every layer is available. */
  enforced: boolean;
  /** Why not, naming the missing layers and their fixes. */
  reason?: string;
}

/** Loss report of a policy on the probed machine. */
export interface EnforcementReport {
  backend: string;
  enforced: EnforcementItem[];
  notEnforced: EnforcementItem[];
  /** True when something the policy needs cannot be enforced: runs are refused, not weakened. */
  refusesToRun: boolean;
}

/** Builds the loss report from a probe report. */
export function buildEnforcementReport(policy: Policy, report: ProbeReport): EnforcementReport {
  const aspects: Array<[string, LayerName[]]> = [];
  if (policy.mode === 'disabled') return { backend: report.backend, enforced: [], notEnforced: [], refusesToRun: false };
  const linux = report.platform === 'linux';
  const platformLayer: LayerName[] = report.platform === 'darwin' ? ['seatbelt'] : ['appcontainer'];
  aspects.push(['writes only inside write roots and a private temp directory', linux ? ['userns', 'mountns', 'landlock'] : platformLayer]);
  aspects.push(['credential and denyRead paths unreadable', linux ? ['userns', 'mountns'] : platformLayer]);
  if (policy.network !== 'allow') aspects.push(['no network outside the sandbox (network deny)', linux ? ['userns', 'netns', 'seccomp'] : platformLayer]);
  aspects.push(['commands cannot see or signal host processes', linux ? ['userns', 'pidns', 'ipcns'] : platformLayer]);
  aspects.push(['dangerous system calls blocked (ptrace, bpf, io_uring, mount, keyctl, ...)', linux ? ['seccomp'] : platformLayer]);
  const enforced: EnforcementItem[] = [];
  const notEnforced: EnforcementItem[] = [];
  for (const [aspect, layers] of aspects) {
    const missing = layers.filter((layer) => report.layers[layer]?.available !== true);
    if (missing.length === 0) {
      enforced.push({ aspect, layers, enforced: true });
      continue;
    }
    const reasons = missing.map((layer) => {
      const status = report.layers[layer];
      const miss = report.missing.find((m) => m.layer === layer);
      const why = status?.reason ?? miss?.reason ?? 'not available on this platform';
      const fix = status?.fix ?? miss?.fix;
      return `${layer}: ${why}${fix ? ` (fix: ${fix})` : ''}`;
    });
    notEnforced.push({ aspect, layers, enforced: false, reason: reasons.join('; ') });
  }
  return { backend: report.backend, enforced, notEnforced, refusesToRun: notEnforced.length > 0 };
}
