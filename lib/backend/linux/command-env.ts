// SPDX-License-Identifier: MIT
// The command's environment of a Linux run (buildSandboxEnv), kept from the last run while what it
// is made of is the same: the caller's environment as the same frozen object (caller-env.ts), the
// same variables passed through, network mode and managed-state variables. Scrubbing 3,000
// variables (a name check and a value check each) took about 2.5 ms of every run; the answer kept
// is frozen, so the spec's strings can be handed out again by identity (spec.ts).
import { buildSandboxEnv } from '../../env.js';
import { sameList, samePairs } from '../../same-lists.js';

type Env = Readonly<Record<string, string | undefined>>;

interface Inputs {
  network: 'deny' | 'allow';
  pass: readonly string[];
  overrides: Readonly<Record<string, string>>;
}

interface Kept {
  source: Env;
  network: string;
  pass: readonly string[];
  overrides: Array<[string, string]>;
  env: Readonly<Record<string, string>>;
  scrubbed: readonly string[];
}

let kept: Kept | undefined;

/**
 * The command's environment from `source` and the names it scrubbed (a list of the caller's own).
 * From a frozen source the same frozen object as the last call's when every input is the same;
 * from any other source (a caller's own `env` option) made afresh.
 */
export function commandEnvironment(source: Env, inputs: Inputs): { env: Readonly<Record<string, string>>; scrubbed: string[] } {
  const overrides = Object.entries(inputs.overrides);
  const last = kept;
  if (last !== undefined && last.source === source && last.network === inputs.network && sameList(last.pass, inputs.pass) && samePairs(last.overrides, overrides)) {
    return { env: last.env, scrubbed: [...last.scrubbed] };
  }
  const scrubbed: string[] = [];
  const built = buildSandboxEnv(source, { backend: 'linux-native', network: inputs.network, pass: inputs.pass, tmpDir: '/tmp', overrides: inputs.overrides, scrubbed });
  if (!Object.isFrozen(source)) return { env: built, scrubbed };
  const env = Object.freeze(built);
  kept = { source, network: inputs.network, pass: [...inputs.pass], overrides, env, scrubbed: Object.freeze([...scrubbed]) };
  return { env, scrubbed };
}
