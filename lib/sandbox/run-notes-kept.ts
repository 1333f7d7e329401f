// SPDX-License-Identifier: MIT
// What a process keeps of other processes' run notes (run-notes.ts), within fixed budgets. A run
// lists every other process's runs in flight and takes the notes of those whose write roots
// overlap its own; a run of 1,000 write roots publishes about 700 KB. So the roots of a file are
// read from its head and remembered by name, and only the notes a run takes are parsed whole:
// another workspace's burst of large runs is never parsed nor kept whole here. Both caches are
// bounded by the characters they hold, not only by their count of files: 256 kept notes of 700 KB
// each, parsed, held several hundred megabytes of a process that ran small runs of its own beside
// another process's runs of 1,000 write roots.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { refuse } from './run-notes-dir.js';
import { decode, decodeRoots, type SharedNotes } from './run-notes-file.js';

/** Whole notes parsed since the process started (tests count them). */
export const runNotesCounts = { parsed: 0 };

/** Notes files kept parsed, and how many characters of them at most (the oldest dropped first). */
const PARSED_FILES = 256;
const PARSED_CHARS = 8 * 1024 * 1024;

/** Notes by file name: a published file never changes, so each is parsed once while kept. */
const parsed = new Map<string, { notes: SharedNotes; chars: number }>();
let parsedChars = 0;

/** Names whose roots are remembered, and characters of distinct lists of roots at most. */
const ROOT_NAMES = 8192;
const ROOT_CHARS = 8 * 1024 * 1024;

/**
 * Lists of roots remembered, by their JSON: the notes of a burst of one policy's runs share one
 * frozen list (frozen: the answers compared with it are kept by identity, see run-notes.ts). A
 * list goes with the last name that uses it.
 */
interface RootList {
  json: string;
  roots: readonly string[];
  names: number;
}
const rootLists = new Map<string, RootList>();
let rootListChars = 0;
/** The write roots of notes by file name (an entry of rootLists, never a string of its own). */
const rootsByName = new Map<string, RootList>();

function forgetOldestName(): void {
  const [name, list] = rootsByName.entries().next().value as [string, RootList];
  rootsByName.delete(name);
  if (--list.names === 0) {
    rootLists.delete(list.json);
    rootListChars -= list.json.length;
  }
}

/** Remembers `roots` as those of `name`; the list, frozen. */
function rememberRoots(name: string, roots: string[]): readonly string[] {
  // A string of its own (a slice of the file's text would keep the whole text alive).
  const json = JSON.stringify(roots);
  let list = rootLists.get(json);
  if (list === undefined) {
    // A list too large for the budget is used once and not remembered.
    if (json.length > ROOT_CHARS / 4) return Object.freeze(roots);
    list = { json, roots: Object.freeze(roots), names: 0 };
    rootLists.set(json, list);
    rootListChars += json.length;
  }
  list.names++;
  rootsByName.set(name, list);
  while (rootsByName.size > ROOT_NAMES || rootListChars > ROOT_CHARS) forgetOldestName();
  return list.roots;
}

function readText(dir: string, name: string): string | undefined {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refuse((error as Error).message, join(dir, name), error);
  }
}

/** The notes in `text`, of the file `name`, kept while they fit the budget. */
function parseKept(dir: string, name: string, text: string): SharedNotes {
  const notes = decode(text);
  if (notes === undefined) throw refuse('a record it cannot read', join(dir, name));
  runNotesCounts.parsed++;
  if (text.length <= PARSED_CHARS / 4) {
    while (parsed.size > 0 && (parsed.size >= PARSED_FILES || parsedChars + text.length > PARSED_CHARS)) {
      const [oldest, kept] = parsed.entries().next().value as [string, { chars: number }];
      parsed.delete(oldest);
      parsedChars -= kept.chars;
    }
    parsed.set(name, { notes, chars: text.length });
    parsedChars += text.length;
  }
  return notes;
}

/**
 * The notes of the file `name` when `wanted` answers yes for their write roots; false when it
 * answers no; undefined when the file is gone. Throws `protected_path` when the file cannot be
 * read.
 */
export function notesIf(dir: string, name: string, wanted: (roots: readonly string[]) => boolean): SharedNotes | false | undefined {
  const known = rootsByName.get(name)?.roots;
  if (known !== undefined && !wanted(known)) return false;
  const kept = parsed.get(name)?.notes;
  if (kept !== undefined) return known !== undefined || wanted(kept.roots) ? kept : false;
  const text = readText(dir, name);
  if (text === undefined) return undefined;
  if (known === undefined) {
    const roots = decodeRoots(text);
    if (roots === undefined) {
      // Another layout (another version's writer): parsed whole to learn its roots.
      const notes = parseKept(dir, name, text);
      return wanted(rememberRoots(name, [...notes.roots])) ? notes : false;
    }
    if (!wanted(rememberRoots(name, roots))) return false;
  }
  return parseKept(dir, name, text);
}
