// SPDX-License-Identifier: MIT
// Taking a container's ACEs off the files again (Windows): the journal (acl-journal.ts) names
// every path a run gave an ACE; reverting strips that container's ACEs from each path (grant paths
// first, so at no moment does its SID hold a grant without its denies), deletes its AppContainer
// profile, then drops the record and its propagation markers. A run reverts the containers of its
// workspace's superseded policies (start.ts); `revertJournaledAcls` reverts every container, or
// those of one workspace, on request (`zero-sandbox state revert-acls`).
import { win32 } from 'node:path';

import { SandboxError } from '../../errors.js';
import { callNativeAsync } from '../../native/load.js';
import type { NativeBinding } from '../../native/types.js';
import { aclWorkspaceKey, buildRevertPaths } from './acl-journal.js';
import { defaultAclJournalDir, dropAclJournal, dropMarkers, readAclJournal } from './acl-journal-store.js';

// Containers with a run in flight in this process (start.ts counts them): never reverted under it,
// by a run of another policy or a revert on request (another process's run could be; it then loses
// its grants and fails).
export const activeContainers = new Map<string, number>();

type AclBinding = Pick<NativeBinding, 'windowsAcl'>;
export type CallAclAsync = <T>(fn: (b: AclBinding) => Promise<T>) => Promise<T>;

/**
 * Strips `container`'s ACEs from `paths`, deletes its profile, then drops its record and markers.
 * Throws when the addon fails; the record is then kept, so a later revert tries again.
 */
export async function revertContainer(dir: string, container: string, paths: readonly string[], markers: readonly string[], callAsync: CallAclAsync): Promise<number> {
  const acl = (b: AclBinding): NonNullable<AclBinding['windowsAcl']> => {
    if (b.windowsAcl === undefined) throw new SandboxError('sandbox_unavailable', 'windows-appcontainer: this build of the addon cannot revert ACEs (no windowsAcl)', { layer: 'acl' });
    return b.windowsAcl.bind(b);
  };
  const { changed } = await callAsync((b) => acl(b)({ op: 'revert', container, kinds: [], paths: [...paths], redo: false }));
  await callAsync((b) => acl(b)({ op: 'delete-profile', container, kinds: [], paths: [], redo: false }));
  dropAclJournal(dir, container);
  dropMarkers(dir, container, markers);
  return changed;
}

/** One container a revert went through. */
export interface AclRevertEntry {
  container: string;
  /** The workspace as the journal keys it (normalised, lower-cased). */
  workspace: string;
  /** The paths whose ACEs for this container were stripped (or were to be). */
  paths: string[];
  /** How many ACEs the addon removed (reverted entries only). */
  changed?: number;
  /** Why it failed (failed entries only): the record is kept for a later try. */
  error?: { code: string; message: string };
}

export interface AclRevertReport {
  /** The journal directory read. */
  journal: string;
  reverted: AclRevertEntry[];
  failed: AclRevertEntry[];
  /** Containers with a run in flight in this process: left as they are. */
  inUse: AclRevertEntry[];
}

export interface AclRevertOptions {
  /** Only this workspace's containers (default: every container in the journal). */
  workspace?: string;
  /** The journal directory (default: zero-sandbox's state in the user cache dir). */
  journalDir?: string;
  /** Tests: the addon (default: the loaded one, errors mapped by callNativeAsync). */
  binding?: AclBinding;
}

/**
 * Reverts every journaled container (or one workspace's), one after the other, but those with a run
 * in flight in this process. A run in flight in another process loses its grants and fails; the
 * next run of its policy sets them again.
 */
export async function revertJournaledAcls(options: AclRevertOptions = {}): Promise<AclRevertReport> {
  const dir = options.journalDir ?? defaultAclJournalDir();
  const state = readAclJournal(dir);
  const only = options.workspace === undefined ? undefined : aclWorkspaceKey(win32.resolve(options.workspace));
  const { binding } = options;
  const callAsync: CallAclAsync = (fn) => (binding === undefined ? callNativeAsync(fn) : fn(binding));
  const report: AclRevertReport = { journal: dir, reverted: [], failed: [], inUse: [] };
  for (const record of state.records) {
    if (only !== undefined && record.workspace !== only) continue;
    const paths = buildRevertPaths(record);
    const entry: AclRevertEntry = { container: record.container, workspace: record.workspace, paths };
    if (activeContainers.has(record.container)) {
      report.inUse.push(entry);
      continue;
    }
    try {
      entry.changed = await revertContainer(dir, record.container, paths, state.markers, callAsync);
      report.reverted.push(entry);
    } catch (error) {
      const code = error instanceof SandboxError ? error.code : 'internal_error';
      entry.error = { code, message: error instanceof Error ? error.message : String(error) };
      report.failed.push(entry);
    }
  }
  return report;
}
