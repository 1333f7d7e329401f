// SPDX-License-Identifier: MIT
// The protected-path notes of runs in flight, shared between processes. Two processes running
// sandboxes of one workspace (two `zero-sandbox run` invocations, two programs calling
// runSandboxed) must agree on what the protected files held before any of their overlapping runs
// started: a run that noted the config while another process's command had changed it would later
// "restore" that change. So every run publishes its notes (as it takes them, see protected.ts) in
// a directory of this user's that no sandbox can reach, and a run that starts takes the notes of
// every other process's run of overlapping write roots that was in flight while it noted.
//
// The directory, and why no sandbox can reach it, is run-notes-dir.ts.
//
// No lock is held while a run notes or checks (either may walk a large workspace): the order of
// single-call file operations is enough. Names, `<id>` being `<pid>-<start>.<realm>.<n>`:
//   n.<t>.<id>  a run is noting since monotonic time t (ns): made before it looks at anything, and
//               written with its notes once it has them;
//   r.<id>      the notes of a run in flight, published (renamed from n.) before its sandbox starts;
//   e.<t>.<id>  the notes of a run whose check ended at t, renamed from r.; removed by the next
//               run that ends its noting once no n. older than t is left;
//   s.<id>      the host pid and start time of the run's sandbox (its pid 1), once it started;
//   c.<id>      Linux: the same notes as r., removed after the run's check: left by a run whose
//               process died, it is a check that was missed (zero-sandbox versions that do not
//               know this name leave it alone, though they remove a dead owner's r.);
//   k.<c>.<id>  a missed check claimed by process c (pid-start) to run it (claimMissedChecks,
//               missed-checks.ts), renamed from c.; then renamed to e. as the run's own check
//               would have done.
// A run that notes takes, at the end of its noting, the r. of every other live run and every e.
// that ended after its own n. was made: a run whose check ended before then could not have
// changed anything this run saw.
// Stale entries (owner gone: pid plus start time, as the runtime leases) are never taken: a
// crashed run's notes would otherwise put an old config back over one changed since. On Linux a
// dead owner's c. is a check that was missed: what its command planted is still there. It is left
// for claimMissedChecks, which hands it to a later run once that run's sandbox is gone (the
// sandbox's pid 1 dies with the process that cloned it, PR_SET_PDEATHSIG, and a PID namespace's
// pid 1 finishes exiting only after every other process of it is gone); while that sandbox is
// still there, the run's r. counts as in flight. Elsewhere the command may outlive its
// supervisor, so nothing can tell when it is gone: a dead owner's notes are removed as before.
import { closeSync, constants, openSync, renameSync, writeFileSync, writevSync } from 'node:fs';
import { join } from 'node:path';

import { rootsOverlap } from '../path-within.js';
import { ensureDir, forgetCheckedDir, refuse, runNotesDir, shmNotesDir } from './run-notes-dir.js';
import { encodeParts, secondName, type PublishedNotesBody, type SharedNotes } from './run-notes-file.js';
import { notesIf } from './run-notes-kept.js';
import { aliveOnce, inFlight, list, ownOwner, parseEntry, sandboxAlive, selfId, tryUnlink } from './run-notes-entries.js';
import { buildOwnerName, currentHolder, processStart } from './runtime-lease.js';

export type { SharedNotes } from './run-notes-file.js';
export { runNotesCounts } from './run-notes-kept.js';
export { buildThreadRealm, parseThreadRealm } from './run-notes-entries.js';
export { chooseNotesDir, notesPlacesToHide, runNotesDir, shmNotesDir, stateNotesBase, stateNotesDir } from './run-notes-dir.js';

let counter = 0;

/**
 * Per remembered list of roots, the answers for each frozen list of roots it was compared with: a
 * missed check whose roots no run here overlaps (its workspace gone, say) waits in the directory
 * for good, and every run would compare it again. Keyed by identity (a frozen list cannot change):
 * a caller alternating policies keeps the answer of each, and a run of a thousand roots does not
 * join them into a key.
 */
const overlapAnswers = new WeakMap<readonly string[], WeakMap<readonly string[], boolean>>();

/** Whether the remembered `known` overlaps `roots`: the kept answer when `roots` is frozen. */
function overlapsKept(known: readonly string[], roots: readonly string[]): boolean {
  if (!Object.isFrozen(roots)) return rootsOverlap(known, roots);
  let answers = overlapAnswers.get(known);
  if (answers === undefined) {
    answers = new WeakMap();
    overlapAnswers.set(known, answers);
  }
  let overlaps = answers.get(roots);
  if (overlaps === undefined) {
    overlaps = rootsOverlap(known, roots);
    answers.set(roots, overlaps);
  }
  return overlaps;
}

/**
 * rootsOverlap(other, roots) for one listing: each distinct list of roots asked once (another
 * process's burst of runs of 1,000 write roots lists as many entries with the same roots, each
 * a thousand-by-thousand test). Kept for the listing only.
 */
function overlapOnce(roots: readonly string[]): (other: readonly string[]) => boolean {
  const answers = new Map<string, boolean>();
  // Frozen: its set is made once for the listing, not for each distinct list it is compared with.
  const ours = Object.isFrozen(roots) ? roots : Object.freeze([...roots]);
  return (other) => {
    // A remembered list (frozen) against ours: the answer kept across listings.
    if (Object.isFrozen(other)) return overlapsKept(other, ours);
    const key = JSON.stringify(other);
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = rootsOverlap(other, ours);
      answers.set(key, answer);
    }
    return answer;
  };
}

/** A published run's notes: `started()` once its sandbox exists, `end()` once its check has run (neither throws). */
export interface PublishedNotes {
  /** Records the host pid of the sandbox's pid 1: a later run waits for it before a missed check. */
  started(pid: number): void;
  end(): void;
}

/** A run's noting, from before it looks at anything until its own notes are published. */
export interface NotingWindow {
  /** When it opened (monotonic ns): the run's notes are as old as this. */
  since: bigint;
  /**
   * The notes of the other processes' runs of write roots overlapping `roots` that were in flight
   * during the window, oldest first. Throws `protected_path` when they cannot be read (the run
   * must not start).
   */
  take(roots: readonly string[]): SharedNotes[];
  /**
   * Publishes this run's notes (the marker, written, renamed in one step) and ends the window.
   * Call before the sandbox starts. Throws `protected_path` when they cannot be written.
   */
  publish(notes: PublishedNotesBody): PublishedNotes;
  /** Ends the window without publishing (the run does not start). Never throws. */
  abandon(): void;
}

/** Writes every byte of `parts` at the descriptor's position, past short writes. */
function writeAll(fd: number, parts: readonly Buffer[]): void {
  let rest = parts.filter((part) => part.length > 0);
  while (rest.length > 0) {
    let done = writevSync(fd, rest);
    const next: Buffer[] = [];
    for (const part of rest) {
      if (done >= part.length) done -= part.length;
      else {
        next.push(done === 0 ? part : part.subarray(done));
        done = 0;
      }
    }
    rest = next;
  }
}

/** Opens a window: call before noting anything. Throws `protected_path` when the directory is unusable. */
export function openNotingWindow(given?: string): NotingWindow {
  const dir = given ?? runNotesDir();
  const parents = given === undefined && dir !== shmNotesDir();
  ensureDir(dir, parents);
  const start = process.hrtime.bigint();
  const id = `${selfId()}.${counter++}`;
  const marker = join(dir, `n.${start}.${id}`);
  // A file, written once the notes are known: the marker becomes the published notes by a rename.
  let fd: number | undefined;
  const create = () => openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    fd = create();
  } catch (error) {
    forgetCheckedDir(); // removed meanwhile (the user's last logout may empty /dev/shm): made again
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw refuse((error as Error).message, dir, error);
    ensureDir(dir, parents);
    try {
      fd = create();
    } catch (again) {
      throw refuse((again as Error).message, dir, again);
    }
  }
  const abandon = (): void => {
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // closed either way
    }
    fd = undefined;
    tryUnlink(marker);
  };
  return {
    since: start,
    abandon,
    take: (roots) => takeNotes(dir, list(dir), start, `n.${start}.${id}`, roots),
    publish: (notes) => {
      const live = join(dir, `r.${id}`);
      const check = join(dir, `c.${id}`);
      try {
        const text = encodeParts(notes);
        writeAll(fd as number, text);
        closeSync(fd as number);
        fd = undefined;
        // process.platform: only Linux runs a missed check (see the header).
        if (process.platform === 'linux') secondName(marker, check, text);
        renameSync(marker, live);
      } catch (error) {
        abandon();
        tryUnlink(marker);
        tryUnlink(check);
        throw refuse((error as Error).message, dir, error);
      }
      let ended = false;
      const sandbox = join(dir, `s.${id}`);
      return {
        started: (pid) => {
          const start = processStart(pid);
          // Gone already (nothing left to wait for), or not a pid this host can tell.
          if (ended || start === undefined) return;
          try {
            writeFileSync(sandbox, buildOwnerName({ pid, start }), { flag: 'wx', mode: 0o600 });
          } catch {
            // Without the record a later run checks without waiting (see sandboxAlive).
          }
        },
        end: () => {
          if (ended) return;
          ended = true;
          // A run noting now may have seen what this run's command left: it takes these notes.
          // They are removed once no run that was noting before this moment still is (takeNotes).
          try {
            renameSync(live, join(dir, `e.${process.hrtime.bigint()}.${id}`));
          } catch {
            tryUnlink(live);
          }
          tryUnlink(check);
          tryUnlink(sandbox);
        },
      };
    },
  };
}

/** The notes of a run whose process died before its after-run check, claimed to run that check. */
export interface MissedCheck {
  notes: SharedNotes;
  /** The check has run: the notes end as the run's own check would have ended them. Never throws. */
  done(): void;
}

/**
 * Claims the notes of every run of write roots overlapping `roots` (all runs when undefined) whose
 * process died before its after-run check and whose sandbox is gone: each is renamed to this
 * process's claim in one step, so no two processes run one check. A sandbox still there is waited
 * for up to `waitMs` (it was killed with its supervisor), then left as a run in flight. Linux only
 * (see the header): elsewhere nothing is claimed. Throws `protected_path` when the directory or a
 * record cannot be read.
 */
export function claimMissedChecks(roots: readonly string[] | undefined, given?: string, waitMs = 2000): MissedCheck[] {
  // process.platform: only Linux ties the sandbox's life to its supervisor's (see the header).
  if (process.platform !== 'linux' && given === undefined) return [];
  const dir = given ?? runNotesDir();
  ensureDir(dir, given === undefined && dir !== shmNotesDir());
  // The claim's name: a worker's names its thread, so that a claim of a worker terminated before
  // the check ran is claimed again (its process lives on).
  const me = currentHolder().tid === undefined ? ownOwner() : selfId();
  const names = list(dir);
  const claimed: MissedCheck[] = [];
  // This thread's own runs' checks are not missed (it is alive): skipped unparsed, as a burst of
  // runs lists hundreds of them in every run. Another thread's of this process are parsed: a
  // worker terminated in the middle of a run left its check undone.
  const ownCheck = `c.${selfId()}.`;
  const alive = aliveOnce();
  // Made at the first dead owner's check (most listings have none): our roots frozen, so that
  // their set is made once, and the answer for each other run's remembered roots kept
  // (overlapsKept) while the same frozen roots come again (a kept plan's).
  let overlaps: ((other: readonly string[]) => boolean) | undefined;
  const wanted = (other: readonly string[]): boolean => roots === undefined || (overlaps ??= overlapOnce(roots))(other);
  for (const name of names) {
    // Only checks and claims of them can be missed ones: the rest (hundreds of records and notes
    // of the runs in flight during a burst) is skipped unparsed.
    if (!(name.startsWith('c.') || name.startsWith('k.')) || name.startsWith(ownCheck)) continue;
    const entry = parseEntry(name);
    if (entry === undefined || (entry.kind !== 'c' && entry.kind !== 'k')) continue;
    if (alive(entry.kind === 'k' ? (entry.claimer as string) : entry.owner)) continue;
    const notes = notesIf(dir, name, wanted);
    if (notes === undefined || notes === false) continue;
    for (const deadline = Date.now() + waitMs; sandboxAlive(dir, entry.id); ) {
      if (Date.now() >= deadline) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    if (sandboxAlive(dir, entry.id)) continue;
    const mine = join(dir, `k.${me}.${entry.id}`);
    try {
      renameSync(join(dir, name), mine);
    } catch {
      continue; // another process claimed it first
    }
    claimed.push({
      notes,
      done: () => {
        try {
          renameSync(mine, join(dir, `e.${process.hrtime.bigint()}.${entry.id}`));
        } catch {
          tryUnlink(mine);
        }
        tryUnlink(join(dir, `r.${entry.id}`));
        tryUnlink(join(dir, `s.${entry.id}`));
      },
    });
  }
  // A sandbox record whose run's notes are gone, of a dead owner: nothing will read it.
  const ownRecord = `s.${selfId()}.`;
  for (const name of names) {
    if (!name.startsWith('s.') || name.startsWith(ownRecord)) continue;
    const entry = parseEntry(name);
    if (entry?.kind === 's' && !alive(entry.owner) && !namesRun(names, entry.id)) tryUnlink(join(dir, name));
  }
  return claimed;
}

/** Whether `names` holds an entry of run `id` other than its sandbox record. */
function namesRun(names: readonly string[], id: string): boolean {
  const suffix = `.${id}`;
  return names.some((name) => !name.startsWith('s.') && name.endsWith(suffix) && parseEntry(name)?.id === id);
}

function takeNotes(dir: string, names: readonly string[], start: bigint, marker: string, roots: readonly string[]): SharedNotes[] {
  const me = selfId();
  const taken: SharedNotes[] = [];
  const liveMarkers: bigint[] = [];
  const tombstones: Array<{ name: string; at: bigint }> = [];
  // Sandbox records, checks and this realm's published runs (its notes are in-process, protected.ts)
  // are skipped unparsed: a burst of runs lists hundreds of them in every run.
  const ownPublished = `r.${me}.`;
  const alive = aliveOnce();
  const overlaps = overlapOnce(roots);
  for (const name of names) {
    if (name.startsWith('s.') || name.startsWith('c.') || name.startsWith(ownPublished)) continue;
    const entry = parseEntry(name);
    if (entry === undefined || name === marker) continue;
    const mine = entry.id.startsWith(`${me}.`);
    if (entry.kind === 'e') tombstones.push({ name, at: entry.at });
    if (entry.kind === 's' || entry.kind === 'c') continue;
    if (entry.kind === 'n' && !mine && !alive(entry.owner)) {
      // A run whose process died before its sandbox could start: nothing to check, removed.
      tryUnlink(join(dir, name));
      continue;
    }
    if (entry.kind === 'n') liveMarkers.push(entry.at);
    if ((entry.kind === 'r' || entry.kind === 'k') && !mine && !inFlight(dir, entry, alive)) {
      // Left by a run whose process died: never taken, and removed. Its missed check is its c.
      // (Linux), or a claim of it whose claimer died: left for claimMissedChecks.
      if (entry.kind === 'r') tryUnlink(join(dir, name));
      continue;
    }
    // This realm's own runs are its in-process notes (protected.ts).
    if (mine || (entry.kind !== 'r' && entry.kind !== 'k' && !(entry.kind === 'e' && entry.at >= start))) continue;
    let notes = notesIf(dir, name, overlaps);
    if (notes === undefined && (entry.kind === 'r' || entry.kind === 'k')) {
      // It ended meanwhile: its notes are under an e. name, kept while our marker is there.
      const moved = list(dir).find((other) => other.startsWith('e.') && other.endsWith(`.${entry.id}`));
      notes = moved === undefined ? undefined : notesIf(dir, moved, overlaps);
    }
    if (notes !== undefined && notes !== false) taken.push(notes);
  }
  // Ended runs' notes are kept while a run noting since before they ended may need them: one that
  // ended before this window opened and before every marker listed is needed by no run (a marker
  // this listing missed was made after it began, so that run noted after that check ended).
  const oldest = liveMarkers.reduce((a, b) => (b < a ? b : a), start);
  for (const t of tombstones) if (t.at < oldest) tryUnlink(join(dir, t.name));
  return taken.sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
}
