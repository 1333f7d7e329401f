// SPDX-License-Identifier: MIT
// Prewarmed sandboxes. Creating namespaces, mounts and rulesets is most of a sandbox's start-up
// cost, so during a burst of commands with the same policy the next sandbox is set up ahead of time
// on the addon's spawn threads. Each is used at most once, only for a command whose freshly computed plan
// (mounts, Landlock rules, seccomp program, network, process cap) is identical, and is killed after
// being idle. A sandbox's mounts and Landlock rules were taken by path when it was set up and stay
// on what the paths led to then: when a path is replaced afterwards (a rename over a denied file,
// a write root removed and made again), a sandbox set up before would hide or grant the old file
// and not the new one. So each is set up under a watch set of every path its spec names (made
// before its set-up starts) and handed out only while that set is quiet.
import { isWithin } from '../path-within.js';
import type { LinuxNativeSpec } from '../backend/linux/spec.js';
import { callNative } from '../native/load.js';
import type { NativeExit, PreparedWarmSpec } from '../native/types.js';
import { createPidsLimit, pidsLimitMade, type PidsLimit } from './cgroup.js';
import { restRuns, usedLately } from './kept-bounds.js';
import { watchEntries, type WatchSet } from './watch-set.js';

/** An idle prewarmed sandbox is killed after this long. */
export const PREWARM_IDLE_MS = 5000;
/** At most this many policies keep prewarmed sandboxes at once. */
export const PREWARM_MAX_KEYS = 4;
/** Sandboxes kept ready (or being set up) per policy: three keep up with back-to-back commands. */
export const PREWARM_DEPTH = 3;
/** Policies whose last use is remembered at most (those older than PREWARM_IDLE_MS go first). */
const USES_KEPT = 256;
/** Resting policies remembered at most, the oldest rest going first. */
const RESTS_KEPT = 64;

/** Sandboxes the pools started, and those runs took, since the process started (for tests). */
export const prewarmCounts = { started: 0, taken: 0 };

export interface WarmSandbox {
  key: string;
  pid: number;
  dead: boolean;
  /** Receives the exit once the sandbox has been handed a command. */
  listener: ((exit: NativeExit) => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  /**
   * The pids cgroup its first process joined while it was set up (a root caller's process cap),
   * owned by the run that takes the sandbox; the pool hands it back when the sandbox dies unused.
   */
  pids: PidsLimit | undefined;
  /** Watches every path the sandbox's set-up took, from before the set-up: see specPaths. */
  watch: WatchSet | undefined;
}

// The JSON of recently seen seccomp programs (a few distinct ones per process), by content.
const seccompJson: Array<{ words: BigUint64Array; json: string }> = [];
const SECCOMP_JSON_KEPT = 8;
/** RLIMIT_NPROC's resource number on x86_64 and aarch64 (as lib/backend/linux/spec.ts). */
const RLIMIT_NPROC = 6;

function sameWords(a: BigUint64Array, b: BigUint64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `JSON.stringify` of the program's words as hex strings, remembered by content (a pure function). */
function buildSeccompJson(words: BigUint64Array): string {
  for (const entry of seccompJson) if (sameWords(entry.words, words)) return entry.json;
  const json = JSON.stringify(Array.from(words, (word) => word.toString(16)));
  seccompJson.unshift({ words: words.slice(), json });
  if (seccompJson.length > SECCOMP_JSON_KEPT) seccompJson.pop();
  return json;
}

/**
 * Everything that shapes the sandbox itself; argv, env, cwd, stdio and limits come at launch. The
 * text is `JSON.stringify({ ...linux minus rlimits, the run's cgroup and seccomp, nproc?, pidsCgroup?,
 * seccomp: words as hex })`. The RLIMIT_NPROC value is in the key: the init keeps the one it
 * started with, and checks the process cap with forks of its own against it. So is the cap of a
 * pids cgroup (`pidsCap`, a root caller's): each prewarmed sandbox joins one of its own with that
 * cap while it is set up, as a cold start joins the run's.
 */
export function buildPrewarmKey(spec: LinuxNativeSpec, pidsCap?: number): string {
  const { rlimits, cgroupProcsFd: _cgroup, seccomp, ...rest } = spec.linux;
  const nproc = rlimits.find((limit) => limit.resource === RLIMIT_NPROC);
  const cap = pidsCap === undefined ? '' : String(pidsCap);
  const filter = buildSeccompJson(seccomp);
  // A sandbox kept frozen by the spec memo (spec-memo.ts: deepFreeze) is the same object run after
  // run, its content unchangeable (the seccomp words, a typed array, are compared above): its key
  // is made once and the same string given again, so the pool's lookups hash it once and compare
  // it by identity, not the JSON of thousands of mounts and rules on every run.
  const frozen = Object.isFrozen(spec.linux) && Object.isFrozen(spec.linux.mounts) && Object.isFrozen(spec.linux.landlockRules) && Object.isFrozen(rlimits);
  const known = frozen ? keysOf.get(spec.linux)?.get(cap) : undefined;
  if (known !== undefined && known.filter === filter) return known.key;
  prewarmKeyCounts.built++;
  const head = JSON.stringify({ ...rest, ...(nproc === undefined ? {} : { nproc: nproc.soft }), ...(pidsCap === undefined ? {} : { pidsCgroup: pidsCap }) });
  const key = `${head === '{}' ? '{' : `${head.slice(0, -1)},`}"seccomp":${filter}}`;
  if (frozen) {
    const keys = keysOf.get(spec.linux) ?? new Map<string, { filter: string; key: string }>();
    keys.set(cap, { filter, key });
    keysOf.set(spec.linux, keys);
  }
  return key;
}

/** How often buildPrewarmKey made a key's JSON (tests count them). */
export const prewarmKeyCounts = { built: 0 };

/** buildPrewarmKey's answer per frozen sandbox and process cap, with the seccomp JSON it was made with. */
const keysOf = new WeakMap<object, Map<string, { filter: string; key: string }>>();

/**
 * The host paths a sandbox's set-up takes by path: each mount target and each Landlock rule opened
 * before the mounts (those opened after them are the sandbox's own /tmp, /dev and /proc). The
 * sandbox's own /proc and /dev are left out: what the spec names there are kernel objects and
 * devices, not files the host replaces, and on most hosts /dev and /proc cannot be watched.
 */
export function specPaths(spec: LinuxNativeSpec): string[] {
  const paths = new Set<string>();
  const add = (path: string) => {
    if (!isWithin('/proc', path, '/') && !isWithin('/dev', path, '/')) paths.add(path);
  };
  for (const op of spec.linux.mounts) add(op.path);
  for (const rule of spec.linux.landlockRules) if (!rule.afterMounts) add(rule.path);
  return [...paths];
}

/** What the pool keeps per policy: the addon's parsed spec, its paths and their watch set. */
interface WarmPolicy {
  handle: PreparedWarmSpec;
  paths: string[];
  watch: WatchSet | undefined;
  /** When its paths could not all be watched, last. */
  unwatchedAt: number | undefined;
}

/**
 * A watch set over a policy's paths for one sandbox. The policy keeps one set of its own: while
 * that is quiet, nothing the paths depend on has changed, and the sandbox's set is made from it
 * without looking at every path again (the cost of a set is then per directory watched, in C++).
 */
function watchAgain(policy: WarmPolicy): WatchSet | undefined {
  const again = policy.watch?.again();
  if (again !== undefined) return again;
  policy.watch?.release();
  // Paths that could not all be watched are not looked at again for a while (each try looks at
  // every path; its refills come three at a time).
  const now = Date.now();
  if (policy.unwatchedAt !== undefined && now - policy.unwatchedAt < PREWARM_IDLE_MS) return undefined;
  policy.watch = watchEntries(policy.paths);
  policy.unwatchedAt = policy.watch === undefined ? now : undefined;
  return policy.watch?.again();
}

/**
 * The pools keep PREWARM_MAX_KEYS policies. More policies used in turn than that each evicted
 * another's sandboxes before any was used, and every run started cold beside the set-ups of three
 * sandboxes no run would take (8 plain workspaces in turn: 12.7 ms a run against 7.4-8.5 ms with
 * prewarm off, and 7.5 ms of the caller's CPU against 5.3). A policy whose sandboxes were evicted
 * with none taken rests: its next restRuns runs warm nothing. Back from rest, it does not evict a
 * policy whose sandbox a run took within the last two rounds of the kept ones: it rests longer.
 */
interface PoolUse {
  /** The count of noted uses when a run last took one of its sandboxes; undefined: none taken. */
  takenAt: number | undefined;
}

export class PrewarmPool {
  readonly #ready = new Map<string, WarmSandbox[]>();
  readonly #pending = new Map<string, number>();
  /** The last use of each policy, least recent first. */
  readonly #lastUse = new Map<string, number>();
  /** Uses noted so far: the rest rule's clock. */
  #uses = 0;
  /** Per policy with sandboxes warmed since it last rested or was evicted. */
  readonly #pools = new Map<string, PoolUse>();
  readonly #resting = new Map<string, { runsLeft: number; times: number }>();
  /** The addon's parsed spec per key, so refills do not convert the same spec again. */
  readonly #prepared = new Map<string, WarmPolicy>();
  /** Bumped by clear(): a sandbox still being set up for an older generation is killed on arrival. */
  #generation = 0;

  /**
   * A ready sandbox for exactly this key, removed from the pool; undefined when there is none. One
   * whose paths may have changed since its set-up began (its watch set is not quiet) is killed.
   */
  take(key: string): WarmSandbox | undefined {
    const list = this.#ready.get(key);
    while (list !== undefined && list.length > 0) {
      const entry = list.shift() as WarmSandbox;
      clearTimeout(entry.timer);
      if (entry.dead) continue;
      if (entry.watch?.quiet() !== true) {
        this.#kill(entry);
        continue;
      }
      entry.watch.release();
      if (list.length === 0) this.#ready.delete(key);
      prewarmCounts.taken++;
      this.#pools.set(key, { takenAt: this.#uses });
      this.#resting.delete(key);
      return entry;
    }
    this.#ready.delete(key);
    return undefined;
  }

  /** Which clear() the pool is at: a use noted later for an earlier generation is dropped. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Records a use; a second use within the idle window starts warming the next sandboxes. A use
   * from before the last clear() (`generation`, when given, is older) warms nothing. With
   * `pidsCap` (the key was built with it), each sandbox joins a pids cgroup of its own with that cap.
   */
  noteUse(key: string, spec: LinuxNativeSpec, generation = this.#generation, pidsCap?: number): void {
    if (generation !== this.#generation) return;
    this.#uses++;
    const now = Date.now();
    const last = this.#lastUse.get(key);
    this.#lastUse.delete(key);
    this.#lastUse.set(key, now);
    for (const [oldKey, at] of this.#lastUse) {
      if (this.#lastUse.size <= USES_KEPT && now - at < PREWARM_IDLE_MS) break;
      this.#lastUse.delete(oldKey);
    }
    if (last === undefined || now - last >= PREWARM_IDLE_MS) return;
    const rest = this.#resting.get(key);
    if (rest !== undefined && rest.runsLeft > 0) {
      rest.runsLeft--;
      return;
    }
    this.#fill(key, spec, pidsCap);
  }

  /** Kills every idle prewarmed sandbox, including those still being set up. */
  clear(): void {
    this.#generation++;
    for (const list of this.#ready.values()) for (const entry of list) this.#kill(entry);
    this.#ready.clear();
    this.#lastUse.clear();
    this.#pools.clear();
    this.#resting.clear();
    for (const prepared of this.#prepared.values()) prepared.watch?.release();
    this.#prepared.clear();
  }

  /** How many prewarmed sandboxes are ready. */
  get size(): number {
    let count = 0;
    for (const list of this.#ready.values()) count += list.length;
    return count;
  }

  /** How many prewarmed sandboxes are being set up (on the spawn threads, not ready yet). */
  get settingUp(): number {
    let count = 0;
    for (const pending of this.#pending.values()) count += pending;
    return count;
  }

  #fill(key: string, spec: LinuxNativeSpec, pidsCap: number | undefined): void {
    if (!this.#ready.has(key) && this.#ready.size >= PREWARM_MAX_KEYS) {
      const [oldestKey, oldest] = this.#ready.entries().next().value as [string, WarmSandbox[]];
      const taken = this.#pools.get(oldestKey)?.takenAt;
      if (this.#resting.has(key) && usedLately(taken, this.#uses, PREWARM_MAX_KEYS)) {
        this.#rest(key);
        return;
      }
      this.#ready.delete(oldestKey);
      for (const entry of oldest) this.#kill(entry);
      this.#pools.delete(oldestKey);
      if (taken === undefined) this.#rest(oldestKey);
    }
    if (!this.#pools.has(key)) this.#pools.set(key, { takenAt: undefined });
    for (const old of this.#pools.keys()) {
      if (this.#pools.size <= USES_KEPT) break;
      if (!this.#ready.has(old) && old !== key) this.#pools.delete(old);
    }
    const have = (this.#ready.get(key)?.length ?? 0) + (this.#pending.get(key) ?? 0);
    for (let i = have; i < PREWARM_DEPTH; i++) this.#startWithCgroup(key, spec, pidsCap);
  }

  /** `key` rests once more in a row: its next runs warm nothing (see PoolUse). */
  #rest(key: string): void {
    const times = (this.#resting.get(key)?.times ?? 0) + 1;
    this.#resting.delete(key);
    this.#resting.set(key, { runsLeft: restRuns(times), times });
    if (this.#resting.size > RESTS_KEPT) this.#resting.delete(this.#resting.keys().next().value as string);
  }

  /**
   * #start, once a pids cgroup is kept for it when it needs one: none kept, one is made off the
   * caller's thread first (pidsLimitMade), as for a cold start, and the start counts as being set
   * up meanwhile. A mkdir on the caller's thread waits for the kernel's cgroup lock, which the
   * sandboxes of a burst hold in turn.
   */
  #startWithCgroup(key: string, spec: LinuxNativeSpec, pidsCap: number | undefined): void {
    // pidsLimitMade looks for a kept one itself (undefined when there is one).
    const made = pidsCap === undefined ? undefined : pidsLimitMade(pidsCap);
    if (made === undefined) {
      this.#start(key, spec, pidsCap);
      return;
    }
    const generation = this.#generation;
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    void made.then(() => {
      const left = (this.#pending.get(key) ?? 1) - 1;
      if (left > 0) this.#pending.set(key, left);
      else this.#pending.delete(key);
      if (generation === this.#generation) this.#start(key, spec, pidsCap);
    });
  }

  #start(key: string, spec: LinuxNativeSpec, pidsCap: number | undefined): void {
    const generation = this.#generation;
    const entry: WarmSandbox = { key, pid: -1, dead: false, listener: undefined, timer: undefined, pids: undefined, watch: undefined };
    const remove = () => {
      const list = this.#ready.get(key);
      const index = list?.indexOf(entry) ?? -1;
      if (list !== undefined && index >= 0) {
        list.splice(index, 1);
        if (list.length === 0) this.#ready.delete(key);
      }
    };
    const onExit = (exit: NativeExit) => {
      entry.dead = true;
      entry.watch?.release();
      remove();
      clearTimeout(entry.timer);
      // A run that took the sandbox owns its cgroup (and hands it back); else it goes back here.
      if (entry.listener === undefined) entry.pids?.remove();
      entry.listener?.(exit);
    };
    let started: Promise<{ pid: number }>;
    try {
      let prepared = this.#prepared.get(key);
      if (prepared === undefined) {
        const { cgroupProcsFd: _cgroup, ...linux } = spec.linux;
        const warmSpec: LinuxNativeSpec = { ...spec, linux, stdio: ['ignore', 'ignore', 'ignore'] };
        prepared = { handle: callNative((binding) => binding.prepareWarm(warmSpec)), paths: specPaths(spec), watch: undefined, unwatchedAt: undefined };
        this.#prepared.set(key, prepared);
        // Bounded like the pool: the oldest policy's handle goes first.
        if (this.#prepared.size > PREWARM_MAX_KEYS) {
          const oldest = this.#prepared.keys().next().value as string;
          this.#prepared.get(oldest)?.watch?.release();
          this.#prepared.delete(oldest);
        }
      }
      // The watch comes before the set-up: a path replaced after it took the path is an event.
      // Paths that cannot all be watched are never prewarmed (every run starts cold).
      entry.watch = watchAgain(prepared);
      if (entry.watch === undefined) return;
      if (pidsCap !== undefined) {
        entry.pids = createPidsLimit(pidsCap, undefined, false);
        if (entry.pids === undefined) {
          entry.watch.release();
          return; // a cold start finds out why, or falls back
        }
      }
      const { handle } = prepared;
      const fd = entry.pids?.fd;
      started = callNative((binding) => binding.spawnWarm(handle, onExit, fd));
      prewarmCounts.started++;
    } catch {
      entry.watch?.release();
      entry.pids?.closeFd();
      entry.pids?.remove();
      return; // prewarming is an optimisation: the cold path keeps working
    }
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    const settle = () => {
      entry.pids?.closeFd();
      const left = (this.#pending.get(key) ?? 1) - 1;
      if (left > 0) this.#pending.set(key, left);
      else this.#pending.delete(key);
    };
    started.then(
      ({ pid }) => {
        settle();
        entry.pid = pid;
        if (entry.dead) return;
        // Its policy's sandboxes were evicted while it was set up: it would be one no run takes.
        if (generation !== this.#generation || !this.#pools.has(key)) {
          this.#kill(entry);
          return;
        }
        entry.timer = setTimeout(() => {
          remove();
          this.#kill(entry);
        }, PREWARM_IDLE_MS);
        entry.timer.unref();
        const list = this.#ready.get(key) ?? [];
        list.push(entry);
        this.#ready.set(key, list);
      },
      () => {
        settle();
        entry.watch?.release();
        entry.pids?.remove(); // nothing joined it
      },
    );
  }

  #kill(entry: WarmSandbox): void {
    clearTimeout(entry.timer);
    entry.watch?.release();
    if (!entry.dead && entry.pid > 0) callNative((binding) => binding.kill(entry.pid, 9));
  }
}

/** The process-wide pool. */
export const prewarmPool = new PrewarmPool();

/** Whether prewarming is on: per call `prewarm`, else ZERO_SANDBOX_PREWARM (default on). */
export function prewarmEnabled(option: boolean | undefined): boolean {
  if (option !== undefined) return option;
  return process.env.ZERO_SANDBOX_PREWARM !== '0';
}
