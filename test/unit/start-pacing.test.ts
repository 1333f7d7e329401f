// SPDX-License-Identifier: MIT
// Starts made together are paced: they run in call order, the first at once within the call, and
// once a slice of back-to-back starts is used up the caller's event loop gets a turn before the
// next (a burst never holds it for the whole burst).
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { handOverFacts, HostFacts } from '../../lib/host-facts.js';
import type { SandboxBackend } from '../../lib/sandbox/contract.js';
import { startPrepared } from '../../lib/sandbox/process.js';
import { runWith } from '../../lib/sandbox/run.js';
import { awayWhile, endTurn, MAX_AWAY, nextPiece, paced, resumePiece, SLICE_MS, startTurn } from '../../lib/sandbox/start-pacing.js';
import { preparedFromPlan } from '../fixtures/platform-dispatch.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';
import { exitingProcess } from '../helpers/fake-process.js';

/** Work on the caller's thread, as a sandbox start is. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** A paced start that takes `ms` of synchronous work and records itself in `log`. */
async function pacedStart(name: string, ms: number, log: string[]): Promise<void> {
  const turn = startTurn();
  if (turn !== undefined) await turn;
  try {
    log.push(name);
    busy(ms);
  } finally {
    endTurn();
  }
}

/** Between two turns of the event loop at most `most` pieces ran (`turns`: the count seen at each turn). */
function assertAtMostPerTurn(turns: number[], most: number, what: string): void {
  let before = turns[0] as number;
  for (const seen of turns.slice(1)) {
    assert.ok(seen - before <= most, `${seen - before} ${what} ran in one turn (${turns.join(', ')})`);
    before = seen;
  }
}

test('the first start of a burst runs within the call', () => {
  const log: string[] = [];
  void pacedStart('only', 0, log);
  assert.equal(log, ['only']);
});

test('a burst runs in call order and lets the event loop turn between slices', async () => {
  // Let the slice of the test above end first.
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const count = 12;
  // Each start alone takes half a slice: a slice holds at most two or three of them.
  const starts = Array.from({ length: count }, (_, i) => pacedStart(`s${i}`, SLICE_MS / 2, log));
  const turns: number[] = [];
  const tick = () => {
    turns.push(log.length);
    if (log.length < count) setImmediate(tick);
  };
  setImmediate(tick);
  await Promise.all(starts);
  assert.equal(log, Array.from({ length: count }, (_, i) => `s${i}`));
  assert.ok(log.length > 0 && turns.length >= 3, `the event loop turned ${turns.length} times during ${count} starts`);
  // Between two turns of the event loop at most a slice's worth of new starts ran (the one that
  // crossed the slice's end included). The first turn also follows the slice of the calls
  // themselves, so the count starts there.
  assertAtMostPerTurn(turns, 3, 'starts');
});

test('work after exits arriving together takes turns like starts, in order; what one piece throws stays its own', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const count = 12;
  const thrown: unknown[] = [];
  const onUncaught = (error: unknown) => thrown.push(error);
  process.prependListener('uncaughtException', onUncaught);
  try {
    // As the addon delivers them: all in one callback of the event loop.
    for (let i = 0; i < count; i++) {
      paced(() => {
        log.push(`e${i}`);
        busy(SLICE_MS / 2);
        if (i === 1) throw new Error('listener failed');
      });
    }
    assert.is(log[0], 'e0', 'the first piece ran at once');
    assert.ok(log.length < count, `the rest waited for later turns (${log.length} ran at once)`);
    const turns: number[] = [];
    await new Promise<void>((resolve) => {
      const tick = () => {
        turns.push(log.length);
        if (log.length < count) setImmediate(tick);
        else resolve();
      };
      setImmediate(tick);
    });
    assert.equal(log, Array.from({ length: count }, (_, i) => `e${i}`));
    assertAtMostPerTurn(turns, 3, 'pieces');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(thrown.map((e) => (e as Error).message), ['listener failed']);
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
});

/** A start of two pieces of `ms` each, as runSandboxed makes one (the plan, then the rest). */
async function twoPieceStart(name: string, ms: number, log: string[]): Promise<void> {
  const turn = startTurn();
  if (turn !== undefined) await turn;
  let rest: void | Promise<void>;
  try {
    log.push(`${name}.plan`);
    busy(ms);
    rest = nextPiece(() => {
      log.push(`${name}.rest`);
      busy(ms);
    });
  } finally {
    endTurn();
  }
  await rest;
}

test('a start whose pieces fit in the slice runs whole within the call', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  void twoPieceStart('only', 0, log);
  assert.equal(log, ['only.plan', 'only.rest']);
});

test('a burst of starts longer than a slice: the event loop turns between their pieces, and a begun start is finished before the next begins', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const count = 6;
  // Each piece alone uses up a slice, as a whole start can on a loaded host.
  const starts = Array.from({ length: count }, (_, i) => twoPieceStart(`s${i}`, SLICE_MS, log));
  assert.equal(log, ['s0.plan'], 'only the first piece ran within the calls');
  const turns: number[] = [];
  const tick = () => {
    turns.push(log.length);
    if (log.length < 2 * count) setImmediate(tick);
  };
  setImmediate(tick);
  await Promise.all(starts);
  assert.equal(log, Array.from({ length: count }, (_, i) => [`s${i}.plan`, `s${i}.rest`]).flat());
  let before = 1;
  for (const seen of turns) {
    assert.ok(seen - before <= 1, `${seen - before} pieces ran in one turn (${turns.join(', ')})`);
    before = seen;
  }
  assert.ok(turns.length >= count, `the event loop turned ${turns.length} times during ${2 * count} pieces`);
});

test('pieces resumed after work off the thread (clones completing together) take turns, ahead of starts not begun, and return their values', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const count = 12;
  // As the thread pool completes them: all in one callback of the event loop, with starts waiting.
  const resumed: Array<number | Promise<number>> = [];
  for (let i = 0; i < count; i++) {
    resumed.push(resumePiece(() => {
      log.push(`r${i}`);
      busy(SLICE_MS / 2);
      return i;
    }));
  }
  const start = pacedStart('late', 0, log);
  assert.equal(log.slice(0, 1), ['r0'], 'the first piece ran at once');
  assert.ok(log.length < count, `the rest waited for later turns (${log.length} ran at once)`);
  const turns: number[] = [];
  const tick = () => {
    turns.push(log.length);
    if (log.length <= count) setImmediate(tick);
  };
  setImmediate(tick);
  assert.equal(await Promise.all(resumed), Array.from({ length: count }, (_, i) => i));
  await start;
  assert.is(log[log.length - 1], 'late', 'the start not begun came after every resumed piece');
  assert.equal(new Set(log.slice(0, count)), new Set(Array.from({ length: count }, (_, i) => `r${i}`)));
  assertAtMostPerTurn(turns, 3, 'pieces');
});

test('work after exits runs ahead of the starts not begun, after the pieces of begun starts', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  // The first start runs within the call and uses up the slice: everything below waits for its turn.
  const first = pacedStart('s0', SLICE_MS + 1, log);
  const waitingStarts = Array.from({ length: 4 }, (_, i) => pacedStart(`s${i + 1}`, 0, log));
  const resumed = resumePiece(() => log.push('r'));
  for (let i = 0; i < 3; i++) paced(() => log.push(`e${i}`));
  assert.equal(log, ['s0'], 'only the first start ran within the calls');
  await Promise.all([first, ...waitingStarts, resumed]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(log, ['s0', 'r', 'e0', 'e1', 'e2', 's1', 's2', 's3', 's4']);
});

test('while MAX_AWAY begun starts wait for work off the thread, no start begins; each that comes back lets the next begin', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const backs: Array<() => void> = [];
  // A start that sends work off the thread, then resumes for its last piece.
  const awayStart = async (name: string): Promise<void> => {
    const turn = startTurn();
    if (turn !== undefined) await turn;
    let off: Promise<void>;
    try {
      log.push(`${name}:begin`);
      off = awayWhile(new Promise<void>((resolve) => backs.push(resolve)));
    } finally {
      endTurn();
    }
    await off;
    await resumePiece(() => log.push(`${name}:end`));
  };
  const all = Array.from({ length: MAX_AWAY + 2 }, (_, i) => awayStart(`s${i}`));
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(log, Array.from({ length: MAX_AWAY }, (_, i) => `s${i}:begin`), 'the starts beyond MAX_AWAY wait');
  // An exit's work is not held back by them.
  paced(() => log.push('exit'));
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.is(log[log.length - 1], 'exit');
  (backs.shift() as () => void)();
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(log.slice(MAX_AWAY + 1), ['s0:end', `s${MAX_AWAY}:begin`], 'the one back finished, then the next began');
  while (backs.length > 0 || log.filter((e) => e.endsWith(':end')).length < MAX_AWAY + 2) {
    (backs.shift() as (() => void) | undefined)?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(all);
  assert.is(log.length, 2 * (MAX_AWAY + 2) + 1);
});

test('a resumed piece that throws rejects its own promise and ends its turn', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const log: string[] = [];
  const first = resumePiece(() => {
    busy(SLICE_MS + 1);
    return 'ran';
  });
  assert.is(first, 'ran', 'no slice was in use: the piece ran within the call');
  const failing = resumePiece<string>(() => {
    throw new Error('finish failed');
  });
  assert.instance(failing, Promise, 'the slice was used up: the piece waits for its turn');
  const after = pacedStart('after', 0, log);
  await (failing as Promise<string>).then(() => assert.unreachable('it rejects'), (error: Error) => assert.is(error.message, 'finish failed'));
  await after;
  assert.equal(log, ['after'], 'the next start still got its turn');
});

test('a start deferred to a later turn after its plan still gets the facts the plan was resolved with, once', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const made: HostFacts[] = [];
  const taken: Array<{ first: HostFacts; again: HostFacts; deferred: boolean }> = [];
  let planned = false;
  let turned = false;
  const backend: SandboxBackend = {
    prepare: () => {
      const facts = new HostFacts();
      made.push(facts);
      // A plan that uses up the slice (a large policy's): the rest of the start waits for a turn.
      busy(SLICE_MS + 1);
      planned = true;
      return { ...preparedFromPlan(posixPlan('/w/ws', { argv: ['/bin/fake'] }), '/tmp/none', 'macos-seatbelt'), takeFacts: handOverFacts(facts) };
    },
    start: () => {
      throw new Error('the async start is used');
    },
    startAsync: async (prepared, io, onExit) => {
      // Deferred: the event loop turned between the plan and this piece.
      taken.push({ first: prepared.takeFacts(), again: prepared.takeFacts(), deferred: planned && turned });
      return exitingProcess(io, onExit);
    },
  };
  setImmediate(() => (turned = true));
  const result = await runWith(['/bin/fake'], {}, backend);
  assert.is(result.exitCode, 0);
  assert.is(taken.length, 1);
  assert.ok(taken[0]?.deferred, 'the rest of the start waited for a turn of the event loop');
  assert.is(taken[0]?.first, made[0], 'the plan\'s facts reached the deferred piece');
  assert.is.not(taken[0]?.again, made[0], 'and only once: a second ask gets fresh facts');
});

test('exits delivered together: each run\'s check is set going and finished in later turns, in the order the exits came, and each run gets its own exit', async () => {
  await new Promise((resolve) => setImmediate(resolve));
  const count = 12;
  const log: string[] = [];
  const deliver: Array<() => void> = [];
  const prepare = (): ReturnType<typeof preparedFromPlan> => preparedFromPlan(posixPlan('/w/ws', { argv: ['/bin/fake'] }), '/tmp/none', 'macos-seatbelt');
  const children = Array.from({ length: count }, (_, i) =>
    startPrepared(prepare(), {}, {
      start: (_prepared, io, onExit) => {
        const os = exitingProcess(io, () => {});
        deliver.push(() => onExit({ exitCode: i, signal: null }));
        return {
          ...os,
          prepareCheck: () => {
            log.push(`p${i}`);
            busy(SLICE_MS / 2);
            return Promise.resolve();
          },
          checkProtectedPaths: () => {
            log.push(`c${i}`);
            busy(SLICE_MS / 2);
            return [];
          },
        };
      },
    }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  // As the addon delivers them: every exit in one turn of the event loop, one callback each.
  for (const exit of deliver) exit();
  assert.ok(log.length <= 3, `the exits' work waited for later turns (${log.join(' ')} ran within the delivery)`);
  const exits = await Promise.all(children.map((child) => child.exited));
  assert.equal(exits.map((exit) => exit.exitCode), Array.from({ length: count }, (_, i) => i));
  const order = (kind: string) => log.filter((entry) => entry.startsWith(kind));
  assert.equal(order('p'), Array.from({ length: count }, (_, i) => `p${i}`), 'checks set going in the order the exits came');
  assert.equal(order('c'), Array.from({ length: count }, (_, i) => `c${i}`), 'checks finished in the order the exits came');
  for (let i = 0; i < count; i++) assert.ok(log.indexOf(`p${i}`) < log.indexOf(`c${i}`), `run ${i}: its check after its scans were set going`);
});

test.run();
