// SPDX-License-Identifier: MIT
// One run's protected-path notes as a file of the run-notes directory (run-notes.ts): how they are
// written and read back, and how a published file gets its second name.
import { linkSync, writeFileSync } from 'node:fs';

import { packCheck, packedJsonBytes } from './missed-checks.js';
import type { OwnEntry } from './own-entries.js';

/** One run's notes as another run takes them (byte-string paths, as in GitGuard). */
export interface SharedNotes {
  /** When the run noted (monotonic ns): older notes are taken first. */
  since: bigint;
  /** Its write roots that have protected names (plan paths). */
  roots: string[];
  /** Every write root of the run (byte strings). */
  gitRoots: string[];
  configs: Map<string, { bytes: Buffer | undefined; state: string }>;
  watched: Map<string, string>;
  ownEntries: OwnEntry[];
  /** The run's whole after-run check, packed (missed-checks.ts); absent in notes of other versions. */
  after?: unknown;
}

/**
 * What a run publishes: its notes, and its whole after-run check either packed (`after`) or as
 * it is (`check`, packed here: its parts are not changed once made, so each is packed and encoded
 * once, see encodeParts).
 */
export type PublishedNotesBody = SharedNotes & { check?: { git: object; ownEntries: readonly object[]; tools: object; since: bigint } };

/** UTF-8 JSON of values never changed once made, by identity (a look kept across runs, guard-memo.ts). */
const encoded = new WeakMap<object, Buffer>();

function encodedOnce(value: object, make: () => Buffer): Buffer {
  let bytes = encoded.get(value);
  if (bytes === undefined) encoded.set(value, (bytes = make()));
  return bytes;
}

const jsonBytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/** The last roots encoded beside each list of git roots (a run's roots are a new array each time, with the same strings). */
const rootsBeside = new WeakMap<readonly string[], { roots: readonly string[]; bytes: Buffer }>();

function rootsEncoded(notes: SharedNotes): Buffer {
  const known = rootsBeside.get(notes.gitRoots);
  if (known !== undefined && ((known.roots === notes.roots && Object.isFrozen(notes.roots)) || (known.roots.length === notes.roots.length && known.roots.every((root, i) => root === notes.roots[i])))) return known.bytes;
  const bytes = Buffer.from(JSON.stringify(notes.roots), 'utf8');
  rootsBeside.set(notes.gitRoots, { roots: notes.roots, bytes });
  return bytes;
}

/**
 * encode(notes) as pieces of one UTF-8 file, the same JSON but for the order of its keys: a run of
 * 1,000 write roots publishes about 700 KB, nearly all of it the parts of a look kept across runs,
 * encoded once here instead of on every run.
 */
export function encodeParts(notes: PublishedNotesBody): Buffer[] {
  const since = notes.since.toString();
  const text = (value: string) => Buffer.from(value, 'utf8');
  const parts = [
    text(`{"v":1,"since":${JSON.stringify(since)},"roots":`),
    rootsEncoded(notes),
    text(',"gitRoots":'),
    encodedOnce(notes.gitRoots, () => jsonBytes(notes.gitRoots)),
    text(',"configs":'),
    encodedOnce(notes.configs, () => jsonBytes([...notes.configs].map(([path, c]) => [path, c.bytes === undefined ? null : c.bytes.toString('base64'), c.state]))),
    text(',"watched":'),
    encodedOnce(notes.watched, () => jsonBytes([...notes.watched])),
    text(`,"ownEntries":${JSON.stringify(notes.ownEntries.map((e) => ({ ...e, content: e.content?.toString('base64') })))}`),
  ];
  const check = notes.check;
  if (notes.after !== undefined) parts.push(text(`,"after":${JSON.stringify(notes.after)}`));
  else if (check !== undefined) {
    // A look made afresh (the runs of a burst each make one) is packed straight into bytes.
    parts.push(text(',"after":{"git":'), encodedOnce(check.git, () => packedJsonBytes(check.git)));
    parts.push(text(`,"ownEntries":${JSON.stringify(packCheck(check.ownEntries))},"tools":`), encodedOnce(check.tools, () => packedJsonBytes(check.tools)));
    parts.push(text(`,"since":${JSON.stringify(packCheck(check.since))}}`));
  }
  parts.push(text('}'));
  return parts;
}

/** The notes as a file: JSON in UTF-8 (byte-string paths round-trip as their code points), contents in base64. */
export function encode(notes: SharedNotes): string {
  return JSON.stringify({
    v: 1,
    since: notes.since.toString(),
    roots: notes.roots,
    gitRoots: notes.gitRoots,
    configs: [...notes.configs].map(([path, c]) => [path, c.bytes === undefined ? null : c.bytes.toString('base64'), c.state]),
    watched: [...notes.watched],
    ownEntries: notes.ownEntries.map((e) => ({ ...e, content: e.content?.toString('base64') })),
    ...(notes.after === undefined ? {} : { after: notes.after }),
  });
}

/** Whether the character at `at` follows an odd number of backslashes (it is escaped). */
function escapedAt(text: string, at: number): boolean {
  let count = 0;
  while (text[at - 1 - count] === '\\') count++;
  return count % 2 === 1;
}

/** How encode and encodeParts begin a file: the write roots follow the version and the time. */
const HEAD = /^\{"v":1,"since":"\d+","roots":\[/;

/**
 * The write roots of notes read from the head of the file without parsing the rest (a run of
 * 1,000 write roots publishes about 700 KB, and most files a run lists are not its roots'
 * business); undefined when the file does not begin as encode writes it (decode it whole then).
 */
export function decodeRoots(text: string): string[] | undefined {
  const head = HEAD.exec(text);
  if (head === null) return undefined;
  const start = head[0].length - 1;
  // The array holds strings and commas only: a string ends at the first quote that an even
  // number of backslashes (none, most often) precedes.
  let at = start + 1;
  while (at < text.length && text[at] !== ']') {
    if (text[at] === '"') {
      let end = text.indexOf('"', at + 1);
      while (end > 0 && escapedAt(text, end)) end = text.indexOf('"', end + 1);
      if (end < 0) return undefined;
      at = end;
    }
    at++;
  }
  try {
    // Parsed, not kept: a slice of the file's text would keep the whole text alive.
    const roots = JSON.parse(text.slice(start, at + 1)) as unknown;
    return Array.isArray(roots) && roots.every((root) => typeof root === 'string') ? roots : undefined;
  } catch {
    return undefined;
  }
}

export function decode(text: string): SharedNotes | undefined {
  try {
    const raw = JSON.parse(text) as {
      v: number;
      since: string;
      roots: string[];
      gitRoots: string[];
      configs: Array<[string, string | null, string]>;
      watched: Array<[string, string]>;
      ownEntries: Array<Omit<OwnEntry, 'content'> & { content?: string }>;
      after?: unknown;
    };
    if (raw.v !== 1) return undefined;
    return {
      since: BigInt(raw.since),
      roots: raw.roots,
      gitRoots: raw.gitRoots,
      configs: new Map(raw.configs.map(([path, bytes, state]) => [path, { bytes: bytes === null ? undefined : Buffer.from(bytes, 'base64'), state }])),
      watched: new Map(raw.watched),
      ownEntries: raw.ownEntries.map(({ content, ...e }) => (content === undefined ? e : { ...e, content: Buffer.from(content, 'base64') })),
      ...(raw.after === undefined ? {} : { after: raw.after }),
    };
  } catch {
    return undefined;
  }
}

/**
 * Gives the written notes at `from` a second name `to` (a run's c. beside its marker): a hard link,
 * as a published notes file is never written again, only renamed and removed (a run of 1,000
 * write roots publishes a quarter of a megabyte, written twice before). Where the file system
 * refuses links, a copy of `text`. Throws when neither can be made, or when `to` exists.
 */
export function secondName(from: string, to: string, text: string | readonly Buffer[]): void {
  try {
    linkSync(from, to);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'EMLINK') throw error;
  }
  writeFileSync(to, typeof text === 'string' ? text : Buffer.concat(text), { flag: 'wx', mode: 0o600 });
}
