// SPDX-License-Identifier: MIT
// How a macOS run is launched: `/usr/bin/sandbox-exec -p <profile> -D<params> -- argv…`, and how
// sandbox-exec's own failure is told from the command's.

import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { buildSeatbeltProfile, type SeatbeltOptions } from './profile.js';

/** The absolute sandbox-exec path; never looked up on PATH (a planted sandbox-exec would run unsandboxed). */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The sandbox-exec arguments for a plan: profile, one `-D NAME=value` per parameter, `--`, argv. */
export function buildSandboxExecArgs(plan: SandboxPlan, options: SeatbeltOptions): string[] {
  if (plan.argv.length === 0 || plan.argv[0] === '') {
    throw new SandboxError('invalid_argument', 'seatbelt run: argv[0] (the program) is empty');
  }
  // Seatbelt has no resource limits and child_process cannot set rlimits on the child: refuse
  // rather than run without limits the caller asked for (running weaker than asked is refused).
  const limits = Object.entries(plan.limits).filter(([, value]) => value !== undefined).map(([name]) => name);
  if (limits.length > 0) {
    throw new SandboxError('sandbox_unavailable', `macos-seatbelt cannot enforce the limits ${limits.join(', ')}; remove them or run on Linux`, { layer: 'limits' });
  }
  const { profile, params } = buildSeatbeltProfile(plan, options);
  const args = ['-p', profile];
  for (const [name, value] of Object.entries(params)) args.push('-D', `${name}=${value}`);
  args.push('--', ...plan.argv);
  return args;
}

/**
 * sandbox-exec's own failure: it prints `sandbox-exec: <why>` and exits non-zero when the profile
 * does not compile or cannot be applied (then nothing ran). A failed exec of the command itself
 * (`execvp() of ... failed`) is the command's exit status, as on the other backends.
 */
export function sandboxExecSetupFailure(exitCode: number | null, stderr: string): string | undefined {
  if (exitCode === null || exitCode === 0) return undefined;
  const first = stderr.split('\n', 1)[0] ?? '';
  if (!first.startsWith('sandbox-exec: ') || first.includes('execvp()')) return undefined;
  return first.slice('sandbox-exec: '.length);
}
