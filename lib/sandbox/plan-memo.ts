// SPDX-License-Identifier: MIT
// The plan of a repeated policy, kept across runs (watched-memo.ts): a policy of a thousand write
// roots and deny entries is resolved once, not on every run, while nothing it looked at changed.
//
// What resolvePlan reads, and why each is covered:
// - The options it uses (workspace, cwd, network, allowWrite, allowRead, denyRead, the config's
//   missing deny-read entries, denyWrite, limits) and the extra write roots of the managed runtime
//   state: in the key, copied and compared element by element.
// - The environments (ours and the command's: the credential baseline, HOME, XDG_*): in the key,
//   every variable of each, in order. process.cwd() (the default workspace, relative paths and the
//   credential overrides), the uid and gid (a root caller's extra deny set): in the key.
// - The host facts of the handover rule (currentHandoverHost: the homes, the node and package
//   directories, the settings and state directories, as that module resolves and remembers them):
//   the host object in the key (the same facts give the same object). Our own files (own-files.ts):
//   the binding's and package's real paths in the key; the node binary and the dependency closure
//   are read once per process by that module anyway.
// - Every lstat, stat, realpath and kind of HostFacts, and answers it derived from a walk or a
//   listing (noteReal, noteLooked, noteListing): logged per path asked (host-facts.ts); the
//   directory of each path is watched. A stat or realpath that follows a link: off the memo.
// - The write roots' listings (root-walk.ts) and the subdirectories whose `.git` the listing looked
//   at; readdir in the nested scan and the credential directories (dir-listing.ts, plan.ts): each
//   directory listed is watched itself.
// - The deny entries' kinds (deny-entry-memo.ts, a walk that follows no link): noted into the
//   HostFacts and logged when asked; their directories are watched.
// - The credential deny set: computed afresh under an open log (credential-memo.ts steps aside),
//   its looks logged as above.
// - Content: the `.git` file of a linked worktree or submodule and its `commondir` (plan.ts
//   linkedGitPaths): read again on every use of the kept plan and compared. Nothing else of
//   resolvePlan reads a file's content (.npmrc, env files and git configs are read by the runtime
//   state, the guard and the check, which run on every run).
// - The run's own argv, environment and scrubbed names are not part of the plan kept: each run's
//   are put in.
import type { SandboxPlan } from '../backend/types.js';
import { HostFacts } from '../host-facts.js';
import { sameList, samePairs } from '../same-lists.js';
import { currentHandoverHost } from './host-handover.js';
import { POLICIES_KEPT } from './kept-bounds.js';
import { ownFilesFacts } from './own-files.js';
import { resolvePlan, type ResolvedPlanInput } from './plan.js';
import { WatchedMemo } from './watched-memo.js';

interface PlanKey {
  strings: Array<string | undefined>;
  lists: Array<readonly string[]>;
  limits: Array<[string, unknown]>;
  envs: Array<Array<[string, string | undefined]>>;
  host: object;
  uid: number | undefined;
  gid: number | undefined;
}

function sameKey(a: PlanKey, b: PlanKey): boolean {
  return (
    a.host === b.host &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    sameList(a.strings, b.strings) &&
    a.lists.length === b.lists.length &&
    a.lists.every((list, i) => sameList(list, b.lists[i] as readonly string[])) &&
    samePairs(a.limits, b.limits) &&
    a.envs.length === b.envs.length &&
    a.envs.every((env, i) => samePairs(env, b.envs[i] as Array<[string, string | undefined]>))
  );
}

function copyKey(key: PlanKey): PlanKey {
  return { ...key, lists: key.lists.map((list) => [...list]) };
}

// The entries of a frozen environment (the caller's, kept while it is unchanged: caller-env.ts),
// listed once: the same list then compares by identity with the key kept.
const frozenEntries = new WeakMap<object, Array<[string, string | undefined]>>();

function envEntries(env: Readonly<Record<string, string | undefined>>): Array<[string, string | undefined]> {
  if (!Object.isFrozen(env)) return Object.entries(env);
  let entries = frozenEntries.get(env);
  if (entries === undefined) {
    entries = Object.freeze(Object.entries(env)) as Array<[string, string | undefined]>;
    frozenEntries.set(env, entries);
  }
  return entries;
}

function planKey(input: ResolvedPlanInput): PlanKey {
  const { options } = input;
  return {
    strings: [options.workspace, options.cwd, options.network, process.cwd(), ownFilesFacts()],
    // Held as given for the comparison; copied only when kept.
    lists: [options.allowWrite, options.allowRead, options.denyRead, options.denyReadIfAppears, options.denyWrite, input.runtimeWriteRoots ?? []],
    limits: Object.entries(options.limits).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    envs: input.envs.map(envEntries),
    host: currentHandoverHost(),
    uid: process.getuid?.(),
    gid: process.getgid?.(),
  };
}

const plans = new WatchedMemo<PlanKey, SandboxPlan>(POLICIES_KEPT, sameKey, copyKey);

/**
 * resolvePlan(input), or the plan kept for the same inputs while nothing it looked at changed (see
 * the header), with this run's argv, environment and scrubbed names. Linux only (elsewhere the
 * watch set is absent and every run resolves). The plan's arrays are shared: frozen.
 */
export function rememberedPlan(input: ResolvedPlanInput): SandboxPlan {
  const facts = input.facts ?? new HostFacts();
  // The facts may hold answers from before this call (the workspace, the runtime state): their epoch.
  const kept = plans.get(planKey(input), () => resolvePlan({ ...input, facts, argv: [], commandEnv: {}, scrubbedEnv: [] }), facts.epoch);
  return { ...kept, argv: input.argv, env: input.commandEnv, scrubbedEnv: input.scrubbedEnv ?? [] };
}

/** Drops every kept plan (tests). */
export function forgetPlans(): void {
  plans.clear();
}
