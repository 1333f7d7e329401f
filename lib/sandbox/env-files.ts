// SPDX-License-Identifier: MIT
// A plain `.env` stays writable for the command, but Gemini CLI (in a trusted folder) loads the
// nearest one into its own environment, and every program it starts inherits it: a line
// `NODE_OPTIONS=--require /tmp/x.js` planted there runs code on the host later. After the run
// (tool-configs.ts notes every `.env` of the write roots and calls `checkEnvFile` once every
// process of the sandbox is gone) a `.env` whose new content has a line naming an
// execution-affecting variable (EXEC_ENV_NAMES, EXEC_ENV_PREFIXES) that was not in the file
// before is put back byte for byte, or removed when it did not exist. Other changes are kept.
//
// Names are matched as they could take effect, and then some: a line counts when any word of it
// (a run of letters, digits and `_`), compared without case, is such a name followed by `=` or
// `:` (spaces and quotes between allowed). That covers dotenv's `KEY=v`, `export KEY=v`,
// `KEY: v`, ` KEY = "v"`, keys behind a byte-order mark, and a name inside a longer key
// (`X.PATH=`), while a path in a value (`/home/me/data`) names nothing. Lines are split where
// dotenv's parser splits them (`\r\n`, `\r`, `\n`, U+2028, U+2029), so a line break it honours
// cannot hide one.
import { EXEC_ENV_NAMES, EXEC_ENV_PREFIXES } from '../protected-names.js';
import { fromBytes, readSmall, removeEntry, replaceFile, type EntryInfo } from './beneath.js';
import type { ProtectedPathViolation } from './git-check.js';

/** Largest `.env` whose content is noted and checked; see `checkEnvFile` for a larger one. */
export const MAX_ENV_BYTES = 1 << 20;

const EXACT = new Set(EXEC_ENV_NAMES.map((name) => name.toUpperCase()));
const PREFIXES = EXEC_ENV_PREFIXES.map((prefix) => prefix.toUpperCase());
/** A word; then (from its end) what makes it assigned: `=` or `:`, spaces, tabs and quotes allowed between. */
const WORD = /[A-Za-z0-9_]+/g;
const ASSIGNS = /["'`\s]*[=:]/y;
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/;

/** Whether a variable name (any case) is an execution-affecting one. */
export function isExecEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return EXACT.has(upper) || PREFIXES.some((prefix) => upper.startsWith(prefix) && upper.length > prefix.length);
}

/** The lines of a `.env` as dotenv splits them. */
export function envLines(content: string): string[] {
  return content.split(LINE_BREAK);
}

/**
 * The execution-affecting names a line assigns (or seems to), as written. Linear in the line's
 * length (each word, and the run after it, is looked at once): the content is the command's.
 */
export function execNamesIn(line: string): string[] {
  const out: string[] = [];
  for (const match of line.matchAll(WORD)) {
    const word = match[0];
    if (!isExecEnvName(word)) continue;
    ASSIGNS.lastIndex = match.index + word.length;
    if (ASSIGNS.test(line)) out.push(word);
  }
  return out;
}

/**
 * The execution-affecting names on lines of `after` that were not lines of `before` (undefined:
 * there was no file, or its content is unknown). Empty when the change may be kept.
 */
export function plantedExecNames(before: string | undefined, after: string): string[] {
  const had = new Set(before === undefined ? [] : envLines(before));
  const out = new Set<string>();
  for (const line of envLines(after)) {
    if (had.has(line)) continue;
    for (const name of execNamesIn(line)) out.add(name);
  }
  return [...out];
}

/** What the check of one `.env` needs of its note (see ToolConfigNote). */
export interface EnvNote {
  path: string;
  /** Content and permission bits before the run, when it was a regular file of at most MAX_ENV_BYTES. */
  bytes?: Buffer;
  mode?: number;
}

function reason(shown: string, what: string, done: string): string {
  return `${what} ${shown}; Gemini CLI loads the nearest .env into its environment, and every program it starts inherits it${done}; set such variables outside the sandbox`;
}

/**
 * The check of one `.env` the command created, changed or replaced (its state differs from
 * `before`, the note's `kind:stamp`), once every process of the sandbox is gone: the violation,
 * if any, after putting the file back (or removing it). `info`: what is there now. A deleted
 * `.env`, or a directory of that name (Python virtual environments are often so named; Gemini
 * CLI reads nothing from it), is kept. A link or other non-file the command put there is removed.
 *
 * Fail-closed where the content cannot be compared: a `.env` larger than MAX_ENV_BYTES after the
 * run is put back (or removed); one that was larger before the run had no content noted, so a
 * change to it that names such a variable anywhere (not only on new lines) removes it.
 */
export function checkEnvFile(note: EnvNote, shown: string, before: string, info: EntryInfo): ProtectedPathViolation | undefined {
  const path = fromBytes(note.path);
  if (info.kind === 'error') return { path, reason: reason(shown, 'made unreadable the way to', '; it could not be checked: look at it before Gemini CLI runs there') };
  if (info.kind === 'missing' || info.kind === 'dir') return undefined;
  const undo = (what: string): ProtectedPathViolation => {
    if (note.bytes !== undefined && replaceFile(note.path, note.bytes, note.mode)) return { path, reason: reason(shown, what, '; it is as it was before the run') };
    return { path, reason: reason(shown, what, removeEntry(note.path) ? '; it was removed' : '; it could not be removed') };
  };
  if (info.kind !== 'file') return undo(info.kind === 'link' ? 'put a link at' : 'put a special file at');
  const now = readSmall(note.path, MAX_ENV_BYTES);
  if (now === undefined) return undo(`made larger than ${MAX_ENV_BYTES} bytes (or unreadable)`);
  if (note.bytes?.equals(now) === true) return undefined;
  const names = plantedExecNames(note.bytes?.toString('utf8'), now.toString('utf8'));
  if (names.length === 0) return undefined;
  const unknown = note.bytes === undefined && before !== 'missing' ? ` (its content before the run, over ${MAX_ENV_BYTES} bytes or not a file, was not noted: every line counts)` : '';
  return undo(`set ${names.join(', ')} (a variable through which programs run other code)${unknown} in`);
}
