// SPDX-License-Identifier: MIT
// The Windows ACL journal on disk (the scheme is in acl-journal.ts): one `<container>.json` record
// per container and one `<container>.propagating.<pid>.<random>` marker per propagation under way,
// in zero-sandbox's own state in the user cache dir, which no AppContainer may write.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { SandboxError } from '../../errors.js';
import { buildUserCacheDir } from '../../sandbox/runtime-state.js';
import { parseAclJournal, serializeAclJournal, type AclJournalRecord } from './acl-journal.js';

/** The journal directory of this user. */
export function defaultAclJournalDir(): string {
  return join(buildUserCacheDir(process.env), 'zero', 'windows-acl');
}

/** What the journal holds now. */
export interface AclJournalState {
  records: AclJournalRecord[];
  /** The containers with a propagation marker. */
  propagating: string[];
  /** The marker file names, for `dropMarkers`. */
  markers: string[];
}

const RECORD = /^(zero-sandbox\.[0-9a-f]{32})\.json$/;
const MARKER = /^(zero-sandbox\.[0-9a-f]{32})\.propagating\.[0-9]+\.[0-9a-f]{16}$/;

/** Reads every record and marker; a damaged record is skipped (it names nothing to act on). */
export function readAclJournal(dir: string): AclJournalState {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], propagating: [], markers: [] };
    throw new SandboxError('sandbox_unavailable', `windows-appcontainer: the ACL journal ${dir} cannot be read: ${(error as Error).message}`, { path: dir, layer: 'acl', cause: error });
  }
  const records: AclJournalRecord[] = [];
  const propagating = new Set<string>();
  const markers: string[] = [];
  for (const name of names.sort()) {
    const marker = MARKER.exec(name);
    if (marker !== null) {
      propagating.add(marker[1]!);
      markers.push(name);
      continue;
    }
    const record = RECORD.exec(name);
    if (record === null) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const parsed = parseAclJournal(text, record[1]!);
    if (parsed !== undefined) records.push(parsed);
  }
  return { records, propagating: [...propagating], markers };
}

/**
 * Writes a record before its ACEs are added (a temp file renamed over the old one, so a reader
 * sees the old record or the new one). Throws sandbox_unavailable: without the record, the ACEs
 * could never be reverted, so none are added.
 */
export function writeAclJournal(dir: string, record: AclJournalRecord): void {
  const file = join(dir, `${record.container}.json`);
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, serializeAclJournal(record), { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new SandboxError('sandbox_unavailable', `windows-appcontainer: the ACL journal ${file} cannot be written, so the ACEs of this run could not be reverted later: ${(error as Error).message}`, { path: file, layer: 'acl', cause: error });
  }
}

/** Marks a propagation of `container` as under way; the returned function marks it complete. */
export function beginPropagation(dir: string, container: string): () => void {
  const file = join(dir, `${container}.propagating.${process.pid}.${randomBytes(8).toString('hex')}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, '', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw new SandboxError('sandbox_unavailable', `windows-appcontainer: the propagation marker ${file} cannot be made: ${(error as Error).message}`, { path: file, layer: 'acl', cause: error });
  }
  return () => rmSync(file, { force: true });
}

/** Removes the markers of `container` among `markers` (their propagation was redone since). */
export function dropMarkers(dir: string, container: string, markers: readonly string[]): void {
  for (const name of markers) if (name.startsWith(`${container}.propagating.`)) rmSync(join(dir, name), { force: true });
}

/** Removes the record of a container whose ACEs and profile are gone. */
export function dropAclJournal(dir: string, container: string): void {
  rmSync(join(dir, `${container}.json`), { force: true });
}
