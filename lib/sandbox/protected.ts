// SPDX-License-Identifier: MIT
// Protected paths that do not exist when a command starts (.zero, .agents, or .git/hooks and
// .git/config of an existing repository) cannot be made read-only without creating something on
// the host. Instead they are noted before the run, and anything the command created there is
// removed (without following links) and reported when it ends, so nothing persists to run later.
// The git side (every config, hook and pointer file host git would read, and repositories the
// command creates) is git-guard.ts before the run and git-check.ts after it.
import type { SandboxPlan, WritableRoot } from '../backend/types.js';
import { DirectorySet, rootsOverlap } from '../path-within.js';
import { SandboxError } from '../errors.js';
import { toBytes, type ScansAhead } from './beneath.js';
import { checkGitAfterRun, type ProtectedPathViolation } from './git-check.js';
import type { GitGuard } from './git-guard.js';
import { checkOwnEntries, noteOwnEntries, type OwnEntry } from './own-entries.js';
import { checkToolConfigs, elidedNote, holdToolConfigs, withToolConfigsInFlight, type ToolConfigGuard, type ToolConfigNote } from './tool-configs.js';
import type { QuietSince } from './guard-memo.js';
import { frozenRoot } from './watched-memo.js';
import { unpackCheck, type InterruptedRunReport } from './missed-checks.js';
import { looksNow, unchangedRoots } from './root-tops.js';
import { claimMissedChecks, openNotingWindow, type NotingWindow, type PublishedNotes, type SharedNotes } from './run-notes.js';
import { guardScansAhead } from './scans-ahead.js';
import { besideGit, guardedRoots, scanNoted, type Scanned } from './protected-look.js';

export type { ProtectedPathViolation } from './git-check.js';

/** What a run's protected-path check needs: noted before the command starts. */
export interface ProtectedPathGuard {
  git: GitGuard;
  /** zero-sandbox's own entry-point links and shims inside the write roots (see own-entries.ts). */
  ownEntries: OwnEntry[];
  /** The agent and editor configs that run programs (see tool-configs.ts). */
  tools: ToolConfigGuard;
  /** When the noting began (monotonic ns): notes of runs in flight are taken oldest first. */
  since: bigint;
  /** What the missed checks of earlier, interrupted runs removed or put back before this run started. */
  interrupted?: InterruptedRunReport[];
}

/**
 * The guards of this process's runs whose sandboxes may still be running (see guardProtectedPaths).
 * Not per-run state: what one run may take as "before" depends on the others. Other processes'
 * runs are seen through their published notes (run-notes.ts).
 */
const inFlight: Array<{ roots: string[]; guard: ProtectedPathGuard }> = [];

/**
 * The noting windows of this process's runs open now (a guard taken in pieces, beginGuard), and
 * the runs of this process that ended while one was open: a run that began noting before one of
 * them ended may have seen what its command left before its check undid it, so it takes that
 * run's notes, as it does another process's (run-notes.ts). Kept until no window older is open.
 */
const openWindows: Array<{ since: bigint }> = [];
const endedWhileNoting: Array<{ roots: string[]; guard: ProtectedPathGuard; ended: bigint }> = [];

/**
 * The watch set of a run whose notes are its own look, kept across runs (guard-memo.ts): quiet
 * after the run, no directory that look looked in changed since before it was made. Held until
 * the run's release.
 */
const quietSets = new WeakMap<ProtectedPathGuard, QuietSince>();

function closeWindow(window: { since: bigint }): void {
  const index = openWindows.indexOf(window);
  if (index >= 0) openWindows.splice(index, 1);
  const oldest = openWindows.reduce<bigint | undefined>((a, w) => (a === undefined || w.since < a ? w.since : a), undefined);
  for (let i = endedWhileNoting.length - 1; i >= 0; i--) {
    if (oldest === undefined || (endedWhileNoting[i] as { ended: bigint }).ended < oldest) endedWhileNoting.splice(i, 1);
  }
}

/** Never equal to a state `inspect` gives: a config noted so is compared as if it was missing. */
const UNKNOWN_BEFORE = 'unknown:';

/** A guard's notes as another run takes them. */
function notesOf(roots: string[], guard: ProtectedPathGuard): SharedNotes {
  return { since: guard.since, roots, gitRoots: guard.git.roots, configs: guard.git.configs, watched: guard.git.watched, ownEntries: guard.ownEntries };
}

/**
 * A command may change anything in its write roots while it runs, so a run that starts meanwhile
 * must not take what it finds there as the state before: its check would later "restore" the other
 * command's work (a program-running config key) after that run's own check undid it. For every
 * path inside the write roots of a run in flight (of this process, or of another one: `others`),
 * the notes of the oldest such run that has one are taken (they go back to before any of those
 * runs started, and carry over to paths this run did not find, such as a config the other command
 * replaced by a link); a config or entry point found there that none of them noted is not trusted
 * (a config counts as new, an entry point is left to their checks). Paths outside their roots keep
 * this run's own notes.
 */
function takeNotesOfRunsInFlight(guard: ProtectedPathGuard, roots: readonly string[], others: readonly SharedNotes[]): void {
  const ended = endedWhileNoting.filter((run) => run.ended >= guard.since);
  const local = [...inFlight, ...ended].filter((run) => rootsOverlap(run.roots, roots)).map((run) => notesOf(run.roots, run.guard));
  if (local.length === 0 && others.length === 0) return;
  const earlier = [...local, ...others].sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
  const mine = new DirectorySet(roots.map(toBytes));
  const inMine = (bytes: string) => mine.holds(bytes);
  const earlierGitRoots = new DirectorySet(earlier.flatMap((run) => run.gitRoots));
  const underEarlier = (bytes: string) => earlierGitRoots.holds(bytes);
  // The notes this run looked at may be kept across runs (guard-memo.ts): each map is copied at
  // its first change only. A look that nothing here changes stays the run's own, by identity (its
  // check then asks the look's watch set, and its packed notes are reused).
  const git = guard.git;
  let configs = git.configs;
  let watched = git.watched;
  let toolNotes = guard.tools.notes;
  const setConfig = (path: string, note: { bytes: Buffer | undefined; state: string }) => {
    if (configs.get(path) === note) return;
    if (configs === git.configs) configs = new Map(configs);
    configs.set(path, note);
  };
  const setWatched = (path: string, state: string) => {
    if (watched.get(path) === state) return;
    if (watched === git.watched) watched = new Map(watched);
    watched.set(path, state);
  };
  const setToolNote = (path: string, note: ToolConfigNote) => {
    if (toolNotes.get(path) === note) return;
    if (toolNotes === guard.tools.notes) toolNotes = new Map(toolNotes);
    toolNotes.set(path, note);
  };
  // A config's note: the earliest earlier run's that has it in this run's roots; else this run's
  // own, which is not trusted (the state before unknown) under an earlier run's roots.
  const takenConfigs = new Map<string, { bytes: Buffer | undefined; state: string }>();
  for (const run of earlier) for (const [path, note] of run.configs) if (inMine(path) && !takenConfigs.has(path)) takenConfigs.set(path, note);
  for (const [path, own] of git.configs) {
    const unknown = underEarlier(path) && !(own.bytes === undefined && own.state === UNKNOWN_BEFORE);
    const note = takenConfigs.get(path) ?? (unknown ? { bytes: undefined, state: UNKNOWN_BEFORE } : own);
    if (note !== own) setConfig(path, note);
  }
  for (const [path, note] of takenConfigs) if (!git.configs.has(path)) setConfig(path, note);
  const entries = new Map(guard.ownEntries.filter((e) => !underEarlier(toBytes(e.path))).map((e) => [e.path, e]));
  const taken = new Set<string>();
  for (const run of earlier) {
    for (const [path, state] of run.watched) {
      if (inMine(path) && !taken.has(`w${path}`)) {
        taken.add(`w${path}`);
        setWatched(path, state);
      }
    }
    for (const e of run.ownEntries) if (inMine(toBytes(e.path)) && !entries.has(e.path)) entries.set(e.path, e);
  }
  guard.ownEntries = [...entries.values()];
  // The agent and editor configs the same way, from other processes' runs (those of this process
  // are taken by noteToolConfigs): from the check each published.
  const fromOthers = new Set(others);
  for (const run of earlier.filter((r) => fromOthers.has(r))) {
    const tools = toolGuardOf(run);
    for (const [path, note] of tools?.notes ?? []) {
      if (inMine(path) && !taken.has(`t${path}`)) {
        taken.add(`t${path}`);
        setToolNote(path, note);
      }
    }
    // At the top of a root that run did not note name by name: what it would have noted (missing).
    if (tools?.elided === undefined) continue;
    for (const [path] of toolNotes) {
      const note = taken.has(`t${path}`) ? undefined : elidedNote(tools, path);
      if (note === undefined) continue;
      taken.add(`t${path}`);
      setToolNote(path, note);
    }
  }
  if (configs !== git.configs || watched !== git.watched) guard.git = { ...git, configs, watched };
  if (toolNotes !== guard.tools.notes) guard.tools = { ...guard.tools, notes: toolNotes };
}

/**
 * The agent and editor config notes of another process's run, from the check it published.
 * Undefined for notes of another version (or unreadable ones): this run keeps its own notes there,
 * which may already hold that run's changes (README, agent and editor configs).
 */
function toolGuardOf(run: SharedNotes): ToolConfigGuard | undefined {
  try {
    const tools = (unpackCheck(run.after) as { tools?: { notes?: unknown; elided?: unknown } } | undefined)?.tools;
    if (!(tools?.notes instanceof Map)) return undefined;
    return tools as ToolConfigGuard;
  } catch {
    return undefined;
  }
}

/** What guardProtectedPaths gives: the plan with the read-only paths added, the notes, and their release. */
export interface GuardedRun {
  plan: SandboxPlan;
  guard: ProtectedPathGuard;
  release: () => void;
  started: (pid: number) => void;
}

/** The caller's write roots of a plan's frozen list (the plan memo's), and their paths: made once per list. */
const userRootsMade = new WeakMap<readonly WritableRoot[], { user: WritableRoot[]; roots: string[] }>();

/**
 * The write roots with protected names (the caller's; managed caches hold no repository) and their
 * paths. For a frozen list, each root frozen too (a kept plan, given run after run), made once and
 * handed out frozen: a thousand roots are not filtered and mapped again at every run.
 */
function userRootsOf(writeRoots: readonly WritableRoot[]): { user: WritableRoot[]; roots: string[] } {
  const made = userRootsMade.get(writeRoots);
  if (made !== undefined) return made;
  const user = writeRoots.filter((w) => w.protectedNames.length > 0);
  const roots = user.map((w) => w.root);
  if (!Object.isFrozen(writeRoots) || !writeRoots.every(frozenRoot)) return { user, roots };
  const frozen = { user: Object.freeze(user) as WritableRoot[], roots: Object.freeze(roots) as string[] };
  userRootsMade.set(writeRoots, frozen);
  return frozen;
}

/**
 * Before a run: the plan with every existing file that could make host git (or the agent, through
 * .zero/.agents) run code later added as read-only paths of its write root, and what to check
 * after the run. The write roots with protected names are the caller's (managed caches hold no
 * repository). Nothing is created in a write root. The notes are then held among the runs in
 * flight (see takeNotesOfRunsInFlight), in this process and, published, for other processes,
 * until `release` is called: once the sandbox is gone and its check has run, or when it does not
 * start. Call it right before the sandbox starts (its command may change things from then on).
 */
export function guardProtectedPaths(plan: SandboxPlan): GuardedRun {
  const guarding = beginGuard(plan);
  for (;;) {
    const guarded = guarding.step();
    if (guarded !== undefined) return guarded;
  }
}

/**
 * guardProtectedPaths in pieces, for a start whose pieces may run in different turns of the event
 * loop (start-pacing.ts): each `step()` does the next one (the missed checks of earlier runs of
 * these roots; the look at the repositories; the rest of the notes and their publication) and the
 * last returns the guarded run. Between two pieces the noting window is open: runs of this process,
 * as of others, that end meanwhile leave their notes for this one. A piece that throws has ended
 * the guard (nothing stays published); `abandon()` ends one given up between pieces. With
 * `offThread`, the repositories' walk runs off the caller's thread: while `pending()` gives a promise,
 * call the next step once it has settled.
 */
export function beginGuard(plan: SandboxPlan, offThread = false): { step(): GuardedRun | undefined; pending(): Promise<unknown> | undefined; abandon(): void } {
  const { user, roots } = userRootsOf(plan.writeRoots);
  let interrupted: InterruptedRunReport[] = [];
  let window: NotingWindow | undefined;
  let local: { since: bigint } | undefined;
  let scanned: Scanned | undefined;
  let scans: ScansAhead | undefined;
  let waiting: Promise<void> | undefined;
  let piece = user.length === 0 ? 2 : 0;
  const abandon = (): void => {
    scanned?.quiet?.release();
    scanned = undefined;
    window?.abandon();
    if (local !== undefined) closeWindow(local);
    window = undefined;
    local = undefined;
    piece = -1;
  };
  const step = (): GuardedRun | undefined => {
    if (piece < 0) throw new SandboxError('protected_path', 'the protected-path notes of this run were given up');
    try {
      if (piece === 0) {
        // What an earlier run of these roots planted before its process was killed is undone
        // first: this run's notes must not take it as the state before.
        interrupted = finishInterruptedRuns(roots);
        piece = 1;
        return undefined;
      }
      if (piece === 1) {
        // Opened before anything is looked at: runs that end meanwhile leave their notes.
        window = openNotingWindow();
        local = { since: window.since };
        openWindows.push(local);
        // offThread: the repositories' walk on the thread pool, from within the window as the
        // look below would be; the next step waits for it (pending()) and takes its answers.
        if (offThread) {
          const done = (made?: ScansAhead): void => {
            scans = made;
            waiting = undefined;
          };
          waiting = guardScansAhead(roots).then(done, () => done());
          piece = 3;
          return undefined;
        }
        scanned = scanNoted(plan, user);
        piece = 2;
        return undefined;
      }
      if (piece === 3) {
        // The scans made ahead when they are there (pending() has settled), else the look here.
        const made = scans;
        scans = undefined;
        waiting = undefined;
        scanned = made === undefined ? scanNoted(plan, user) : made.use(() => scanNoted(plan, user));
        piece = 2;
        return undefined;
      }
      const guarded = noteRest(plan, roots, window, scanned ?? scanNoted(plan, user));
      const { git, ownEntries, tools, since } = guarded.guard;
      const published = window?.publish({ ...notesOf(roots, guarded.guard), check: { git, ownEntries, tools, since } });
      if (interrupted.length > 0) guarded.guard.interrupted = interrupted;
      const run = { roots, guard: guarded.guard };
      inFlight.push(run);
      if (local !== undefined) closeWindow(local);
      window = undefined;
      local = undefined;
      scanned = undefined; // its watch set is the run's now (released with it)
      piece = -1;
      // The agent and editor configs' notes are held the same way: in this process
      // (tool-configs.ts), and for other processes in the published check (takeNotesOfRunsInFlight).
      return { ...guarded, ...heldUntilRelease(run, published, holdToolConfigs(guarded.guard.tools)) };
    } catch (error) {
      abandon();
      throw error;
    }
  };
  return { step, pending: () => waiting, abandon };
}

/**
 * A guarded run's `release` and `started`, made outside beginGuard: they live until the run's
 * exit, and a closure made there would keep its whole scope (the plan) with it.
 */
function heldUntilRelease(run: { roots: string[]; guard: ProtectedPathGuard }, published: PublishedNotes | undefined, releaseTools: () => void): Pick<GuardedRun, 'release' | 'started'> {
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    const index = inFlight.indexOf(run);
    if (index >= 0) inFlight.splice(index, 1);
    if (openWindows.length > 0) endedWhileNoting.push({ ...run, ended: process.hrtime.bigint() });
    releaseTools();
    quietSets.get(run.guard)?.release();
    published?.end();
  };
  return { release, started: (pid) => published?.started(pid) };
}

/**
 * Runs the after-run check of every earlier run of write roots overlapping `roots` (every one when
 * undefined) whose process died before its check, once its sandbox is gone (run-notes.ts), and
 * says what it removed or put back. Linux only (elsewhere a sandbox may outlive its supervisor).
 * Throws `protected_path` when the shared notes cannot be read.
 */
export function finishInterruptedRuns(roots?: readonly string[]): InterruptedRunReport[] {
  const out: InterruptedRunReport[] = [];
  for (const missed of claimMissedChecks(roots)) {
    const interruptedRun = missed.notes.roots;
    let guard: ProtectedPathGuard | undefined;
    try {
      guard = missed.notes.after === undefined ? undefined : (unpackCheck(missed.notes.after) as ProtectedPathGuard);
    } catch {
      guard = undefined;
    }
    if (guard === undefined) {
      const reason = 'an earlier run of this write root was killed before its after-run check, and its notes do not hold that check (another version of zero-sandbox wrote them): look at its git configs and hooks yourself';
      out.push(...interruptedRun.map((path) => ({ path, reason, interruptedRun })));
    } else {
      for (const v of checkProtectedPaths({ git: { ...guard.git, missedCheck: true }, ownEntries: guard.ownEntries, tools: guard.tools, since: guard.since })) out.push({ ...v, interruptedRun });
    }
    missed.done();
  }
  return out;
}

/** The rest of the notes of a run; `roots`: the paths of the caller's write roots (userRootsOf). */
function noteRest(plan: SandboxPlan, roots: string[], window: NotingWindow | undefined, { git, tools: found, quiet }: Scanned): { plan: SandboxPlan; guard: ProtectedPathGuard } {
  // The agent and editor configs (those the scan found below the top of the roots included), with
  // the notes of this process's runs in flight taken over them.
  const tools = withToolConfigsInFlight(found);
  const guard: ProtectedPathGuard = { git, ownEntries: noteOwnEntries(roots, plan.workspace), tools, since: window?.since ?? process.hrtime.bigint() };
  takeNotesOfRunsInFlight(guard, roots, window?.take(roots) ?? []);
  // The check asks the look's watch set only while the notes are this run's own look (see checkProtectedPaths).
  if (quiet !== undefined && guard.git === git && guard.tools === found) quietSets.set(guard, quiet);
  else quiet?.release();
  return { plan: { ...plan, writeRoots: guardedRoots(plan.writeRoots, git, tools.readOnly) }, guard };
}

/** What a backend reports once its sandbox is gone (see checkProtectedPaths). */
export interface ProtectedExit {
  /** The command's exit code, or 1 when it exited 0 but left something for host git to run. */
  exitCode: number | null;
  protectedPathViolations: string[];
  protectedPathDetails: ProtectedPathViolation[];
}

/**
 * The after-run check as every backend applies it (Linux, macOS, Windows: the check runs on the
 * host in TypeScript, so all use the same one). Call only once every sandboxed process is gone.
 */
export function protectedExit(guard: ProtectedPathGuard, exitCode: number | null): ProtectedExit {
  const violations = checkProtectedPaths(guard).filter((v) => v.interruptedRun === undefined);
  return {
    // A command that left something for host git to run has failed, whatever it returned.
    exitCode: violations.length > 0 && exitCode === 0 ? 1 : exitCode,
    protectedPathViolations: violations.map((v) => v.path),
    protectedPathDetails: violations,
  };
}

/** How many after-run checks found the look's watch set quiet (tests count them). */
export const quietCheckCounts = { quiet: 0 };

/**
 * After a run, once every process of the sandbox is gone: removes what the command created at
 * protected paths or left for host git to run, and says what and why. Never throws.
 */
export function checkProtectedPaths(guard: ProtectedPathGuard): ProtectedPathViolation[] {
  // First what was done before the run for earlier, interrupted runs (`interruptedRun` tells them apart).
  const out: ProtectedPathViolation[] = [...(guard.interrupted ?? [])];
  // The agent and editor config entries the git check's scan finds (the same walk).
  const named: string[] = [];
  // No directory the look before the run looked in has changed since before that look (its watch
  // set is quiet, guard-memo.ts; every process of the sandbox is gone, so whatever it did is
  // queued): every entry it found missing, a link or a directory is so still, and no .git, hooks
  // directory or config was made beside them. What remains is what a directory event does not
  // show (the content of configs, indexes and agent and editor configs) and the repositories and
  // configs the scan of the whole workspace finds.
  if (quietSets.get(guard)?.quiet() === true) {
    quietCheckCounts.quiet++;
    try {
      out.push(...checkGitAfterRun(guard.git, named, undefined, undefined, true));
    } catch (error) {
      out.push({ path: '', reason: `the protected-path check failed: ${error instanceof Error ? error.message : String(error)}` });
    }
    out.push(...checkOwnEntries(guard.ownEntries));
    out.push(...checkToolConfigs(guard.tools, undefined, named, undefined, true));
    return out;
  }
  // The nested roots' stamps now, read once for both checks below: a root whose stamp is as before
  // the run had no entry made at its top (root-tops.ts; a record of another version holds none).
  const settled = Array.isArray(guard.git.settled) ? guard.git.settled.filter((e) => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string') : [];
  const now = looksNow([...settled.flatMap(([root]) => [root, besideGit(root)]), ...(guard.tools.elided ?? []).map(([root]) => root)]);
  try {
    out.push(...checkGitAfterRun(guard.git, named, unchangedRoots(settled, now), now));
  } catch (error) {
    out.push({ path: '', reason: `the protected-path check failed: ${error instanceof Error ? error.message : String(error)}` });
  }
  out.push(...checkOwnEntries(guard.ownEntries));
  out.push(...checkToolConfigs(guard.tools, undefined, named, now));
  return out;
}
