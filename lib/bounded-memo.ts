// SPDX-License-Identifier: MIT
// A small bounded memo for pure computations remembered across calls (never filesystem facts).

/**
 * Remembers up to `limit` results of a pure computation, by a key that must capture every input
 * of it; past the limit the oldest entry is dropped. Values are shared: callers copy before
 * handing out anything mutable.
 */
export class BoundedMemo<V> {
  readonly #entries = new Map<string, V>();

  /** @param limit How many results are kept at most. */
  constructor(readonly limit: number) {}

  /** The remembered value for `key`, or `build()`'s, which is then remembered. */
  get(key: string, build: () => V): V {
    const value = this.#entries.get(key);
    return value === undefined ? this.keep(key, build()) : value;
  }

  /** The remembered value for `key`, if any (no closure to make: for look-ups on a hot path). */
  find(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Remembers `value` for `key` (dropping the oldest entry past the limit) and returns it. */
  keep(key: string, value: V): V {
    if (!this.#entries.has(key) && this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, value);
    return value;
  }
}
