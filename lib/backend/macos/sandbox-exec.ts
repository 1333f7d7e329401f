// SPDX-License-Identifier: MIT
// How a macOS run is launched: `/usr/bin/sandbox-exec -p <profile> -D<params> -- argv…`, and how
// sandbox-exec's own failure is told from the command's: never from what the command prints or
// its exit status, but from a byte a launcher writes on a pipe of its own once sandbox-exec has
// applied the profile and exec'd it, closing that pipe before the command exists.

import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { buildSeatbeltProfile, type SeatbeltOptions } from './profile.js';

/** The absolute sandbox-exec path; never looked up on PATH (a planted sandbox-exec would run unsandboxed). */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The descriptor the launcher writes its byte to (the fourth stdio entry of the spawn). */
export const REACHED_FD = 3;

/**
 * The launcher sandbox-exec runs in place of the command (sandbox-exec execs only after the profile
 * is applied): one byte on REACHED_FD, the descriptor closed, then the command exec'd with the
 * same PATH lookup sandbox-exec would do. A failed write runs nothing (and says nothing ran).
 */
const LAUNCHER = ['/bin/sh', '-c', `printf . >&${REACHED_FD} && exec ${REACHED_FD}>&- && exec "$@"`, 'zero-sandbox'];

/**
 * The sandbox-exec arguments for a plan: profile, one `-D NAME=value` per parameter, `--`, then
 * argv, behind the launcher when `launcher` is set (the spawn then gives it REACHED_FD).
 */
export function buildSandboxExecArgs(plan: SandboxPlan, options: SeatbeltOptions, launcher = false): string[] {
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
  args.push('--', ...(launcher ? LAUNCHER : []), ...plan.argv);
  return args;
}

/**
 * sandbox-exec's own failure (the profile did not compile or could not be applied: nothing ran),
 * decided by whether the launcher's byte arrived, never by the command's output or exit status.
 * The reason is sandbox-exec's `sandbox-exec: <why>` line: with no byte, nothing else wrote to
 * stderr. Undefined when the command ran, and for a run ended by a signal (a kill before the
 * launch is the timeout's or the caller's, reported as such).
 */
export function sandboxExecSetupFailure(exitCode: number | null, stderr: string, reached: boolean): string | undefined {
  if (reached || exitCode === null || exitCode === 0) return undefined;
  const first = stderr.split('\n', 1)[0] ?? '';
  const why = first.startsWith('sandbox-exec: ') ? first.slice('sandbox-exec: '.length) : first;
  return why === '' ? 'no reason given' : why;
}
