// SPDX-License-Identifier: MIT
// One entry of the Windows ACL plan: its own module because both the AppContainer spec builder
// (spec.ts) and the read set (read-grants.ts) produce entries.

/**
 * What one ACL entry does for the container SID. Semantics:
 * - `allow-read`: read and execute beneath the path (extra read roots);
 * - `allow-write`: full read/write beneath the path (write roots, the private temp dir);
 * - `deny-write`: an inheritable deny of every write right beneath the path;
 * - `deny-read`: an inheritable deny of read, execute and delete beneath the path;
 * - `deny-delete`: the directory itself cannot be deleted or renamed (not inherited), so a parent
 *   of a denied or protected path cannot be moved to carry it out of its rule;
 * - `allow-traverse`: the directory itself (not inherited) can be traversed and its attributes
 *   read, nothing more: no listing, no file contents (ancestors of the roots; see read-grants.ts).
 */
export type AclKind = 'allow-read' | 'allow-write' | 'deny-write' | 'deny-read' | 'deny-delete' | 'allow-traverse';

/** One entry of the ACL plan, applied through a no-follow handle (reparse points rejected). */
export interface AclEntry {
  kind: AclKind;
  /** Absolute Windows path (drive-letter or UNC), normalised. */
  path: string;
  /**
   * What to do when the path does not exist. `fail`: refuse to run (sandbox_unavailable).
   * `skip`: nothing to protect yet; used for protected names inside a write root, which Windows
   * ACLs cannot guard before they exist (creating a placeholder on the host is not done).
   * `best-effort`: skipped when missing or when the user may not change its ACL (WRITE_DAC
   * refused); used only for the read grants, where skipping makes reads narrower, never wider.
   */
  ifMissing: 'fail' | 'skip' | 'best-effort';
}
