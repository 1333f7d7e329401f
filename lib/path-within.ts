// SPDX-License-Identifier: MIT
// The one subtree test every path decision uses: is `child` the `parent` itself or beneath it.
import { join, sep } from 'node:path';

/** True when `child` equals `parent` or lies beneath it (both absolute and clean). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * `join(dir, name)` for a directory entry: plain concatenation when `dir` is a clean absolute path
 * (such as a realpath) and `name` a plain entry name, which is what `join` gives then, without its
 * normalizing pass; `join` itself otherwise.
 */
export function joinEntry(dir: string, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes(sep) || !isCleanAbsolute(dir)) return join(dir, name);
  return dir === sep ? `${sep}${name}` : `${dir}${sep}${name}`;
}

/** An absolute path with no empty, `.` or `..` component and no trailing separator (`/` itself is clean). */
export function isCleanAbsolute(path: string): boolean {
  if (path === sep) return true;
  if (!path.startsWith(sep) || path.endsWith(sep)) return false;
  for (const part of path.slice(1).split(sep)) if (part === '' || part === '.' || part === '..') return false;
  return true;
}
