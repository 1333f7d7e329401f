// SPDX-License-Identifier: MIT
// Paces the host-side work of runs made together on the caller's thread: the starts of
// runSandboxed calls (the plan, the git guard, the spec) and the work after each sandbox's exit
// (the protected-path check). Calls started in one tick (Promise.all over hundreds of commands)
// would otherwise all run in one microtask drain, and exits arriving together in one poll of the
// event loop, holding the caller's event loop for the whole burst. Work runs back to back for at
// most SLICE_MS; the next piece then waits for the event loop's next turn (the caller's timers
// and I/O are served in between), in the order it came. A start is made of pieces (continueTurn):
// one whole start may take longer than a slice. Work with no burst around it runs at once, within
// the call.
//
// What waits is taken in this order: the next piece of a begun start (a burst does not hold
// hundreds of half-made starts, each with its notes published), then the work after an exit, then
// the starts not begun; while MAX_AWAY begun starts wait for work off the caller's thread (their
// repository scan), no start begins. An exit's work only checks a sandbox that is gone and
// releases what its run held (its notes, its descriptors, its memory): run ahead of a thousand
// waiting starts, the runs in flight stay as many as the sandboxes actually running, instead of
// every run of the burst being started before the first exit is looked at. A start that begins
// after an exit's check notes the state that check left, as it would had the exit come earlier.

/**
 * How long starts and exits may run back to back before the event loop gets a turn. A turn can
 * still outlast it by the piece that crosses it and by a collection that falls in it: 2 ms rather
 * than 4 took the longest event-loop delay of a 256-run burst from 28-32 ms to 19-21 ms (and of a
 * 1,024-run one from 27-30 to 18-19) on two cores, for about the same CPU and wall time.
 */
export const SLICE_MS = 2;

let sliceStart: number | undefined;

/**
 * Milliseconds from a monotonic clock. Not `performance.now()`: the global `performance` loads
 * node:perf_hooks on first use, and the CLI's one run (whose exit is paced too) does without it.
 */
function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
/** Pieces of begun starts: the latest first (a begun start is finished before another). */
const resumed: Array<() => void> = [];
/** The work after exits, in the order they came. */
const exits: Array<() => void> = [];
/** Starts not begun, in call order. */
const starts: Array<() => void> = [];

/**
 * Begun starts waiting for work of theirs off the caller's thread (awayWhile), and how many may: while
 * that many are away, no start begins. Begun starts are finished first here too: a burst does not
 * hold hundreds of half-made starts (each with its notes' window open, keeping the notes of every
 * run that ends meanwhile), and their work does not queue behind that of starts begun after them.
 */
let away = 0;
export const MAX_AWAY = 4;

function nothingWaits(): boolean {
  return resumed.length === 0 && exits.length === 0 && (starts.length === 0 || away >= MAX_AWAY);
}

/** The next piece of work that waits (see the header for the order). */
function takeNext(): (() => void) | undefined {
  return resumed.shift() ?? exits.shift() ?? (away < MAX_AWAY ? starts.shift() : undefined);
}

function begin(): void {
  if (sliceStart !== undefined) return;
  sliceStart = now();
  setImmediate(endSlice);
}

function endSlice(): void {
  sliceStart = undefined;
  const next = takeNext();
  if (next === undefined) return;
  begin();
  next();
}

function overSlice(): boolean {
  return sliceStart !== undefined && now() - sliceStart >= SLICE_MS;
}

/**
 * Undefined when a start may run now, else a promise that resolves when its turn comes. Either
 * way the caller calls `endTurn()` once its synchronous start has returned (or thrown).
 */
export function startTurn(): Promise<void> | undefined {
  if (starts.length === 0 && nothingWaits() && away < MAX_AWAY && !overSlice()) {
    begin();
    return undefined;
  }
  return new Promise((resolve) => {
    starts.push(resolve);
  });
}

/**
 * Between two pieces of one start (the plan; the protected-path notes; the spec and the clone):
 * undefined when the slice has time left (go on within the call), else a promise resolved on the
 * event loop's next turn, ahead of the starts that have not begun (a begun start is finished
 * first: a burst does not hold hundreds of half-made starts, each with its notes published). Once
 * the piece after it has returned, the caller calls `endTurn()`.
 */
export function continueTurn(): Promise<void> | undefined {
  if (!overSlice()) return undefined;
  return new Promise((resolve) => {
    resumed.unshift(resolve);
  });
}

/**
 * The next piece of a start: run at once (within the call) when the slice has time left, else on
 * its turn (continueTurn), that turn ending once the piece has returned or thrown.
 */
export function nextPiece<T>(piece: () => T): T | Promise<T> {
  const turn = continueTurn();
  if (turn === undefined) return piece();
  return turn.then(() => {
    try {
      return piece();
    } finally {
      endTurn();
    }
  });
}

/**
 * The piece of a begun start that follows something done off the caller's thread (the clone on
 * a spawn thread): completions arrive from the event loop together, 256 of them in one poll for a
 * burst, and each would otherwise run at once. Runs now when the slice has time left (a slice
 * begins if none has), else on its turn ahead of the starts not begun, as continueTurn does; its
 * turn ends once the piece has returned or thrown.
 */
export function resumePiece<T>(piece: () => T): T | Promise<T> {
  const now = nothingWaits() && !overSlice();
  if (!now) return new Promise<void>((resolve) => resumed.unshift(resolve)).then(() => runPiece(piece));
  begin();
  return runPiece(piece);
}

function runPiece<T>(piece: () => T): T {
  try {
    return piece();
  } finally {
    endTurn();
  }
}

/** A start has returned: the next waiting one runs now if the slice has time left. */
export function endTurn(): void {
  if (nothingWaits() || overSlice()) return;
  // As a microtask: a piece of work run from here is not nested in the one that just ended.
  queueMicrotask(takeNext() as () => void);
}

/**
 * The work after a sandbox's exit: runs `work` now when nothing waits and the slice has time left,
 * else on its turn, ahead of the starts not begun. What it throws is rethrown on its own, as an
 * uncaught exception, never into the work around it.
 */
export function paced(work: () => void): void {
  const run = (): void => {
    try {
      work();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    } finally {
      endTurn();
    }
  };
  if (nothingWaits() && !overSlice()) {
    begin();
    run();
  } else exits.push(run);
}

/**
 * A begun start waits for `work` off the caller's thread: until it settles the start counts as
 * away (see MAX_AWAY). Resolves or rejects as `work` does; resume the start with resumePiece.
 */
export function awayWhile<T>(work: Promise<T>): Promise<T> {
  away++;
  const back = (): void => {
    away--;
    // Starts held back for it may begin: on the event loop's next turn when no slice is running.
    if (sliceStart === undefined && !nothingWaits()) {
      begin();
    }
  };
  return work.then(
    (value) => {
      back();
      return value;
    },
    (error: unknown) => {
      back();
      throw error;
    },
  );
}
