// SPDX-License-Identifier: MIT
// The names in the run-notes directory (run-notes.ts) and whose they are: this process's and this
// thread's run ids, an entry's kind, run and owner read back from its name, and whether that owner
// (or, on Linux, the sandbox of a run whose owner died) may still change its write roots.
import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

import { refuse } from './run-notes-dir.js';
import { buildOwnerName, currentHolder, currentOwner, ownerAlive, parseOwnerName } from './runtime-lease.js';

// Who this module instance is: the process, and a token telling worker threads (each with its own
// in-process notes) apart.
let self: string | undefined;
let ownName: string | undefined;

/** This process as an owner name (pid and start time: fixed for its life). */
export function ownOwner(): string {
  ownName ??= buildOwnerName(currentOwner());
  return ownName;
}

export function selfId(): string {
  if (self === undefined) {
    const random = Math.floor(Math.random() * 0x1_0000_0000).toString(16);
    const holder = currentHolder();
    self = `${ownOwner()}.${holder.tid === undefined ? random : buildThreadRealm(holder.tid, holder.tidStart ?? '0', random)}`;
  }
  return self;
}

// A worker thread's realm names its thread (Linux), so that the runs of a worker terminated in
// their middle (termination skips every finally: their notes are never ended) count as a dead
// owner's, though the process lives on: otherwise its markers would keep every later run's ended
// notes, in every process, until the process exits, and its missed checks would never run (a later
// run taking its notes as a run in flight found what its command planted as its own violation). The
// main thread's realm is up to 8 random hex digits, a worker's THREAD_REALM_LENGTH: its thread id
// (8 digits), its start time (12), then 8 random digits. Earlier versions read any realm.
const THREAD_REALM_LENGTH = 28;

/** A worker thread's realm (see above). */
export function buildThreadRealm(tid: number, tidStart: string, random: string): string {
  return `${tid.toString(16).padStart(8, '0')}${BigInt(tidStart).toString(16).padStart(12, '0')}${random.padStart(8, '0')}`;
}

/** The thread a realm names, or undefined for a main thread's realm. */
export function parseThreadRealm(realm: string): { tid: number; tidStart: string } | undefined {
  if (realm.length !== THREAD_REALM_LENGTH) return undefined;
  return { tid: Number.parseInt(realm.slice(0, 8), 16), tidStart: BigInt(`0x${realm.slice(8, 20)}`).toString() };
}

/** What a name in the directory is, with its run id and time. */
export interface Entry {
  kind: 'n' | 'r' | 'e' | 'k' | 's' | 'c';
  id: string;
  /** Monotonic ns for `n` and `e`. */
  at: bigint;
  /** Whose liveness the entry's fate follows: the owner's pid-start, and `.<realm>` for a worker's. */
  owner: string;
  /** For `k`: the pid-start of the process running the missed check (`.<realm>` for a worker's). */
  claimer?: string;
}

const OWNED_ID = '((\\d+-\\d*)\\.([0-9a-f]+)\\.\\d+)';
// A claimer is a process (pid-start), or a worker thread of one (pid-start.realm, see
// buildThreadRealm; earlier versions skip such claims).
const ENTRY = new RegExp(`^(?:([ne])\\.(\\d+)|([rsc])|k\\.(\\d+-\\d*(?:\\.[0-9a-f]{${THREAD_REALM_LENGTH}})?))\\.${OWNED_ID}$`);

export function parseEntry(name: string): Entry | undefined {
  const match = ENTRY.exec(name);
  if (match === null) return undefined;
  const kind = (match[1] ?? match[3] ?? 'k') as Entry['kind'];
  const realm = match[7] as string;
  const owner = realm.length === THREAD_REALM_LENGTH ? `${match[6] as string}.${realm}` : (match[6] as string);
  const entry: Entry = { kind, id: match[5] as string, at: match[2] === undefined ? 0n : BigInt(match[2]), owner };
  if (match[4] !== undefined) entry.claimer = match[4];
  return entry;
}

/** Whether a run whose owner died before its check may still have a process of its sandbox (Linux). */
export function sandboxAlive(dir: string, id: string): boolean {
  let record: string;
  try {
    record = readFileSync(join(dir, `s.${id}`), 'utf8');
  } catch {
    // No record: the sandbox never started, or its owner died between the clone and the record
    // (the check then runs without this wait; see the README).
    return false;
  }
  const owner = parseOwnerName(record);
  if (owner === undefined) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${owner.pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // Reaped, or another process with its pid: gone. A zombie pid 1 has waited for every other
  // process of its PID namespace to be gone before it became one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] === owner.start && fields[0] !== 'Z' && fields[0] !== 'X';
}

/** Whether the notes of entry `entry` belong to a run that may still change its write roots. */
export function inFlight(dir: string, entry: Entry, alive: (owner: string) => boolean = isAlive): boolean {
  if (alive(entry.kind === 'k' ? (entry.claimer as string) : entry.owner)) return true;
  return process.platform === 'linux' && sandboxAlive(dir, entry.id);
}

export function isAlive(owner: string): boolean {
  // This process is: no /proc read (a burst of runs lists hundreds of this process's own notes,
  // and each run's listing would read /proc once per entry).
  if (owner === ownOwner()) return true;
  const dot = owner.indexOf('.');
  const parsed = parseOwnerName(dot < 0 ? owner : owner.slice(0, dot));
  if (parsed === undefined) return false;
  // A worker thread's: that thread of the process (see buildThreadRealm).
  const thread = dot < 0 ? undefined : parseThreadRealm(owner.slice(dot + 1));
  return ownerAlive(thread === undefined ? parsed : { ...parsed, ...thread });
}

export function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    throw refuse((error as Error).message, dir, error);
  }
}

export function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or left for the next cleanup
  }
}

/**
 * isAlive for one listing: each owner's /proc entry read once (a burst of another process lists
 * hundreds of its entries). Whether an owner lives is then as of its first entry in the listing,
 * as it would be for a listing made a moment earlier; a dead owner (pid and start time) never
 * comes back.
 */
export function aliveOnce(): (owner: string) => boolean {
  const seen = new Map<string, boolean>();
  return (owner) => {
    let alive = seen.get(owner);
    if (alive === undefined) {
      alive = isAlive(owner);
      seen.set(owner, alive);
    }
    return alive;
  };
}
