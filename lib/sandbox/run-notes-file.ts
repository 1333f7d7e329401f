// SPDX-License-Identifier: MIT
// One run's protected-path notes as a file of the run-notes directory (run-notes.ts): how they are
// written and read back, and how a published file gets its second name.
import { linkSync, writeFileSync } from 'node:fs';

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
export function secondName(from: string, to: string, text: string): void {
  try {
    linkSync(from, to);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'EMLINK') throw error;
  }
  writeFileSync(to, text, { flag: 'wx', mode: 0o600 });
}
