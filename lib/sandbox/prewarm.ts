// SPDX-License-Identifier: MIT
// Prewarmed sandboxes. Creating namespaces, mounts and rulesets is most of a sandbox's start-up
// cost, so during a burst of commands with the same policy the next sandbox is set up ahead of time
// on the thread pool. Each is used at most once, only for a command whose freshly computed plan
// (mounts, Landlock rules, seccomp program, network) is identical, and is killed after being idle.
import type { LinuxNativeSpec } from '../backend/linux/spec.js';
import { callNative } from '../native/load.js';
import type { NativeExit } from '../native/types.js';

/** An idle prewarmed sandbox is killed after this long. */
export const PREWARM_IDLE_MS = 5000;
/** At most this many policies keep a prewarmed sandbox at once. */
export const PREWARM_MAX_KEYS = 4;

export interface WarmSandbox {
  key: string;
  pid: number;
  dead: boolean;
  /** Receives the exit once the sandbox has been handed a command. */
  listener: ((exit: NativeExit) => void) | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Everything that shapes the sandbox itself; argv, env, cwd, stdio and limits come at launch. */
export function buildPrewarmKey(spec: LinuxNativeSpec): string {
  const { rlimits: _limits, seccomp, ...rest } = spec.linux;
  return JSON.stringify({ ...rest, seccomp: Array.from(seccomp, (word) => word.toString(16)) });
}

export class PrewarmPool {
  readonly #ready = new Map<string, WarmSandbox>();
  readonly #pending = new Set<string>();
  readonly #lastUse = new Map<string, number>();
  /** Bumped by clear(): a sandbox still being set up for an older generation is killed on arrival. */
  #generation = 0;

  /** A ready sandbox for exactly this key, removed from the pool; undefined when there is none. */
  take(key: string): WarmSandbox | undefined {
    const entry = this.#ready.get(key);
    if (entry === undefined) return undefined;
    this.#ready.delete(key);
    clearTimeout(entry.timer);
    return entry.dead ? undefined : entry;
  }

  /** Records a use; a second use within the idle window starts warming the next sandbox. */
  noteUse(key: string, spec: LinuxNativeSpec): void {
    const now = Date.now();
    const last = this.#lastUse.get(key);
    this.#lastUse.set(key, now);
    if (last !== undefined && now - last < PREWARM_IDLE_MS) this.#fill(key, spec);
  }

  /** Kills every idle prewarmed sandbox, including those still being set up. */
  clear(): void {
    this.#generation++;
    for (const entry of this.#ready.values()) this.#kill(entry);
    this.#ready.clear();
    this.#lastUse.clear();
  }

  get size(): number {
    return this.#ready.size;
  }

  #fill(key: string, spec: LinuxNativeSpec): void {
    if (this.#ready.has(key) || this.#pending.has(key)) return;
    if (this.#ready.size >= PREWARM_MAX_KEYS) {
      const oldest = this.#ready.values().next().value as WarmSandbox;
      this.#ready.delete(oldest.key);
      this.#kill(oldest);
    }
    this.#pending.add(key);
    const generation = this.#generation;
    const entry: WarmSandbox = { key, pid: -1, dead: false, listener: undefined, timer: undefined };
    const onExit = (exit: NativeExit) => {
      entry.dead = true;
      if (this.#ready.get(key) === entry) {
        this.#ready.delete(key);
        clearTimeout(entry.timer);
      }
      entry.listener?.(exit);
    };
    const warmSpec: LinuxNativeSpec = { ...spec, stdio: ['ignore', 'ignore', 'ignore'] };
    let started: Promise<{ pid: number }>;
    try {
      started = callNative((binding) => binding.spawnWarm(warmSpec, onExit));
    } catch {
      this.#pending.delete(key);
      return; // prewarming is an optimisation: the cold path keeps working
    }
    started.then(
      ({ pid }) => {
        this.#pending.delete(key);
        entry.pid = pid;
        if (entry.dead) return;
        if (generation !== this.#generation) {
          this.#kill(entry);
          return;
        }
        entry.timer = setTimeout(() => {
          if (this.#ready.get(key) === entry) this.#ready.delete(key);
          this.#kill(entry);
        }, PREWARM_IDLE_MS);
        entry.timer.unref();
        this.#ready.set(key, entry);
      },
      () => {
        this.#pending.delete(key);
      },
    );
  }

  #kill(entry: WarmSandbox): void {
    clearTimeout(entry.timer);
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
