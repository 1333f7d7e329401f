// SPDX-License-Identifier: MIT
// The Linux backend: prepares a run (plan, host facts, runtime-state lease), refuses to run weaker
// than asked, and starts the sandbox through the addon (namespaces, Landlock, seccomp; a prewarmed
// sandbox when one matches). The lifecycle around it is lib/sandbox/process.ts.
import { SandboxError } from '../../errors.js';
import { handOverFacts, HostFacts } from '../../host-facts.js';
import { callNative, callNativeAsync, nativeBindingPath } from '../../native/load.js';
import type { NativeExit, NativeSpawned } from '../../native/types.js';
import { layersDisabledForTesting, probeSync, type LayerName, type ProbeReport } from '../../probe.js';
import { createPidsLimit, pidNamespaceMax, pidsCgroupUsable, pidsLimitKept, pidsLimitMade, type PidsLimit } from '../../sandbox/cgroup.js';
import type { OsExit, OsProcess, PreparedRun, SandboxBackend, StartIo } from '../../sandbox/contract.js';
import { DEFAULT_PROCESSES } from '../../sandbox/default-limits.js';
import { maskedReadDenial } from '../../sandbox/denials.js';
import { checkOptions, commandScript, normalizeCommand, type SandboxCommand, type SandboxOptions } from '../../sandbox/options.js';
import { resolveWorkspace } from '../../sandbox/plan.js';
import { rememberedPlan } from '../../sandbox/plan-memo.js';
import { buildPrewarmKey, prewarmEnabled, prewarmPool } from '../../sandbox/prewarm.js';
import { beginGuard, checkProtectedPaths, guardProtectedPaths, type GuardedRun } from '../../sandbox/protected.js';
import { acquireRuntimeState } from '../../sandbox/runtime-state.js';
import { awayWhile, nextPiece, paced, resumePiece } from '../../sandbox/start-pacing.js';
import type { ScansAhead } from '../../sandbox/beneath.js';
import { checkScansAhead } from '../../sandbox/scans-ahead.js';
import { noteExtraWriteRoots } from '../../sandbox/earlier-roots.js';
import { backendForPlatform } from '../platform-table.js';
import type { BackendInfo, SandboxPlan } from '../types.js';
import { maskedPaths } from './mounts.js';
import { hostViewOf, launchSpec, type LinuxNativeSpec, type StdioMode } from './spec.js';
import { rememberedSandbox } from './spec-memo.js';
import { coldSpec, launchPrewarmed, osProcessOf, stdioModes, toOsExit } from './native-io.js';
import { shareSpec } from './shared-specs.js';
import { callerEnvironment } from './caller-env.js';
import { commandEnvironment } from './command-env.js';

export { sharedSpecCount } from './shared-specs.js';

/** The layers a plan needs on Linux. */
export function requiredLayers(plan: Pick<SandboxPlan, 'network'>): LayerName[] {
  const linux = backendForPlatform('linux')!;
  const layers: LayerName[] = [...linux.layers];
  if (plan.network === 'deny' && linux.networkDenyLayer !== undefined) layers.push(linux.networkDenyLayer);
  return layers;
}

function unavailable(missing: LayerName[], report: ProbeReport): SandboxError {
  const details = missing
    .map((name) => `${name}: ${report.layers[name]?.reason ?? 'not available'} (fix: ${report.layers[name]?.fix ?? 'n/a'})`)
    .join('; ');
  return new SandboxError('sandbox_unavailable', `the sandbox cannot enforce the policy here, so nothing ran. Missing ${details}`, { layer: missing[0] as string });
}

/** What the Linux start needs to know about the host, from cheap checks. */
export interface LinuxContext {
  abi: number;
  isRoot: boolean;
  arch: string;
}

/**
 * Fails closed before anything runs, on what is cheap to know: the Landlock ABI (one system call)
 * and layers switched off for testing. The spawn itself is the real test of every other layer;
 * when it fails, `explainSpawnFailure` runs the full probe to say why.
 */
export function assertEnforceable(plan: Pick<SandboxPlan, 'network'>): LinuxContext {
  const required = requiredLayers(plan);
  const disabled = layersDisabledForTesting().filter((name) => required.includes(name));
  const abi = callNative((binding) => binding.landlockAbi());
  if (disabled.length > 0 || abi < 1) {
    const report = probeSync();
    const missing = required.filter((name) => report.layers[name]?.available !== true);
    throw unavailable(missing.length > 0 ? missing : ['landlock'], report);
  }
  return { abi, isRoot: process.getuid?.() === 0, arch: process.arch };
}

/**
 * What the engine needs to know about the backend, from the same cheap checks: the spawn itself
 * proves the rest (and a failing layer then refuses with the probe's explanation).
 */
export function quickLinuxInfo(): BackendInfo {
  const base = { name: 'linux-native' as const, platform: 'linux', nativeIsolation: true, commandWrapping: true, setupInitialized: true };
  try {
    assertEnforceable({ network: 'deny' });
    return { ...base, available: true };
  } catch (error) {
    return { ...base, available: false, message: error instanceof Error ? error.message : String(error) };
  }
}

const SPAWN_LAYERS = new Set<string>(['userns', 'mount', 'netns', 'landlock', 'seccomp', 'capabilities']);

/**
 * A spawn that failed in a sandbox layer becomes sandbox_unavailable, explained by the probe. One
 * that ran out of descriptors, processes or namespaces stays what it is: the probe would run out
 * the same way and then blame whichever layer its own fork or unshare was for.
 */
export function explainSpawnFailure(error: unknown, plan: Pick<SandboxPlan, 'network'>): unknown {
  if (!(error instanceof SandboxError) || error.layer === undefined || !SPAWN_LAYERS.has(error.layer)) return error;
  if (error.code === 'resource_exhausted') return error;
  const report = probeSync();
  const missing = requiredLayers(plan).filter((name) => report.layers[name]?.available !== true);
  if (missing.length === 0) return error;
  const wrapped = unavailable(missing, report);
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

/**
 * Prepares a run from a command and options: validation, environment scrub, managed runtime
 * state (per-workspace tool caches outside the workspace become write roots and the env points
 * tools at them; the lease lingers briefly after a run, so a burst in one workspace prepares the
 * state once) and the plan, with the host facts it was resolved with.
 */
export function prepareLinux(command: SandboxCommand, options: SandboxOptions): PreparedRun {
  const argv = normalizeCommand(command, options.shell);
  const checked = checkOptions(options);
  // process.env read once into a plain object: each read of it makes new strings of every name and
  // value, and the scrub below and the plan's key would each read all of it (a tenth of what a run
  // allocated). The same answers: both are taken at this moment either way.
  const callerEnv = callerEnvironment();
  const source = options.env ?? callerEnv;
  const facts = new HostFacts();
  // Refused before any state is made for it (the plan below checks it again, from the memo).
  resolveWorkspace(checked.workspace, facts);
  const runtime = acquireRuntimeState(checked.workspace ?? process.cwd(), { argv, lingerMs: 3000, facts, env: callerEnv });
  try {
    const { env: commandEnv, scrubbed: scrubbedEnv } = commandEnvironment(source, { network: checked.network, pass: checked.envPass, overrides: runtime?.env ?? {} });
    const envs = options.env === undefined ? [process.env] : [process.env, options.env];
    // Kept across runs of the same policy while nothing it looked at changed (plan-memo.ts).
    const plan = rememberedPlan({ argv, options: checked, envs: options.env === undefined ? [callerEnv] : [callerEnv, options.env], commandEnv, scrubbedEnv, runtimeWriteRoots: runtime?.writeRoots ?? [], facts });
    // Remembered so that a later run refuses a workspace reached through a link planted in one.
    noteExtraWriteRoots(plan.writeRoots, [plan.workspace, ...(runtime?.writeRoots ?? [])]);
    // The release is kept until the run's exit: it holds the lease's own release, not the lease
    // (its environment) nor this scope.
    return { plan, backend: 'linux-native', takeFacts: handOverFacts(facts), script: commandScript(command), envs, release: once(runtime?.release ?? (() => {})) };
  } catch (error) {
    runtime?.release();
    throw error;
  }
}

/** `fn` on the first call only. */
function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

type LinuxSpec = LinuxNativeSpec;

/** Starts the next prewarmed sandboxes; a failure leaves the cold path, as a failed set-up does. */
function warmQuietly(warm: () => void): void {
  try {
    warm();
  } catch {
    // the next run starts cold
  }
}

/**
 * A start decided: either the process already (a prewarmed sandbox took the command), or the
 * cold spawn still to make with `spec`, then `finish` (or `fail` with what the spawn threw).
 */
type LinuxStart =
  | { os: OsProcess }
  | { spec: object; exited(raw: NativeExit): void; finish(native: NativeSpawned): OsProcess; fail(error: unknown): unknown };

/**
 * Everything of a Linux start that runs on the caller's thread: the cheap checks, the git guard,
 * the spec, a prewarmed sandbox when one matches. A cold start's clone is left to the caller
 * (startLinux makes it within the call, startLinuxAsync on the addon's spawn threads).
 */
function beginLinux(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void): LinuxStart {
  return decideLinux(prepared, io, onExit, noteLinux(prepared));
}

/** The first piece of a Linux start: the cheap checks and the protected-path notes (published). */
interface NotedStart {
  context: LinuxContext;
  facts: ReturnType<PreparedRun['takeFacts']>;
  guarded: GuardedRun;
}

function noteLinux(prepared: PreparedRun): NotedStart {
  const context = assertEnforceable(prepared.plan);
  // The filesystem facts the plan was resolved with (this call only): each path looked up once.
  const facts = prepared.takeFacts();
  // Every git file that could make host git run code later: read-only now, checked after the run.
  // Its notes are published before the sandbox starts (a cold start's command may run before the
  // clone's promise settles): runs of the same write roots started meanwhile, in this process or
  // another, take them, until release() once the check has run or the start has failed.
  return { context, facts, guarded: guardProtectedPaths(prepared.plan) };
}

/**
 * noteLinux with the notes in pieces (beginGuard): in a burst a piece after the first may wait for
 * the event loop's next turn (start-pacing.ts), one start's notes no longer holding it whole.
 */
function noteLinuxInPieces(prepared: PreparedRun): NotedStart | Promise<NotedStart> {
  const context = assertEnforceable(prepared.plan);
  const facts = prepared.takeFacts();
  // The repositories' walk off the caller's thread: the step after it waits for it, then takes its turn.
  const guarding = beginGuard(prepared.plan, true);
  // Within the call while the slice has time: a start with no burst around it is decided at once.
  const go = (guarded: GuardedRun | undefined): NotedStart | Promise<NotedStart> => {
    while (guarded === undefined) {
      const waiting = guarding.pending();
      if (waiting !== undefined) return awayWhile(waiting).then(() => resumePiece(() => guarding.step())).then(go);
      const next = nextPiece(() => guarding.step());
      if (next instanceof Promise) return next.then(go);
      guarded = next;
    }
    return { context, facts, guarded };
  };
  return go(guarding.step());
}

/** Builds the plan's spec for the process limit chosen when it is called. */
function specBuilder(plan: SandboxPlan, stdio: [StdioMode, StdioMode, StdioMode], context: LinuxContext, view: ReturnType<typeof hostViewOf>, epoch: number, limit: () => { byCgroup: boolean; pidMax: number | undefined }): () => LinuxSpec {
  return () => {
    const { byCgroup, pidMax } = limit();
    // The sandbox part is kept across runs of the same plan while nothing it looked at changed (spec-memo.ts).
    return launchSpec(plan, stdio, rememberedSandbox(plan, {
      landlockAbi: context.abi,
      isRoot: context.isRoot,
      arch: context.arch,
      bindingPath: nativeBindingPath() ?? '',
      ...(byCgroup ? { pidsCgroup: true } : {}),
      ...(pidMax === undefined ? {} : { pidMax }),
    }, view, epoch));
  };
}

/** The rest of a Linux start, after its notes: the spec, a prewarmed sandbox or the cold spawn to make. */
function decideLinux(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void, noted: NotedStart): LinuxStart {
  const { plan } = prepared;
  const { context, guarded } = noted;
  // The closures below live until the exit: they hold the guard's parts and the plan's network
  // mode, not the plan (a burst's runs in flight would each keep theirs for the young collections
  // of the caller's heap to copy).
  const { release, guard, started } = guarded;
  const { network } = plan;
  const capture = io.capture;
  // The facts serve the spec only: held by the builder below, which is let go of once the spec is
  // made (the closures of this call live until the exit, and with them what they hold).
  const view = hostViewOf(noted.facts);
  try {
    // A root caller's process limit (RLIMIT_NPROC does not bind root) is a pids cgroup where a
    // writable pids hierarchy exists, else the sandbox PID namespace's own pid_max (Linux 6.14+).
    // With neither, a cap the caller set is refused (buildRlimits) and the default cap is reported
    // as not enforced (limitsNotEnforced), never dropped silently. A prewarmed sandbox joined a pids
    // cgroup of its own with the cap (part of its key) when it was set up; a cold start gets one below.
    const processes = plan.limits.processes ?? DEFAULT_PROCESSES;
    let byCgroup = context.isRoot && pidsCgroupUsable();
    let pidMax = context.isRoot && !byCgroup ? pidNamespaceMax(processes) : undefined;
    let specFor: (() => LinuxSpec) | undefined = specBuilder(guarded.plan, stdioModes(io), context, view, noted.facts.epoch, () => ({ byCgroup, pidMax }));
    let spec = specFor();
    // What the run keeps until its exit (the mounts its masked reads are reported against, the
    // spec its use notes to the prewarm pool): a copy shared by the runs of its policy once the
    // start is decided (sharedSpec).
    let kept = spec;
    let unshare = (): void => {};
    let pids: PidsLimit | undefined;
    // The sandbox is gone (pid 1 reaped, its namespace emptied): the cgroup says whether a fork was
    // refused, else the init's own refused probe fork; the init found the private /tmp or /dev/shm full.
    const exited = (raw: NativeExit): void => {
      const exit = toOsExit(raw, capture !== undefined);
      const hit = [
        ...(pids?.hit() === true || raw.processCapHit === true ? ['processes'] : []),
        ...(raw.tmpFull === true ? ['tmpBytes'] : []),
        ...(raw.shmFull === true ? ['shmBytes'] : []),
      ];
      if (hit.length > 0) exit.limitsHit = hit;
      const masked = maskedPaths(kept.linux.mounts, raw.maskedReads);
      if (masked.length > 0) {
        const named = new Set(guarded.plan.userDenyRead ?? []);
        exit.platformDenials = masked.map(({ path, mask }) => maskedReadDenial(path, mask, named.has(mask)));
      }
      pids?.remove();
      onExit(exit);
    };
    const script = prepared.script;
    // A long script's descriptor is installed at clone time: such a run never uses a prewarmed sandbox.
    const warmable = prewarmEnabled(io.prewarm) && script === undefined;
    const pidsCap = byCgroup ? processes : undefined;
    let key = warmable ? buildPrewarmKey(spec, pidsCap) : undefined;
    let warmed: NativeSpawned | null = null;
    const warm = key === undefined ? undefined : prewarmPool.take(key);
    if (warm !== undefined) {
      pids = warm.pids;
      warmed = launchPrewarmed(warm, spec, capture, exited);
      if (warmed === null) pids = undefined;
    }
    const finish = (native: NativeSpawned, prewarmed: boolean): OsProcess => {
      // A later run waits for this sandbox to be gone before it runs a check this process missed.
      started(native.pid);
      const limitsNotEnforced = context.isRoot && !byCgroup && pidMax === undefined ? ['processes'] : [];
      // The use is noted, and the next sandboxes for the plan set up, once this sandbox is gone
      // and checked: a set-up (plan, clone, mounts, Landlock, the init's exec) started beside the
      // command took the CPU its command, its init, its namespaces' teardown and the check need
      // (on two cores a prewarmed run was slower than a cold one), and a sandbox warmed during a
      // long command sits idle. It starts before the exit is delivered: the clone and the set-up
      // run on a spawn thread while the caller's next start (plan, notes, spec) holds its own
      // thread, instead of after that start, beside its command. Prewarming is an optimisation:
      // nothing it throws reaches the check's result.
      let warm: (() => void) | undefined;
      if (key !== undefined) {
        const generation = capture?.prewarmGeneration ?? prewarmPool.generation;
        const warmKey = key;
        const warmCap = byCgroup ? processes : undefined;
        warm = () => prewarmPool.noteUse(warmKey, kept, generation, warmCap);
      }
      // The check's repository scans off the caller's thread (scans-ahead.ts), once the sandbox is gone.
      let scans: ScansAhead | undefined;
      const prepareCheck = (): Promise<void> =>
        checkScansAhead(guard.git).then(
          (made) => void (scans = made),
          () => undefined,
        );
      return osProcessOf(native, { capturesOutput: capture !== undefined, prewarmed, limitsNotEnforced }, () => {
        const made = scans;
        scans = undefined;
        try {
          return made === undefined ? checkProtectedPaths(guard) : made.use(() => checkProtectedPaths(guard));
        } finally {
          release();
          // A piece of its own (start-pacing.ts): at once when nothing waits, as in back-to-back
          // use; in a burst, after the work of the exits that came before it.
          if (warm === undefined) unshare();
          else {
            paced(() => {
              warmQuietly(warm);
              unshare();
            });
          }
        }
      }, prepareCheck);
    };
    if (warmed !== null) {
      if (key !== undefined) ({ key, spec: kept, unshare } = shareSpec(key, spec));
      return { os: finish(warmed, true) };
    }
    if (byCgroup) {
      pids = createPidsLimit(processes, undefined, false);
      if (pids === undefined) {
        // No pids cgroup after all (the hierarchy refused one): the PID namespace's pid_max, else nothing.
        byCgroup = false;
        pidMax = pidNamespaceMax(processes);
        spec = specFor();
        key = warmable ? buildPrewarmKey(spec) : undefined;
      }
    }
    specFor = undefined;
    const cold = coldSpec(spec, pids?.fd, capture, script);
    if (key !== undefined) ({ key, spec: kept, unshare } = shareSpec(key, spec));
    return {
      spec: cold,
      exited,
      // The pids cgroup's descriptor stays open until the spawn has returned (the sandbox joined it).
      finish: (native) => {
        pids?.closeFd();
        return finish(native, false);
      },
      fail: (error) => {
        release();
        unshare();
        pids?.closeFd();
        pids?.remove();
        return explainSpawnFailure(error, { network });
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** Starts a prepared run in a Linux sandbox (the `Starter` of this backend). */
export function startLinux(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void): OsProcess {
  const start = beginLinux(prepared, io, onExit);
  if ('os' in start) return start.os;
  let native: NativeSpawned;
  try {
    native = callNative((binding) => binding.spawn(start.spec, start.exited));
  } catch (error) {
    throw start.fail(error);
  }
  return start.finish(native);
}

/**
 * startLinux with a cold start's clone on the addon's spawn threads (the `AsyncStarter` of this backend):
 * the clone holds its thread until the sandbox's first process has set up its mounts, Landlock and
 * seccomp and executed the init, tens of milliseconds for a large policy, which the caller's event
 * loop no longer waits for. Everything that decides the start still happens within the call.
 */
export async function startLinuxAsync(prepared: PreparedRun, io: StartIo, onExit: (exit: OsExit) => void): Promise<OsProcess> {
  const noting = noteLinuxInPieces(prepared);
  const noted = noting instanceof Promise ? await noting : noting;
  // In a burst, the spec and the clone may wait for the event loop's next turn (start-pacing.ts);
  // the notes stay published meanwhile, as they do while the clone runs. The addon's synchronous
  // part of the spawn (the plan read from the spec, the pipes) belongs to that piece.
  const decide = () => {
    const start = decideLinux(prepared, io, onExit, noted);
    if ('os' in start) return { start };
    try {
      return { start, spawning: callNative((binding) => binding.spawnAsync === undefined ? Promise.resolve(binding.spawn(start.spec, start.exited)) : binding.spawnAsync(start.spec, start.exited)) };
    } catch (error) {
      throw start.fail(error);
    }
  };
  // A root caller's pids cgroup, when none is kept for its cap, is made off the caller's thread
  // first: in a burst a mkdir there waited milliseconds for the kernel's cgroup lock. The kept one
  // seen now may be taken by another start of the burst before this one's turn: the turn looks
  // again and, finding none, waits for one made ahead once more (then decides whatever it finds).
  const cap = noted.context.isRoot && pidsCgroupUsable() ? (prepared.plan.limits.processes ?? DEFAULT_PROCESSES) : undefined;
  const made = cap === undefined ? undefined : pidsLimitMade(cap);
  const decideIfKept = () => (cap === undefined || pidsLimitKept(cap) ? decide() : undefined);
  const deciding = made === undefined ? nextPiece(decideIfKept) : awayWhile(made).then(() => resumePiece(decide));
  let decided = deciding instanceof Promise ? await deciding : deciding;
  if (decided === undefined) {
    const again = pidsLimitMade(cap as number);
    const redeciding = again === undefined ? nextPiece(decide) : awayWhile(again).then(() => resumePiece(decide));
    decided = redeciding instanceof Promise ? await redeciding : redeciding;
  }
  const { start, spawning } = decided;
  if ('os' in start) return start.os;
  let native: NativeSpawned;
  try {
    native = await callNativeAsync(() => spawning as Promise<NativeSpawned>);
  } catch (error) {
    throw start.fail(error);
  }
  // The clones of a burst complete together: the host-side work after each takes its turn.
  const finished = resumePiece(() => start.finish(native));
  return finished instanceof Promise ? await finished : finished;
}

/** The Linux backend as the lifecycle uses it. */
export const linuxBackend: SandboxBackend = { prepare: prepareLinux, start: startLinux, startAsync: startLinuxAsync };
