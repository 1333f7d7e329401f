// SPDX-License-Identifier: MIT
// The addon's parsed copy of a kept policy's mounts and Landlock rules, for cold spawns: a policy
// of a thousand write roots and deny entries has thousands of mount steps, which the addon would
// otherwise convert from JavaScript objects on the caller's thread at every run (a few
// milliseconds each). Only a spec part kept by the spec memo is prepared: it is deep-frozen
// (spec-memo.ts), so the handle made from it stays true to it for as long as both live, and it is
// found again by identity. A part built afresh (not kept) is converted with its spawn as before.
import { callNative } from '../../native/load.js';
import type { PreparedPolicy } from '../../native/types.js';
import type { LinuxNativeSpec } from './spec.js';

type LinuxPart = LinuxNativeSpec['linux'];

/** Handles by the kept mounts array they were made from, with the rules array made alongside. */
const handles = new WeakMap<readonly unknown[], { rules: readonly unknown[]; handle: PreparedPolicy }>();
let made = 0;

/** @internal How many policies were prepared so far (tests). */
export function preparedPolicyCount(): number {
  return made;
}

/**
 * `linux` for the addon: with its mounts and Landlock rules replaced by the handle of their
 * parsed copy when both are kept (frozen) arrays, else as it is.
 */
export function withPreparedPolicy(linux: LinuxPart): object {
  const { mounts, landlockRules } = linux;
  if (!Object.isFrozen(mounts) || !Object.isFrozen(landlockRules)) return linux;
  let known = handles.get(mounts);
  if (known === undefined || known.rules !== landlockRules) {
    const handle = callNative((binding) => binding.preparePolicy?.({ mounts, landlockRules }));
    if (handle === undefined) return linux;
    made++;
    known = { rules: landlockRules, handle };
    handles.set(mounts, known);
  }
  const { mounts: _mounts, landlockRules: _rules, ...rest } = linux;
  return { ...rest, prepared: known.handle };
}
