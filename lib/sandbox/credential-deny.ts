// SPDX-License-Identifier: MIT
// The credential files a plan denies reading: the baseline of the callers' environments (ssh keys,
// cloud and package-manager tokens, shell histories, ...), the protected-path notes of runs in
// flight, and for a root caller the files only root may read; each resolved on the host (links
// followed as far as they exist), minus any that would hide a write root. Kept across runs while
// nothing looked at changed (credential-memo.ts).
import { readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';

import { buildCredentialBaseline, buildCredentialShape, buildRootOnlyCandidates, isSshHostPrivateKey, ROOT_ONLY_FILES } from '../credentials.js';
import { DirectorySet } from '../path-within.js';
import { HostFacts } from '../host-facts.js';
import { listDirNames } from '../dir-listing.js';
import { notesPlacesToHide } from './run-notes.js';
import { rememberedFor } from './credential-memo.js';
import { logListed } from './look-log.js';

/** The names in a directory; `names` false: only whether it can be listed (its entries decide nothing). */
function listDir(dir: string, facts: Looks, names = true): string[] | undefined {
  if (facts.lstat(dir) === undefined) return undefined;
  try {
    const found = readdirSync(dir);
    if (names) logListed(dir);
    return found;
  } catch {
    return undefined;
  }
}

/** The credential candidates for these environments (plus the root-only files for a root caller). */
function credentialCandidates(
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>,
  writeRoots: string[],
  list: (dir: string) => string[] | undefined,
  listable: (dir: string) => boolean = (dir) => list(dir) !== undefined,
): Set<string> {
  const candidates = new Set(envs.flatMap((env) => buildCredentialBaseline({ env, list })));
  // The protected-path notes of runs in flight where a sandbox could read them: they hold copies
  // of other workspaces' protected configs, which are no command's to read.
  for (const notes of notesPlacesToHide()) if (listable(notes)) candidates.add(notes);
  // A root caller's sandbox is uid 0 on the host's files: deny what only root may read.
  // process.platform: only the Linux backend runs a root caller as root over the host's files.
  if (process.platform === 'linux' && process.getuid?.() === 0) {
    // /root stays when it is the caller's home (its toolchains; its credential stores are masked).
    const home = envs.some((env) => env.HOME === '/root') ? '/root' : process.env.HOME;
    for (const path of buildRootOnlyCandidates(home, writeRoots, list)) candidates.add(path);
  }
  return candidates;
}

// The root-only files are masked but kept out of the Landlock read tree: /etc would otherwise be
// granted entry by entry (hundreds of rules on every root run). Their edge, in the loss report:
// a file the host replaces by a rename during the run (passwd rewriting /etc/shadow) is visible.
const ROOT_ONLY_FILE_SET = new Set(ROOT_ONLY_FILES);
const isRootOnly = (path: string) => ROOT_ONLY_FILE_SET.has(path) || path === '/root' || (path.startsWith('/etc/ssh/') && isSshHostPrivateKey(path.slice(9)));

/**
 * A path resolved as far as it exists: the realpath of its deepest existing ancestor plus the
 * rest as written. Undefined when nothing of it can be resolved.
 */
export function resolveAsFarAsExists(path: string, facts: Looks, missing = false): string | undefined {
  let rest = '';
  let dir = path;
  if (missing) {
    rest = `/${basename(path)}`;
    dir = dirname(path);
  }
  for (; ; dir = dirname(dir)) {
    try {
      if (facts.lstat(dir) !== undefined) {
        const real = facts.realpath(dir);
        return real === '/' ? rest || '/' : real + rest;
      }
    } catch {
      return undefined; // unreadable on the way: nothing the command could read there either
    }
    if (dir === dirname(dir)) return undefined;
    rest = `/${basename(dir)}${rest}`;
  }
}

/** `path` under the real path of its existing ancestor `dir`, or undefined when unresolvable. */
function resolveBelow(dir: string, path: string, facts: Looks): string | undefined {
  try {
    const real = facts.realpath(dir);
    return (real === '/' ? '' : real) + path.slice(dir === '/' ? 0 : dir.length);
  } catch {
    return undefined;
  }
}

/**
 * The credential deny-read set, both as the existing paths to mask (resolved, minus any that
 * would hide a write root) and as the tree of every candidate, existing or not (resolved as far
 * as it exists), that no read grant may cover, with the guarded directories (see ReadTree).
 * `allowRead` (real paths) opts out: a store at or below one of them is not denied, as in the Go
 * Zero CLI, so an explicit `--allow-read ~/.aws` gives a command the AWS credentials (and one of
 * the home directory gives it every store there). A root below a store opts nothing out.
 */
export function credentialDenySet(
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>,
  writeRoots: string[],
  facts: HostFacts = new HostFacts(),
  allowRead: readonly string[] = [],
): CredentialDenySet {
  // Kept across runs while every path it looked at is as it was (credential-memo.ts); the key is
  // everything else it depends on: the environments, the write roots, whether the caller is root and
  // (for a root caller) our HOME.
  const key = JSON.stringify([envs, writeRoots, process.getuid?.() === 0, process.env.HOME]);
  const set = rememberedFor(key, (note) => {
    const looks: Looks = {
      lstat: (path) => {
        note(path);
        return facts.lstat(path);
      },
      realpath: (path) => {
        note(path);
        return facts.realpath(path);
      },
    };
    return computeCredentialDenySet(envs, writeRoots, looks, note);
  });
  if (allowRead.length === 0) return { existing: [...set.existing], tree: { denied: [...set.tree.denied], guarded: [...set.tree.guarded] } };
  const opted = new DirectorySet(allowRead);
  const kept = (paths: readonly string[]) => paths.filter((path) => !opted.holds(path));
  return { existing: kept(set.existing), tree: { denied: kept(set.tree.denied), guarded: kept(set.tree.guarded) } };
}

/** The credential deny set: the existing paths to mask, and the tree no read grant may cover. */
export interface CredentialDenySet {
  existing: string[];
  tree: { denied: string[]; guarded: string[] };
}

/** The look-ups of HostFacts the credential deny set makes. */
type Looks = Pick<HostFacts, 'lstat' | 'realpath'>;

function computeCredentialDenySet(
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>,
  writeRoots: string[],
  facts: Looks,
  note: (path: string) => void,
): CredentialDenySet {
  const existing: string[] = [];
  const denied = new Set<string>();
  const list = (dir: string) => listDir(dir, facts);
  const inWriteRoot = (path: string) => rootSet.holds(path);
  const rootSet = new DirectorySet(writeRoots);
  // Listings asked once per directory in this call (each validated against the directory once).
  const listed = new Map<string, ReadonlySet<string> | undefined>();
  const namesOf = (dir: string): ReadonlySet<string> | undefined => {
    if (listed.has(dir)) return listed.get(dir);
    // A directory its parent's listing lacks is missing: no system call to learn that.
    const parent = dirname(dir);
    const siblings = parent === dir ? undefined : namesOf(parent);
    if (siblings !== undefined && !siblings.has(basename(dir))) {
      listed.set(dir, undefined);
      return undefined;
    }
    note(dir);
    const names = listDirNames(dir);
    listed.set(dir, names);
    return names;
  };
  // The nearest listable ancestor when it lacks the next component on the way (the path is
  // missing), else undefined.
  const missingBelow = (path: string): string | undefined => {
    for (let child = path, dir = dirname(path); dir !== child; child = dir, dir = dirname(dir)) {
      const names = namesOf(dir);
      if (names !== undefined) return names.has(basename(child)) ? undefined : dir;
    }
    return undefined;
  };
  for (const candidate of credentialCandidates(envs, writeRoots, list, (dir) => listDir(dir, facts, false) !== undefined)) {
    // Most candidates are absent: their directory's remembered listing says so without a system
    // call per candidate. Otherwise check without throwing (exceptions are slow) before
    // resolving; one we may not even look up (EACCES) is unreadable to the command as well.
    let present: boolean;
    const listedAncestor = missingBelow(candidate);
    if (listedAncestor !== undefined) present = false;
    else {
      try {
        present = facts.lstat(candidate) !== undefined;
      } catch {
        continue;
      }
    }
    if (!present) {
      const resolved = listedAncestor === undefined ? resolveAsFarAsExists(candidate, facts, true) : resolveBelow(listedAncestor, candidate, facts);
      if (resolved !== undefined && !inWriteRoot(resolved) && !isRootOnly(candidate)) denied.add(resolved);
      continue;
    }
    let real: string;
    try {
      real = facts.realpath(candidate);
    } catch {
      continue; // a dangling link: nothing to hide
    }
    if (inWriteRoot(real)) continue;
    if (!isRootOnly(candidate)) denied.add(real);
    if (!existing.includes(real)) existing.push(real);
  }
  const guarded: string[] = [];
  for (const env of envs) {
    for (const { dir } of buildCredentialShape(env).guarded) {
      const resolved = resolveAsFarAsExists(dir, facts);
      if (resolved !== undefined && !inWriteRoot(resolved) && !guarded.includes(resolved)) guarded.push(resolved);
    }
  }
  return { existing, tree: { denied: [...denied], guarded } };
}

/** The credential baseline entries that exist, resolved, minus any that would hide a write root. */
export function existingCredentialPaths(
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>,
  writeRoots: string[],
  facts: HostFacts = new HostFacts(),
): string[] {
  return credentialDenySet(envs, writeRoots, facts).existing;
}
