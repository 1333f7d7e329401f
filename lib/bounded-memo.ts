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
    let value = this.#entries.get(key);
    if (value === undefined) {
      value = build();
      if (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, value);
    }
    return value;
  }
}
