// SPDX-License-Identifier: MIT
// A native spawn spec for `argv` in `workspace`, built as runSandboxed builds one (plan, checks,
// Linux spec), for tests that call the addon's spawn functions themselves. `release` lets go of
// what the plan holds.
import { assertEnforceable, prepareLinux } from '../../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf } from '../../lib/backend/linux/spec.js';
import { HostFacts } from '../../lib/host-facts.js';
import { nativeBindingPath } from '../../lib/native/load.js';

export function nativeSpec(argv: string[], workspace: string): { spec: ReturnType<typeof buildLinuxSpec>; release(): void } {
  const prepared = prepareLinux(argv, { workspace });
  const context = assertEnforceable(prepared.plan);
  const spec = buildLinuxSpec(prepared.plan, ['ignore', 'ignore', 'ignore'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' }, hostViewOf(new HostFacts()));
  return { spec, release: () => prepared.release() };
}
