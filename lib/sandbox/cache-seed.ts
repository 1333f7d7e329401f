// SPDX-License-Identifier: MIT
// Makes the user's existing tool caches usable from the managed runtime state without ever writing
// to them: npm's content-addressed cache is seeded once (index copied, content symlinked to the
// read-only host files) and Go reads the host module cache as a file:// proxy.
import { copyFileSync, constants as fsConstants, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

function value(env: Env, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '' && isAbsolute(v)) return v;
  }
  return undefined;
}

/** The host's npm cache directory (`npm_config_cache`, else `~/.npm`). */
export function buildHostNpmCache(env: Env, home: string = env.HOME ?? homedir()): string {
  return value(env, 'npm_config_cache', 'NPM_CONFIG_CACHE') ?? join(home, '.npm');
}

/** The host's Go module download cache (`$GOMODCACHE/cache/download`, default `~/go/pkg/mod`). */
export function buildHostGoDownloadDir(env: Env, home: string = env.HOME ?? homedir()): string {
  const gopath = (env.GOPATH ?? '').split(':').find((entry) => entry !== '' && isAbsolute(entry)) ?? join(home, 'go');
  return join(value(env, 'GOMODCACHE') ?? join(gopath, 'pkg', 'mod'), 'cache', 'download');
}

/**
 * GOPROXY that answers from the host's module cache first and falls back to the user's proxy
 * list (default `https://proxy.golang.org,direct`) for anything it does not hold. The file
 * proxy only reads, so nothing lands in the host cache.
 */
export function buildGoProxy(hostDownloadDir: string, userProxy: string | undefined): string {
  const rest = userProxy === undefined || userProxy.trim() === '' ? 'https://proxy.golang.org,direct' : userProxy.trim();
  if (rest === 'off') return 'off'; // the user forbids module downloads: keep it that way
  return `file://${hostDownloadDir},${rest}`;
}

/** Counts of what a seeding did, for tests and measurements. */
export interface SeedStats {
  /** Files copied (mutable files such as npm's index buckets, which npm appends to in place). */
  copied: number;
  /** Files linked by symlink to the host (immutable content). */
  linked: number;
  /** False when the time budget ran out first (the mirror then holds a consistent subset). */
  complete: boolean;
}

/** Time budget of one seeding; it runs once per new workspace, before its first command. */
export const SEED_BUDGET_MS = 1500;

/**
 * Mirrors `source` into the new directory `target`: directories are created, files chosen by
 * `copy` are copied (reflinked where the filesystem can), every other regular file becomes a
 * symlink to the host file. Symlinks and special files in the source are skipped, so the mirror
 * never points anywhere the source did not hold a regular file. Stops at `deadline`
 * (performance.now() time).
 */
export function seedTree(source: string, target: string, copy: (relative: string) => boolean, deadline = Infinity): SeedStats {
  const stats: SeedStats = { copied: 0, linked: 0, complete: true };
  const walk = (dir: string, rel: string) => {
    mkdirSync(join(target, rel), { mode: 0o700 });
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (performance.now() > deadline) {
        stats.complete = false;
        return;
      }
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const from = join(dir, entry.name);
      if (entry.isDirectory()) walk(from, relPath);
      else if (entry.isFile()) {
        if (copy(relPath)) {
          copyFileSync(from, join(target, relPath), fsConstants.COPYFILE_FICLONE);
          stats.copied++;
        } else {
          symlinkSync(from, join(target, relPath));
          stats.linked++;
        }
      }
    }
  };
  walk(source, '');
  return stats;
}

/** npm's cacache: index buckets are appended to in place, so they are copied; content is immutable. */
export function isNpmMutable(relative: string): boolean {
  return !relative.startsWith('_cacache/content-v2/');
}

/**
 * Seeds a managed npm cache from the host's `_cacache` within a time budget, built in `staging`
 * (outside every write root) and moved over the still-empty `target` in one rename. Returns undefined when there is
 * nothing to seed or `target` is no longer an empty directory (a command already used it).
 */
export function seedNpmCache(hostCache: string, staging: string, target: string, budgetMs = SEED_BUDGET_MS): SeedStats | undefined {
  const deadline = performance.now() + budgetMs;
  const source = join(hostCache, '_cacache');
  try {
    if (!lstatSync(source).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  try {
    mkdirSync(staging, { mode: 0o700 });
    const stats: SeedStats = { copied: 0, linked: 0, complete: true };
    // The index first: with it, npm finds packuments offline; content found later is a bonus, and
    // an index entry whose content is missing is only a cache miss.
    for (const part of ['index-v5', 'content-v2']) {
      try {
        if (!lstatSync(join(source, part)).isDirectory()) continue;
      } catch {
        continue;
      }
      mkdirSync(join(staging, '_cacache'), { recursive: true, mode: 0o700 });
      const s = seedTree(join(source, part), join(staging, '_cacache', part), (rel) => isNpmMutable(`_cacache/${part}/${rel}`), deadline);
      stats.copied += s.copied;
      stats.linked += s.linked;
      stats.complete &&= s.complete;
    }
    // rename(2) replaces only an empty directory; a symlink or a used cache makes it fail.
    renameSync(staging, target);
    return stats;
  } catch {
    return undefined;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
