// SPDX-License-Identifier: MIT
// The plan a seatbelt profile is built from: what differs from the Linux plan because seatbelt
// denies by path, whether or not the path exists.
import { lstatSync, readdirSync } from 'node:fs';

import { buildCredentialBaseline } from '../../credentials.js';
import { isWithin } from '../../path-within.js';
import type { SandboxPlan } from '../types.js';

/**
 * macOS: a protected path inside a write root (.git/hooks, .git/config) gets its deny rule only
 * when it exists now. One that does not exist yet is a repository the command creates itself
 * (git init, git clone url .), which must work as on Linux; when the .git directory already
 * exists, the protected-path guard (protected.ts) notes the absent ones and what the command created there is
 * removed and reported when it ends. Pure apart from `exists`.
 */
export function keepExistingReadOnly(plan: SandboxPlan, exists: (path: string) => boolean): SandboxPlan {
  return { ...plan, writeRoots: plan.writeRoots.map((w) => ({ ...w, readOnlySubpaths: w.readOnlySubpaths.filter(exists) })) };
}

/**
 * macOS: seatbelt can deny a path that does not exist yet, so the credential baseline's missing
 * candidates are denied too: a credential file created while the command runs (aws configure in
 * another terminal) stays unreadable. (Linux masks only what exists at start: a mount needs a
 * target.) A candidate that is not a clean absolute path, or that holds or lies in a write root,
 * is left out, as plan.ts leaves out those that would hide a write root, and so is one at or
 * below an allowRead root (the caller opted that store out). Pure apart from `exists`.
 */
export function withMissingCredentials(plan: SandboxPlan, candidates: readonly string[], exists: (path: string) => boolean): SandboxPlan {
  const clean = (p: string): boolean => p.startsWith('/') && !p.endsWith('/') && !p.includes('//') && !p.split('/').some((c) => c === '.' || c === '..') && !p.includes('\0');
  const touchesRoot = (p: string): boolean => plan.writeRoots.some((w) => isWithin(p, w.root, '/') || isWithin(w.root, p, '/'));
  const allowed = plan.readRoots.filter((root) => root !== '/');
  const optedOut = (p: string): boolean => allowed.some((root) => isWithin(root, p, '/'));
  const extra = [...new Set(candidates)].filter((p) => clean(p) && !plan.denyRead.includes(p) && !touchesRoot(p) && !optedOut(p) && !exists(p));
  return extra.length === 0 ? plan : { ...plan, denyRead: [...plan.denyRead, ...extra] };
}

/**
 * The plan the seatbelt profile is built from: deny rules only for protected paths that exist,
 * and for the credential candidates and the config's deny-read entries (the plan's read tree)
 * that do not exist yet. `envs` are those the plan's baseline was computed from (ours and the
 * command's).
 */
export function resolveSeatbeltPlan(plan: SandboxPlan, envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>): SandboxPlan {
  const exists = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  const list = (dir: string): string[] | undefined => {
    try {
      return readdirSync(dir);
    } catch {
      return undefined;
    }
  };
  const candidates = [...envs.flatMap((env) => buildCredentialBaseline({ env, list })), ...(plan.denyReadTree?.denied ?? [])];
  return withMissingCredentials(keepExistingReadOnly(plan, exists), candidates, exists);
}

