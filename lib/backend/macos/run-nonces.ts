// SPDX-License-Identifier: MIT
// The two paths that mark one macOS run's processes: its profile allows reading the first and
// denies the second (profile.ts), and after the run the host looks for exactly that answer
// (run-members.ts). Pure apart from the random source.
import { randomBytes } from 'node:crypto';

import { SandboxError } from '../../errors.js';

/**
 * Where the two paths of a run lie: a root-owned, empty directory that exists on every macOS, so
 * no process of the user can create anything at either path (sandbox_check decides on the name,
 * and nothing there can be a link that resolves elsewhere). /private, not /var: seatbelt matches
 * the resolved path, and /var is a link to it.
 */
export const RUN_NONCE_DIR = '/private/var/empty';

/** The prefix of both names; the rest is 32 random hex digits, a new pair for every run. */
export const RUN_NONCE_PREFIX = 'zero-sandbox-run-';

/** The two paths that tell one run's processes from every other process. */
export interface RunNonces {
  /** Readable under this run's profile only (unsandboxed processes can read it too). */
  allowed: string;
  /** Unreadable under this run's profile (and readable to unsandboxed processes). */
  denied: string;
}

/** A fresh pair of paths, different from every other run's (and from each other). */
export function buildRunNonces(random: (bytes: number) => Buffer = randomBytes): RunNonces {
  const name = (): string => `${RUN_NONCE_DIR}/${RUN_NONCE_PREFIX}${random(16).toString('hex')}`;
  const allowed = name();
  const denied = name();
  if (allowed === denied) throw new SandboxError('internal_error', 'macos-seatbelt: the two run paths came out equal');
  return { allowed, denied };
}

/** True when `path` is a path buildRunNonces makes (the profile builder takes no other). */
export function isRunNoncePath(path: string): boolean {
  return path.startsWith(`${RUN_NONCE_DIR}/${RUN_NONCE_PREFIX}`) && /^[0-9a-f]{32}$/.test(path.slice(RUN_NONCE_DIR.length + 1 + RUN_NONCE_PREFIX.length));
}
