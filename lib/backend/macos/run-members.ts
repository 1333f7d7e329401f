// SPDX-License-Identifier: MIT
// The end of a macOS run: every process of it gone before the host looks at protected paths.
// Killing the command's process group misses a process that called setsid() or setpgid(), and
// macOS has no pid namespace or cgroup to find it by. What still marks it is its profile: each
// run's profile allows reading one random path and denies another (profile.ts), so among the
// user's processes those that are sandboxed, allowed the first and denied the second run under
// this run's profile and no other (the addon's macosRunMembers asks the kernel, native/macos/).
// They are killed in rounds until a listing comes back empty; a run whose processes cannot all be
// found and killed within the bound fails instead of being checked while they may still write.
import { SandboxError, fromNative } from '../../errors.js';
import { callNative } from '../../native/load.js';

/** One listing of a run's processes. */
export interface RunMembersListing {
  /** Pids of processes under this run's profile. */
  members: number[];
  /**
   * Listed processes of the user that could not be told apart (a check failed, usually because the
   * process ended between the listing and the check: it may have been a member that forked first).
   */
  undecided: number;
  /** The errno of the first failed check, when one failed. */
  undecidedErrno?: number;
}

/** What the sweep depends on (injectable, so the loop is tested on any OS). */
export interface SweepDeps {
  /** This run's processes now; may throw (the addon's error). */
  list: () => RunMembersListing;
  /** Sends SIGKILL to one pid; a failure (the process is already gone) is ignored. */
  kill: (pid: number) => void;
  /** Milliseconds, monotonic. */
  now: () => number;
  /** Resolves after `ms` milliseconds (0: after the current turn of the event loop). */
  sleep: (ms: number) => Promise<void>;
}

/** How long the sweep may take: a run whose processes outlast it fails. */
export interface SweepBounds {
  /** Rounds at most. */
  rounds: number;
  /** Milliseconds at most from the first listing. */
  ms: number;
}

/**
 * The default bounds: a listing is a few hundred system calls and a killed process is gone within
 * milliseconds, so anything left after this many rounds keeps making new processes faster than
 * they are killed (a fork storm), which is reported rather than waited out.
 */
export const SWEEP_BOUNDS: SweepBounds = { rounds: 200, ms: 5000 };

/** The pause before round `round` (1-based): none for the first rounds, then growing to 50 ms. */
export function sweepPause(round: number): number {
  return round <= 3 ? 0 : Math.min(50, 2 ** (round - 3));
}

/** A finished sweep: how many rounds it took and how many kills it sent. */
export interface SweepResult {
  rounds: number;
  killed: number;
}

/**
 * Lists this run's processes and SIGKILLs them, round after round, until a listing finds none and
 * nothing undecided. Rejects with a `protected_path` SandboxError (layer seatbelt) when the listing
 * fails or the bounds are reached: the run's processes may still be writing, so the protected-path
 * check must not run as if they were gone.
 */
export async function sweepRunMembers(deps: SweepDeps, bounds: SweepBounds = SWEEP_BOUNDS): Promise<SweepResult> {
  const start = deps.now();
  let killed = 0;
  for (let round = 1; ; round++) {
    let listing: RunMembersListing;
    try {
      listing = deps.list();
    } catch (error) {
      const cause = fromNative(error);
      throw new SandboxError('protected_path', `macos-seatbelt: the processes of this run could not be listed after it ended (${cause.code}: ${cause.message}), so the protected paths (.git hooks and config, .zero, agent configs) were not checked; do not run git or an agent in its write roots before looking at them`, {
        cause,
        layer: 'seatbelt',
        syscall: 'macosRunMembers',
      });
    }
    if (listing.members.length === 0 && listing.undecided === 0) return { rounds: round, killed };
    // kill(0) or kill(-1) would signal a whole group or every process of the user: never.
    const bad = listing.members.find((pid) => !Number.isSafeInteger(pid) || pid <= 1);
    if (bad !== undefined) throw new SandboxError('internal_error', `macos-seatbelt: the listing of this run's processes held the pid ${String(bad)}`, { layer: 'seatbelt', syscall: 'macosRunMembers' });
    for (const pid of listing.members) {
      deps.kill(pid);
      killed++;
    }
    const elapsed = deps.now() - start;
    if (round >= bounds.rounds || elapsed >= bounds.ms) {
      const what = `${listing.members.length} process(es) still running under its profile${listing.undecided > 0 ? ` and ${listing.undecided} that could not be told apart (sandbox_check errno ${listing.undecidedErrno ?? 0})` : ''}`;
      throw new SandboxError('protected_path', `macos-seatbelt: processes of this run outlived it: after ${round} rounds of kills over ${Math.round(elapsed)} ms, ${what} (a fork storm, or processes that left the command's process group), so the protected paths (.git hooks and config, .zero, agent configs) were not checked; do not run git or an agent in its write roots before looking at them`, {
        layer: 'seatbelt',
        syscall: 'macosRunMembers',
      });
    }
    await deps.sleep(sweepPause(round + 1));
  }
}

/** The production listing: the addon's macosRunMembers (macOS builds only). */
export function nativeRunMembers(allowed: string, denied: string): RunMembersListing {
  return callNative((native) => {
    if (typeof native.macosRunMembers !== 'function') {
      throw new SandboxError('native_unavailable', 'the native addon has no macosRunMembers (it was built for another OS or is out of date): rebuild it on macOS');
    }
    return native.macosRunMembers(allowed, denied);
  });
}

/** The production dependencies of the sweep for one run. */
export function defaultSweepDeps(list: () => RunMembersListing): SweepDeps {
  return {
    list,
    kill: (pid) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already (ESRCH): the next listing says whether anything is left.
      }
    },
    now: () => performance.now(),
    sleep: (ms) => new Promise((resolve) => (ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms))),
  };
}
