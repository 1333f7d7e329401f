// SPDX-License-Identifier: MIT
// Paces the starts of runSandboxed calls made together. Preparing and starting a sandbox is
// synchronous work on the caller's thread (the plan, the git guard, the clone), and calls started
// in one tick (Promise.all over hundreds of commands) would otherwise all run in one microtask
// drain, holding the caller's event loop for the whole burst. Starts run back to back for at most
// SLICE_MS; the next one then waits for the event loop's next turn (the caller's timers and I/O,
// and the exits of earlier runs, are served in between), in call order. A start with no burst
// around it runs at once, within the call.

/** How long starts may run back to back before the event loop gets a turn. */
export const SLICE_MS = 4;

let sliceStart: number | undefined;
const waiting: Array<() => void> = [];

function begin(): void {
  if (sliceStart !== undefined) return;
  sliceStart = performance.now();
  setImmediate(endSlice);
}

function endSlice(): void {
  sliceStart = undefined;
  const next = waiting.shift();
  if (next === undefined) return;
  begin();
  next();
}

function overSlice(): boolean {
  return sliceStart !== undefined && performance.now() - sliceStart >= SLICE_MS;
}

/**
 * Undefined when a start may run now, else a promise that resolves when its turn comes. Either
 * way the caller calls `endTurn()` once its synchronous start has returned (or thrown).
 */
export function startTurn(): Promise<void> | undefined {
  if (waiting.length === 0 && !overSlice()) {
    begin();
    return undefined;
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
  });
}

/** A start has returned: the next waiting one runs now if the slice has time left. */
export function endTurn(): void {
  if (waiting.length === 0 || overSlice()) return;
  (waiting.shift() as () => void)();
}
