// SPDX-License-Identifier: MIT
// Pure builders of the Windows ACL journal: what a run records before it adds ACEs, and the plan a
// later run derives from the records (which containers' ACEs to remove, whether to set its own
// again). The scheme:
// - the container name hashes the workspace and the whole ACL plan (spec.ts), so one policy has one
//   container SID and a changed policy gets a new one that no old ACE names;
// - before a run adds ACEs, its journal record (container, workspace, every path given an ACE) is
//   written under zero-sandbox's own state, and a "propagating" marker is made; the marker goes
//   once the system has finished propagating the ACEs below each path;
// - a later run of the same workspace with another container reverts the old container's ACEs
//   (grants first, then denies: at no moment does the old SID hold a grant without its denies),
//   deletes its profile, then drops its record; a marker left by a run of its own container that
//   stopped midway makes it set every ACE again, which propagates it anew.

import { win32 } from 'node:path';

import type { AclKind } from './acl-entry.js';

/** One path given an ACE for the container SID. */
export interface AclJournalEntry {
  kind: AclKind;
  path: string;
}

/** What the journal holds for one container (one file per container). */
export interface AclJournalRecord {
  version: 1;
  /** The AppContainer profile name (`zero-sandbox.` + 32 hex digits). */
  container: string;
  /** The workspace, normalised and lower-cased: records of one workspace replace each other. */
  workspace: string;
  /** Every path given an ACE, as in the ACL plan (the per-run temp dir left out: it is removed). */
  entries: AclJournalEntry[];
}

/** Containers whose ACEs a run removes before it adds its own, and whether it sets them again. */
export interface AclChangePlan {
  /** Per stale container: the paths to strip of its ACEs, grant paths first. */
  revert: Array<{ container: string; paths: string[] }>;
  /** A run of this container stopped while propagating: set every entry again. */
  redo: boolean;
}

const CONTAINER = /^zero-sandbox\.[0-9a-f]{32}$/;
const KINDS: readonly AclKind[] = ['allow-read', 'allow-write', 'allow-traverse', 'deny-write', 'deny-read', 'deny-delete'];
const ABSOLUTE = /^(?:[A-Za-z]:\\|\\\\[^\\?.]+\\[^\\]+)/;

/** The key of a workspace in the journal. */
export function aclWorkspaceKey(workspace: string): string {
  return win32.normalize(workspace).toLowerCase();
}

/**
 * The record for one run: `kinds[i]` (with the `?`/`~` suffixes of the native spec) and `paths[i]`
 * of the flat spec, minus the entries on the per-run temp dir.
 */
export function buildAclJournalRecord(container: string, workspace: string, kinds: readonly string[], paths: readonly string[], tmpDir: string): AclJournalRecord {
  const tmp = tmpDir.toLowerCase();
  const entries: AclJournalEntry[] = [];
  kinds.forEach((raw, i) => {
    const path = paths[i]!;
    if (path.toLowerCase() === tmp || path.toLowerCase().startsWith(`${tmp}\\`)) return;
    entries.push({ kind: raw.replace(/[?~]$/, '') as AclKind, path });
  });
  return { version: 1, container, workspace: aclWorkspaceKey(workspace), entries };
}

/** The journal file's text for a record. */
export function serializeAclJournal(record: AclJournalRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * A record read back, or undefined when the text is not one written for `container` (the file
 * name): a damaged or foreign file names no ACE anyone may act on.
 */
export function parseAclJournal(text: string, container: string): AclJournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (r.version !== 1 || r.container !== container || !CONTAINER.test(container)) return undefined;
  if (typeof r.workspace !== 'string' || !ABSOLUTE.test(r.workspace) || !Array.isArray(r.entries)) return undefined;
  const entries: AclJournalEntry[] = [];
  for (const e of r.entries as unknown[]) {
    if (typeof e !== 'object' || e === null) return undefined;
    const { kind, path } = e as Record<string, unknown>;
    if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) return undefined;
    if (typeof path !== 'string' || !ABSOLUTE.test(path) || path.includes('\0')) return undefined;
    entries.push({ kind: kind as AclKind, path });
  }
  return { version: 1, container, workspace: r.workspace, entries };
}

/** The paths of a record to strip, each once: grant paths first, then deny-only paths. */
export function buildRevertPaths(record: AclJournalRecord): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const ordered = [...record.entries.filter((e) => e.kind.startsWith('allow')), ...record.entries.filter((e) => !e.kind.startsWith('allow'))];
  for (const { path } of ordered) {
    const key = path.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(path);
  }
  return out;
}

/**
 * What a run of `next` does with the journal: every other container of the same workspace is
 * reverted (its policy is no longer the one in force), and `redo` is set when `propagating` (the
 * containers with a propagation marker) names this one. Records of other workspaces are theirs.
 */
export function planAclChanges(next: AclJournalRecord, records: readonly AclJournalRecord[], propagating: readonly string[]): AclChangePlan {
  const revert = records
    .filter((r) => r.workspace === next.workspace && r.container !== next.container)
    .sort((a, b) => (a.container < b.container ? -1 : a.container > b.container ? 1 : 0))
    .map((r) => ({ container: r.container, paths: buildRevertPaths(r) }));
  return { revert, redo: propagating.includes(next.container) };
}
