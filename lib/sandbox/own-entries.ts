// SPDX-License-Identifier: MIT
// zero-sandbox's entry points inside a write root: the `node_modules/.bin/zero-sandbox` link or
// shim that `npx zero-sandbox` runs, and the `node_modules/zero-sandbox` link of a pnpm-style
// layout (or a linked install), with every link on the way from them to the package. The package
// directory itself is read-only and the directories above it pinned (own-files.ts, the mount
// plan), but a link cannot be bound read-only: the command could re-point it, and the next
// invocation would run its code on the host, unsandboxed. So they are noted before the run and,
// once every process of the sandbox is gone, checked without following links; one that changed is
// put back as it was and reported as a protected-path violation.
import { lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

import { DirectorySet, isWithin } from '../path-within.js';
import { PACKAGE_ROOT } from '../native/load.js';
import { inspect, makeEntry, readSmall, removeEntry, replaceFile, toBytes } from './beneath.js';
import type { ProtectedPathViolation } from './git-check.js';

/** An entry point as it was before the run. */
export interface OwnEntry {
  path: string;
  /** The write root holding it (the restore walks from there). */
  root: string;
  kind: 'link' | 'file';
  /** A link's target, as written. */
  target?: string;
  /** A shim's content and mode. */
  content?: Buffer;
  mode?: number;
}

/** How each reason about an entry point starts (the CLI prints these reasons in full). */
export const OWN_ENTRY_CHANGED = "zero-sandbox's own entry point";

/** Shims are small scripts; anything larger is not one. */
const MAX_SHIM_BYTES = 64 * 1024;
/** Links followed from an entry point to the package (a real chain has one or two). */
const MAX_HOPS = 16;

let own: { dir: string; name: string; bins: string[] } | null | undefined;

/** The package directory (resolved), its name and its command names; null when unreadable. */
function ownPackage(): { dir: string; name: string; bins: string[] } | null {
  if (own !== undefined) return own;
  try {
    const dir = realpathSync.native(PACKAGE_ROOT);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; bin?: unknown };
    const name = typeof manifest.name === 'string' ? manifest.name : basename(dir);
    const bins = typeof manifest.bin === 'string' ? [name] : manifest.bin !== null && typeof manifest.bin === 'object' ? Object.keys(manifest.bin) : [];
    own = { dir, name, bins };
  } catch {
    own = null;
  }
  return own;
}

function lstat(path: string) {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * The symlinks met resolving `path` component by component (each with its target), and where it
 * ends. Undefined when it does not resolve within MAX_HOPS links.
 */
function linksOnTheWay(path: string): { links: Array<[string, string]>; end: string } | undefined {
  const links: Array<[string, string]> = [];
  let done: string = sep;
  let rest = path.split(sep).filter((p) => p !== '');
  while (rest.length > 0) {
    const next = join(done, rest[0] as string);
    rest = rest.slice(1);
    if (lstat(next)?.isSymbolicLink() !== true) {
      done = next;
      continue;
    }
    if (links.length >= MAX_HOPS) return undefined;
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      return undefined;
    }
    links.push([next, target]);
    const to = resolve(done, target);
    rest = [...to.split(sep).filter((p) => p !== ''), ...rest];
    done = sep;
  }
  return { links, end: done };
}

/** installDirs' answer for a frozen list of roots (a kept plan's), with the package and workspace it was for. */
const installDirsMade = new WeakMap<readonly string[], { pkg: string; workspace: string; dirs: string[] }>();

/** The node_modules directories in `roots` from which Node or npx would find this package. */
function installDirs(pkg: string, roots: readonly string[], workspace: string): string[] {
  const made = installDirsMade.get(roots);
  if (made !== undefined && made.pkg === pkg && made.workspace === workspace) return made.dirs;
  const dirs = installDirsOf(pkg, roots, workspace);
  if (Object.isFrozen(roots)) installDirsMade.set(roots, { pkg, workspace, dirs });
  return dirs;
}

function installDirsOf(pkg: string, roots: readonly string[], workspace: string): string[] {
  const dirs = new Set<string>([join(workspace, 'node_modules')]);
  for (const root of roots) {
    if (root === pkg || !isWithin(root, pkg)) continue;
    for (let dir = dirname(pkg); isWithin(root, dir); dir = dirname(dir)) {
      if (basename(dir) === 'node_modules') dirs.add(dir);
      if (dir === root) break;
    }
  }
  return [...dirs];
}

/** The DirectorySet of a frozen list of roots (a kept plan's, given run after run), made once. */
const holdersMade = new WeakMap<readonly string[], DirectorySet>();

function holdersOf(roots: readonly string[]): DirectorySet {
  let holders = holdersMade.get(roots);
  if (holders === undefined) {
    holders = new DirectorySet(roots);
    if (Object.isFrozen(roots)) holdersMade.set(roots, holders);
  }
  return holders;
}

/**
 * Before a run: the entry points of this package inside the caller's write roots (`roots`,
 * resolved; `workspace` among them), as they are now. Cheap when there are none: a few lstat
 * calls. Never throws.
 */
export function noteOwnEntries(roots: readonly string[], workspace: string): OwnEntry[] {
  const pkg = ownPackage();
  if (pkg === null) return [];
  const out = new Map<string, OwnEntry>();
  const holders = holdersOf(roots);
  const rootOf = (path: string) => holders.holderAbove(path);
  const note = (path: string, kind: 'link' | 'file') => {
    const root = rootOf(path);
    if (root === undefined || out.has(path)) return;
    if (kind === 'link') {
      try {
        out.set(path, { path, root, kind, target: readlinkSync(path) });
      } catch {
        // gone already: nothing to keep
      }
      return;
    }
    const content = readSmall(toBytes(path), MAX_SHIM_BYTES);
    const st = lstat(path);
    if (content !== undefined && st !== undefined) out.set(path, { path, root, kind, content, mode: st.mode & 0o7777 });
  };
  try {
    for (const dir of installDirs(pkg.dir, roots, workspace)) {
      // Most workspaces have no node_modules, or no zero-sandbox in it: one or two lstat calls.
      if (lstat(join(dir, pkg.name)) === undefined) continue;
      const installed = linksOnTheWay(join(dir, pkg.name));
      // Only a node_modules from which this very package is found holds its entry points.
      if (installed === undefined || installed.end !== pkg.dir) continue;
      for (const [link] of installed.links) note(link, 'link');
      for (const bin of pkg.bins) {
        const path = join(dir, '.bin', bin);
        const st = lstat(path);
        if (st?.isFile() === true) note(path, 'file');
        else if (st?.isSymbolicLink() === true) {
          const way = linksOnTheWay(path);
          if (way !== undefined && isWithin(pkg.dir, way.end)) for (const [link] of way.links) note(link, 'link');
        }
      }
    }
  } catch {
    // An unreadable layout: nothing noted, the package files themselves stay read-only.
  }
  return [...out.values()];
}

/** Whether the entry at `e.path` (looked at without following any link) is still what was noted. */
function unchanged(e: OwnEntry): boolean {
  const now = inspect(toBytes(e.path)).kind;
  if (now !== e.kind) return false;
  if (e.kind === 'file') return readSmall(toBytes(e.path), MAX_SHIM_BYTES)?.equals(e.content as Buffer) === true;
  try {
    return readlinkSync(e.path) === e.target;
  } catch {
    return false;
  }
}

/**
 * Puts `e` back: every directory between its root and it made a real directory again, then the
 * entry. Another run's command may still be running in the same write root and swap a directory on
 * the way for a link at any moment, so every step is made through the descriptor walk (no link
 * followed anywhere from "/"): a swapped component makes the step fail, never lands it elsewhere.
 */
function restore(e: OwnEntry): boolean {
  try {
    let dir = e.root;
    for (const part of relative(e.root, dirname(e.path)).split(sep).filter((p) => p !== '')) {
      dir = join(dir, part);
      const bytes = toBytes(dir);
      const kind = inspect(bytes).kind;
      if (kind !== 'dir' && kind !== 'missing' && !removeEntry(bytes)) return false;
      if (!makeEntry(bytes, 0o777)) return false;
    }
    const path = toBytes(e.path);
    if (e.kind === 'link') {
      if (inspect(path).kind !== 'missing' && !removeEntry(path)) return false;
      if (!makeEntry(path, 0o777, toBytes(e.target as string))) return false;
    } else if (!replaceFile(path, e.content as Buffer, e.mode ?? 0o755)) return false;
    return unchanged(e);
  } catch {
    return false;
  }
}

/**
 * After a run, once every process of the sandbox is gone: each noted entry point that changed is
 * put back and reported. Never throws.
 */
export function checkOwnEntries(entries: readonly OwnEntry[]): ProtectedPathViolation[] {
  const out: ProtectedPathViolation[] = [];
  for (const e of entries) {
    if (unchanged(e)) continue;
    const what = `${OWN_ENTRY_CHANGED} (what the next \`npx zero-sandbox\` runs) was changed by the command`;
    out.push({ path: e.path, reason: restore(e) ? `${what}; it was put back as installed` : `${what} and could not be put back: remove it or reinstall zero-sandbox` });
  }
  return out;
}
