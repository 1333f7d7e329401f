// SPDX-License-Identifier: MIT
// One spec per policy for the Linux runs in flight (see sharedSpecs).
import type { LinuxNativeSpec } from './spec.js';

/**
 * The spec of each prewarm key that runs in flight hold, with that key. Runs of one policy build
 * equal specs as far as the key goes (it is the spec's whole sandbox: mounts, Landlock, seccomp,
 * namespaces; what it leaves out, the command's argv, env, cwd and limits, is given at the launch
 * and is never read from what a run keeps), so a run keeps this copy until its exit instead of its
 * own: a burst of 256 runs in flight held 256 specs and keys (~5 KiB of key text alone each),
 * which every young collection of the caller's heap copied. The last run of a policy to end lets
 * it go: a caller with no run in flight keeps no spec (a large policy's is large).
 */
const sharedSpecs = new Map<string, { key: string; spec: LinuxNativeSpec; users: number }>();

export function shareSpec(key: string, spec: LinuxNativeSpec): { key: string; spec: LinuxNativeSpec; unshare: () => void } {
  let entry = sharedSpecs.get(key);
  if (entry === undefined) {
    entry = { key, spec, users: 0 };
    sharedSpecs.set(key, entry);
  }
  entry.users++;
  const held = entry;
  let done = false;
  const unshare = (): void => {
    if (done) return;
    done = true;
    if (--held.users === 0 && sharedSpecs.get(held.key) === held) sharedSpecs.delete(held.key);
  };
  return { key: held.key, spec: held.spec, unshare };
}

/** @internal How many policies' specs runs in flight share now (tests). */
export function sharedSpecCount(): number {
  return sharedSpecs.size;
}
