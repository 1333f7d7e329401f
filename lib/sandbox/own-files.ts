// SPDX-License-Identifier: MIT
// zero-sandbox's own files: the package directory (CLI bundle and its V8 code cache, the addon,
// its prebuilds and the init helper), the packages it loads at run time, and the Node binary. When
// one lies inside a write root (`npx zero-sandbox` with the package in the workspace's
// node_modules), it is kept read-only inside the sandbox: a command that rewrote it would have
// its code run unsandboxed by the next invocation on the host.
import { readFileSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';

import { isWithin } from '../path-within.js';
import { PACKAGE_ROOT, nativeBindingPath } from '../native/load.js';

/** At most this many dependency packages are followed (the real closure has a handful). */
const MAX_PACKAGES = 64;

function real(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

function dependenciesOf(dir: string): string[] {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    return Object.keys(manifest.dependencies ?? {});
  } catch {
    return [];
  }
}

/** Where Node's resolution finds package `name` from `dir`: the nearest node_modules/name up the tree. */
function findPackage(name: string, dir: string): string | undefined {
  for (let at = dir; ; ) {
    const found = real(join(at, 'node_modules', name));
    if (found !== undefined) return found;
    const up = join(at, '..');
    if (up === at) return undefined;
    at = up;
  }
}

let closure: string[] | undefined;
// The Node binary running this process, resolved once.
let nodeBinary: string | undefined;

/** The package directory and every run-time dependency package directory, resolved (once per process). */
function packageClosure(): string[] {
  if (closure !== undefined) return closure;
  const root = real(PACKAGE_ROOT) ?? PACKAGE_ROOT;
  const seen = new Set<string>([root]);
  const queue = [root];
  while (queue.length > 0 && seen.size < MAX_PACKAGES) {
    const dir = queue.shift() as string;
    for (const name of dependenciesOf(dir)) {
      const found = findPackage(name, dir);
      if (found !== undefined && !seen.has(found)) {
        seen.add(found);
        queue.push(found);
      }
    }
  }
  return (closure = [...seen]);
}

/**
 * What ownFilesInside reads of the host besides its roots, as one string: the same string, the
 * same answer for the same roots (the Node binary and the dependency closure are read once).
 */
export function ownFilesFacts(): string {
  const binding = nativeBindingPath();
  return `${binding === undefined ? '' : (real(binding) ?? binding)}\0${real(PACKAGE_ROOT) ?? PACKAGE_ROOT}`;
}

/**
 * zero-sandbox's own files that lie strictly inside one of `roots` (absolute, resolved): what
 * must stay read-only there. Cheap when none can: the dependency closure is only looked up when a
 * root holds the package or a node_modules directory.
 */
export function ownFilesInside(roots: readonly string[]): string[] {
  const own: string[] = [];
  nodeBinary ??= real(process.execPath) ?? process.execPath;
  own.push(nodeBinary);
  const binding = nativeBindingPath();
  if (binding !== undefined) own.push(real(binding) ?? binding);
  const pkg = real(PACKAGE_ROOT) ?? PACKAGE_ROOT;
  const nodeModules = `${sep}node_modules${sep}`;
  if (roots.some((root) => isWithin(root, pkg) || `${root}${sep}`.includes(nodeModules))) own.push(...packageClosure());
  else own.push(pkg);
  return [...new Set(own)].filter((path) => roots.some((root) => root !== path && isWithin(root, path)));
}
