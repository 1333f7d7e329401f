// SPDX-License-Identifier: MIT
// The files through which coding agents and editors on the host run programs (hooks, MCP server
// commands, tasks that run when a folder is opened: AGENT_TOOL_CONFIG_FILES), in every write root
// of the caller. The plan makes the existing ones read-only on every backend; this is the check
// after the run, the same on every OS, for what no backend can make read-only without creating
// something on the host (a missing file, or a link put on the way to one) and for anything a
// backend let through. Before the run each file's state and content are noted; once every
// process of the sandbox is gone, walking with directory descriptors and never following a link:
// a file the command created there is removed, one it changed is put back byte for byte (removed
// when that fails), and a link it put on the way is removed. Each is a protected-path violation.
//
// The same files below the top of a write root (`packages/app/.vscode/tasks.json`) and VS Code
// workspace files (`*.code-workspace`) are found by the repository scan the git guard runs anyway
// (NESTED_CONFIG_SCAN), before the run and after it. They stay writable during the run (a
// read-only mount deep in a tree would make `rm -rf packages/app` fail): once the sandbox is gone,
// one the command created is removed and one it changed is put back, as at the top; one it deleted
// stays deleted (nothing runs from a missing file). Existing AGENT_TOOL_CONFIG_DIRS found so are
// read-only during the run (their content is not compared afterwards).
//
// Every plain `.env` (ENV_FILE_NAME) at the top of a write root and below it is noted the same
// way, but stays writable and is only checked for what it makes a host agent run (env-files.ts).
import { lstatSync, readlinkSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

import { ENV_FILE_NAME, isWorkspaceFile, NESTED_CONFIG_SCAN } from '../protected-names.js';
import { DirectorySet, isCleanAbsolute } from '../path-within.js';
import { fromBytes, inspect, inspectManyWatched, Lookahead, readSmall, removeEntry, replaceFile, toBytes, type EntryInfo } from './beneath.js';
import { checkEnvFile, MAX_ENV_BYTES } from './env-files.js';
import type { ProtectedPathViolation } from './git-check.js';
import { settledStamp } from './root-tops.js';
import { CONFIGS } from './tool-config-paths.js';

/** Largest file whose content is noted (these are a few KB); a larger one is only compared. */
const MAX_CONFIG_BYTES = 1 << 20;
/** Links followed from a protected path to where it leads, at most. */
const MAX_HOPS = 8;
/** Every path noted relative to a write root: the configs and `.env` (last: see noteFile). */
const PROTECTED = [...CONFIGS, ENV_FILE_NAME];
/** PROTECTED split into components, once. */
const PROTECTED_PARTS = PROTECTED.map((file) => file.split('/'));
/** PROTECTED relative to a root with this OS's separator. */
const PROTECTED_TAILS = PROTECTED_PARTS.map((parts) => join(...parts));

/** One protected file as it was before the run; paths are byte strings (see beneath.ts). */
export interface ToolConfigNote {
  path: string;
  /** Its write root and the path's components below it. */
  root: string;
  parts: string[];
  /** `kind:stamp` of each component from the first below the root, up to the first that is not a directory (directories: `dir`). */
  states: string[];
  /** Content and permission bits, when it was a regular file small enough to note. */
  bytes?: Buffer;
  mode?: number;
  /** Found by the scan (below the top of a write root, or a workspace file): writable during the run, and a deletion is kept. */
  found?: boolean;
  /** A plain `.env` (or where a link named so leads): writable, only its content is checked (env-files.ts). */
  env?: boolean;
}

/** What one run noted, by path. */
export interface ToolConfigGuard {
  roots: string[];
  notes: Map<string, ToolConfigNote>;
  /**
   * Write roots nested in another whose top was not looked at name by name (see `noteToolConfigs`),
   * each with its stamp before the run: a changed stamp has the check look there name by name.
   */
  elided?: Array<[string, string]>;
  /** Existing AGENT_TOOL_CONFIG_DIRS below the top of a write root: read-only during the run (plan paths, UTF-8). */
  readOnly: string[];
}

/** A note with nothing looked at yet; `env` marks a `.env` (the flag is left out otherwise). */
function freshNote(path: string, root: string, parts: string[], env: boolean): ToolConfigNote {
  return env ? { path, root, parts, states: [], env } : { path, root, parts, states: [] };
}

/** The last root found clean (isCleanAbsolute): a run asks for one root's paths many times over. */
let cleanRoot: string | undefined;

/** A component that join() would keep as it is. */
function cleanPart(part: string | undefined): part is string {
  return part !== undefined && part !== '' && part !== '.' && part !== '..' && !part.includes('/') && !part.includes(sep);
}

/**
 * The path of the first `n` components of a note, as a byte string: join(root, ...parts), with
 * the components put after a clean root by concatenation when join() would leave them as they are
 * (a run asks for every protected file's path and each of its parents, before and after).
 */
function prefix(root: string, parts: readonly string[], n: number): string {
  if (root !== cleanRoot) {
    if (root === sep || !isCleanAbsolute(root)) return join(root, ...parts.slice(0, n));
    cleanRoot = root;
  }
  let out = root;
  for (let i = 0; i < n; i++) {
    const part = parts[i];
    if (!cleanPart(part)) return join(root, ...parts.slice(0, n));
    out += sep + part;
  }
  return out;
}

function stateOf(path: string, info: EntryInfo = inspect(path)): string {
  return info.kind === 'dir' ? 'dir' : info.kind === 'missing' ? 'missing' : `${info.kind}:${info.stamp}`;
}

/** The first component of every protected file: what a pass looks at in each root first. */
const FIRST_COMPONENTS = NESTED_CONFIG_SCAN.names;

/**
 * The protected paths an entry the scan reported stands for, each with its write root (the
 * innermost holding it) and its components below that root: the entry itself for a workspace
 * file, else the protected paths that begin with its name (`.vscode` -> `.vscode/tasks.json`, ...).
 */
function pathsOfEntry(entry: string, roots: DirectorySet): Array<{ root: string; parts: string[]; env: boolean }> {
  const root = roots.holderAbove(entry);
  if (root === undefined) return [];
  const at = relative(root, entry).split(sep);
  const name = basename(entry);
  if (isWorkspaceFile(fromBytes(name))) return [{ root, parts: at, env: false }];
  // The name as listed (a case-folding volume may hold `.VSCODE`), then the rest of each path.
  const wanted = fromBytes(name).toLowerCase();
  return PROTECTED.filter((file) => (file.split('/')[0] as string).toLowerCase() === wanted).map((file) => ({ root, parts: [...at, ...file.split('/').slice(1)], env: file === ENV_FILE_NAME }));
}

/**
 * The state of the directories on the way, each looked at once per pass (several files share
 * `.claude` or `.vscode`, and in most workspaces these are missing: one look for all their files).
 * The first component below every root is looked at in one batch when the pass begins (one walk
 * per root instead of one per name).
 */
class Dirs {
  readonly #states = new Map<string, string>();
  readonly #ahead: Lookahead;

  constructor(roots: readonly string[]) {
    this.#ahead = new Lookahead(roots.flatMap((root) => FIRST_COMPONENTS.map((name) => prefix(root, [name], 1))));
  }

  /** What is at `path` now (the batch's answer the first time it is asked). */
  look(path: string): EntryInfo {
    return this.#ahead.take(path);
  }

  state(path: string): string {
    let state = this.#states.get(path);
    if (state === undefined) this.#states.set(path, (state = stateOf(path, this.look(path))));
    return state;
  }

  /** Something on the file system changed (a link removed): everything is looked at again. */
  forget(path: string): void {
    this.#states.delete(path);
    this.#ahead.drop();
  }
}

/**
 * Notes one file below `root` and, when a link lies on its way, the path that link leads to (if
 * it lies in one of `roots`): the command could change the file there instead. `env`: a `.env`
 * (a file noted both ways is protected whole).
 */
function noteFile(root: string, parts: string[], roots: DirectorySet, notes: Map<string, ToolConfigNote>, dirs: Dirs, hops: number, env = false): void {
  const path = prefix(root, parts, parts.length);
  const had = notes.get(path);
  if (had !== undefined) {
    if (!env) delete had.env;
    return;
  }
  const note = freshNote(path, root, parts, env);
  notes.set(path, note);
  for (let n = 1; n <= parts.length; n++) {
    const at = prefix(root, parts, n);
    const state = n < parts.length ? dirs.state(at) : stateOf(at, dirs.look(at));
    note.states.push(state);
    if (state === 'dir' && n < parts.length) continue;
    if (state.startsWith('file:') && n === parts.length) {
      const bytes = readSmall(at, env ? MAX_ENV_BYTES : MAX_CONFIG_BYTES);
      if (bytes !== undefined && stateOf(at) === state) {
        note.bytes = bytes;
        note.mode = modeOf(at);
      }
    }
    if (state.startsWith('link:') && hops < MAX_HOPS) followLink(at, parts.slice(n), roots, notes, dirs, hops, env);
    return;
  }
}

function modeOf(path: string): number {
  try {
    return lstatSync(Buffer.from(path, 'latin1')).mode & 0o777;
  } catch {
    return 0o644;
  }
}

/** A link (planted on the host, e.g. a shared settings file): the path it leads to is noted too. */
function followLink(link: string, rest: string[], roots: DirectorySet, notes: Map<string, ToolConfigNote>, dirs: Dirs, hops: number, env: boolean): void {
  let target: string;
  try {
    target = resolve(dirname(link), readlinkSync(Buffer.from(link, 'latin1'), { encoding: 'buffer' }).toString('latin1'));
  } catch {
    return;
  }
  const full = join(target, ...rest);
  const root = roots.holderAbove(full);
  if (root === undefined) return; // outside the write roots: the command cannot write there
  noteFile(root, relative(root, full).split(sep), roots, notes, dirs, hops + 1, env);
}

/**
 * The runs of this process whose sandboxes may still be running, oldest first. A run that starts
 * meanwhile takes their notes for the same files: what it would find there may already be the
 * other command's work, and its check would then put that back after the other check undid it.
 */
const inFlight: ToolConfigGuard[] = [];

/**
 * The roots among `covered` (see below) whose stamp (`stamps`, taken before the scan) can show any
 * later change of their entries (see settledStamp).
 */
function elidable(covered: readonly string[], stamps: ReadonlyMap<string, EntryInfo>): Array<[string, string]> {
  const now = BigInt(Date.now()) * 1_000_000n;
  const out: Array<[string, string]> = [];
  for (const root of covered) {
    const info = stamps.get(root);
    if (info !== undefined && settledStamp(info, now)) out.push([root, info.stamp]);
  }
  return out;
}

/**
 * Before a run: the state of every protected file in `roots` (the caller's write roots), and below
 * each entry the repository scan reported (`named`, byte strings: see NESTED_CONFIG_SCAN).
 *
 * A root nested in another (`covered`: the outer root's scan walked it and reported the config
 * entries of its top, see GitGuard.namesCovered) is not looked at name by name when its stamp
 * before the scan (`stamps`) is settled: the entries the scan reported there are noted as those
 * below the top are; the names it did not report were absent. After the run an unchanged stamp of
 * that root shows that no entry was made in it since; a changed one (or one no longer reached
 * without a link) has the check look at each protected path there as at the top of any root.
 * A thousand `dist` roots under the workspace's `packages/` so cost a look each, not one per name.
 */
export function noteToolConfigsFound(roots: readonly string[], named: readonly string[] = [], covered: readonly string[] = [], stamps: ReadonlyMap<string, EntryInfo> = new Map()): ToolConfigGuard {
  const bytesRoots = [...new Set(roots.map(toBytes))];
  const elided = elidable(covered, stamps);
  const skipped = new Set(elided.map(([root]) => root));
  const notes = new Map<string, ToolConfigNote>();
  const dirs = new Dirs(bytesRoots.filter((root) => !skipped.has(root)));
  const rootSet = new DirectorySet(bytesRoots);
  for (const root of bytesRoots) {
    if (skipped.has(root)) continue;
    for (const [i, file] of PROTECTED.entries()) noteFile(root, [...(PROTECTED_PARTS[i] as string[])], rootSet, notes, dirs, 0, file === ENV_FILE_NAME);
  }
  const readOnly: string[] = [];
  for (const entry of named) {
    for (const { root, parts, env } of pathsOfEntry(entry, rootSet)) {
      const path = prefix(root, parts, parts.length);
      if (notes.has(path)) continue;
      noteFile(root, parts, rootSet, notes, dirs, 0, env);
      const note = notes.get(path);
      if (note === undefined) continue;
      note.found = true;
      // A directory loaded whole (a Gemini extension): read-only, as at the top of a root. (A
      // `.env` directory, often a Python virtual environment, is nothing of the kind.)
      if (note.env !== true && note.states.length === parts.length && note.states[parts.length - 1] === 'dir' && toBytes(fromBytes(path)) === path) readOnly.push(fromBytes(path));
    }
  }
  return { roots: bytesRoots, notes, readOnly, ...(elided.length > 0 ? { elided } : {}) };
}

/**
 * noteToolConfigs: what this run found (noteToolConfigsFound), with the notes of the runs of this
 * process in flight taken over it (withToolConfigsInFlight).
 */
export function noteToolConfigs(roots: readonly string[], named: readonly string[] = [], covered: readonly string[] = [], stamps: ReadonlyMap<string, EntryInfo> = new Map()): ToolConfigGuard {
  return withToolConfigsInFlight(noteToolConfigsFound(roots, named, covered, stamps));
}

/**
 * `found` (left unchanged: it may be a look kept across runs, guard-memo.ts) with, for each path,
 * the note of the oldest run of this process in flight that has one instead.
 */
export function withToolConfigsInFlight(found: ToolConfigGuard): ToolConfigGuard {
  if (inFlight.length === 0) return found;
  let notes: Map<string, ToolConfigNote> | undefined;
  // The oldest run in flight with a note of the path (asked in turn: a burst holds hundreds).
  for (const [path, note] of found.notes) {
    for (const run of inFlight) {
      const earlier = run.notes.get(path) ?? elidedNote(run, path);
      if (earlier === undefined) continue;
      if (earlier !== note) (notes ??= new Map(found.notes)).set(path, earlier);
      break;
    }
  }
  return notes === undefined ? found : { ...found, notes };
}

/**
 * The note an earlier run in flight would have taken of `path` had it looked at the top of its
 * elided roots name by name: a protected path at the top of one of them that it did not note was
 * missing then (its scan did not report the entry). Undefined when `path` is no such path.
 */
export function elidedNote(run: ToolConfigGuard, path: string): ToolConfigNote | undefined {
  if (run.elided === undefined) return undefined;
  for (const [i, file] of PROTECTED.entries()) {
    const parts = [...(PROTECTED_PARTS[i] as string[])];
    const tail = PROTECTED_TAILS[i] as string;
    if (!path.endsWith(tail) || path.length <= tail.length + 1) continue;
    const root = path.slice(0, -(tail.length + 1));
    if (prefix(root, parts, parts.length) === path && elidedRoots(run).has(root)) return freshNote(path, root, parts, file === ENV_FILE_NAME);
  }
  return undefined;
}

const elidedSets = new WeakMap<ToolConfigGuard, Set<string>>();

function elidedRoots(run: ToolConfigGuard): Set<string> {
  let set = elidedSets.get(run);
  if (set === undefined) elidedSets.set(run, (set = new Set((run.elided ?? []).map(([root]) => root))));
  return set;
}

/** Keeps a started run's notes among the runs in flight until the returned function is called. */
export function holdToolConfigs(guard: ToolConfigGuard): () => void {
  inFlight.push(guard);
  return () => {
    const index = inFlight.indexOf(guard);
    if (index >= 0) inFlight.splice(index, 1);
  };
}

/** Why a change was undone, and what to do instead. */
function why(note: ToolConfigNote, what: string, done: string): string {
  return `${what} ${fromBytes(note.parts.join('/'))}, a file from which a coding agent or editor on the host starts programs (hooks, MCP servers, tasks), which a sandboxed command may not create or change${done}; make that change outside the sandbox (with the agent's own file tools or an editor)`;
}

function removed(note: ToolConfigNote, path: string, what: string, dirs?: Dirs): ProtectedPathViolation {
  const gone = removeEntry(path);
  dirs?.forget(path);
  return { path: fromBytes(path), reason: why(note, what, gone ? '; it was removed' : '; it could not be removed') };
}

/** The check of one note; the violation it gives, if any. */
function checkNote(note: ToolConfigNote, dirs: Dirs): ProtectedPathViolation | undefined {
  const { root, parts, states } = note;
  for (let n = 1; n < parts.length; n++) {
    const at = prefix(root, parts, n);
    const now = dirs.state(at);
    const before = states[n - 1] ?? 'missing';
    if (now === 'dir') {
      if (before === 'dir' || before === 'missing') continue;
      break; // a directory where a link or file was: what lies below it is new
    }
    // A link put on the way: host tools would read the file through it. Else (unchanged, gone,
    // a file) nothing the command made can be below it.
    if (now.startsWith('link:') && now !== before) return removed(note, at, 'put a link on the way to', dirs);
    return undefined;
  }
  const before = states[parts.length - 1] ?? 'missing';
  const info = dirs.look(note.path);
  const now = stateOf(note.path, info);
  if (now === before) return undefined;
  if (note.env === true) return checkEnvFile(note, fromBytes(note.parts.join('/')), before, info);
  if (info.kind === 'error') return { path: fromBytes(note.path), reason: why(note, 'made unreadable the way to', '; it could not be checked: look at it before a host tool loads it') };
  if (info.kind === 'missing' && note.found === true) return undefined; // deleted: nothing left to run
  if (note.bytes !== undefined) {
    if (info.kind === 'file' && readSmall(note.path, MAX_CONFIG_BYTES)?.equals(note.bytes) === true) return undefined;
    if (replaceFile(note.path, note.bytes, note.mode)) return { path: fromBytes(note.path), reason: why(note, 'changed', '; it is as it was before the run') };
    return removed(note, note.path, 'changed (it could not be put back)');
  }
  if (info.kind === 'missing') return undefined; // nothing left to run (a large or odd file was only compared)
  if (info.kind === 'dir' && before === 'dir') return undefined; // a directory is not read as a config
  return removed(note, note.path, before === 'missing' ? 'created' : 'replaced');
}

/**
 * For each root whose top was not looked at name by name, unless `all` is false and its stamp is as
 * before the run: a note of each protected path there not in `seen`, as one that was missing (the
 * scan before the run did not report it).
 */
function elidedNotes(guard: ToolConfigGuard, seen: Set<string>, all: boolean, known?: ReadonlyMap<string, EntryInfo>): ToolConfigNote[] {
  const out: ToolConfigNote[] = [];
  const elided = guard.elided ?? [];
  const unknown = all ? [] : elided.map(([root]) => root).filter((root) => known?.has(root) !== true);
  const looked = inspectManyWatched(unknown);
  const now = new Map(known);
  unknown.forEach((root, i) => now.set(root, looked[i] as EntryInfo));
  elided.forEach(([root, stamp]) => {
    const info = all ? undefined : now.get(root);
    if (!all && info?.kind === 'dir' && info.stamp === stamp) return;
    for (const file of PROTECTED) {
      const parts = file.split('/');
      const path = prefix(root, parts, parts.length);
      if (seen.has(path)) continue;
      seen.add(path);
      out.push(freshNote(path, root, parts, file === ENV_FILE_NAME));
    }
  });
  return out;
}

/** Notes whose state a directory event does not show (a file's content): per map, once. */
const contentOnly = new WeakMap<ReadonlyMap<string, ToolConfigNote>, ToolConfigNote[]>();

/**
 * The notes of `notes` that a check must look at although no directory on their way changed since
 * they were taken: those that reached an existing file (or other non-directory) at their end.
 * Where a directory, a link or nothing was, the same is there while no entry changed.
 */
function contentNotes(notes: ReadonlyMap<string, ToolConfigNote>): ToolConfigNote[] {
  let out = contentOnly.get(notes);
  if (out === undefined) {
    out = [];
    for (const note of notes.values()) {
      const last = note.states.length === note.parts.length ? note.states[note.states.length - 1] : undefined;
      if (last !== undefined && last !== 'dir' && last !== 'missing' && !last.startsWith('link:')) out.push(note);
    }
    contentOnly.set(notes, out);
  }
  return out;
}

/**
 * The notes of the check: those taken before the run, and for each entry the scan after it found
 * (`named`) a note of every protected path below it that was not noted: it was not there before
 * the run (the scan before it would have reported it), so whatever is there now is the command's.
 */
function notesToCheck(guard: ToolConfigGuard, named: readonly string[], stamps?: ReadonlyMap<string, EntryInfo>, quiet = false): readonly ToolConfigNote[] {
  // The same array while the notes are kept (guard-memo.ts): read, never changed.
  if (quiet && named.length === 0) return contentNotes(guard.notes);
  const out = quiet ? [...contentNotes(guard.notes)] : [...guard.notes.values()];
  const seen = new Set(guard.notes.keys());
  if (!quiet) out.push(...elidedNotes(guard, seen, false, stamps));
  if (named.length === 0) return out;
  const roots = new DirectorySet(guard.roots);
  for (const entry of named) {
    for (const { root, parts, env } of pathsOfEntry(entry, roots)) {
      const path = prefix(root, parts, parts.length);
      if (seen.has(path)) continue;
      seen.add(path);
      out.push({ ...freshNote(path, root, parts, env), found: true });
    }
  }
  return out;
}

/**
 * After a run, once every process of the sandbox is gone: removes or puts back what the command
 * created or changed among the protected files (`named`: the config entries the scan after the run
 * found, see checkGitAfterRun), says what and why, and ends the run's hold on its notes. `stamps`:
 * the elided roots' stamps read after the run, when the caller read them already; `quiet`: no
 * directory the look before the run looked in changed since (protected.ts). Never throws.
 */
export function checkToolConfigs(guard: ToolConfigGuard, release?: () => void, named: readonly string[] = [], stamps?: ReadonlyMap<string, EntryInfo>, quiet = false): ProtectedPathViolation[] {
  const out: ProtectedPathViolation[] = [];
  try {
    // quiet: no directory the look before the run looked in changed (protected.ts), so only files are looked at.
    const elided = quiet ? undefined : new Set((guard.elided ?? []).map(([root]) => root));
    const dirs = new Dirs(elided === undefined ? [] : guard.roots.filter((root) => !elided.has(root)));
    let notes: readonly ToolConfigNote[];
    try {
      notes = notesToCheck(guard, named, stamps, quiet);
    } catch (error) {
      out.push({ path: '', reason: `the check of agent or editor configs found after the run failed: ${error instanceof Error ? error.message : String(error)}` });
      notes = [...guard.notes.values(), ...elidedNotes(guard, new Set(guard.notes.keys()), true)];
    }
    for (const note of notes) {
      try {
        const violation = checkNote(note, dirs);
        if (violation === undefined) continue;
        out.push(violation);
        // A file put back or removed: no answer of the batch is trusted any more.
        dirs.forget(note.path);
      } catch (error) {
        out.push({ path: fromBytes(note.path), reason: `the check of an agent or editor config failed: ${error instanceof Error ? error.message : String(error)}` });
        dirs.forget(note.path);
      }
    }
  } finally {
    release?.();
  }
  return out;
}
