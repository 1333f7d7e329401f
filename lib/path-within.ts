// SPDX-License-Identifier: MIT
// The one subtree test every path decision uses: is `child` the `parent` itself or beneath it.
import { sep } from 'node:path';

/**
 * True when `child` equals `parent` or lies beneath it (both absolute and clean). `separator` is
 * this OS's by default; a builder for another OS's paths passes its own (the seatbelt profile
 * builder always passes '/', so it gives the same answer when it runs on Windows).
 */
export function isWithin(parent: string, child: string, separator: string = sep): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith(separator) ? parent : parent + separator);
}

/** An absolute path with no empty, `.` or `..` component and no trailing separator (`/` itself is clean). */
export function isCleanAbsolute(path: string): boolean {
  if (path === sep) return true;
  if (!path.startsWith(sep) || path.endsWith(sep)) return false;
  const dot = `${sep}.`;
  const dots = `${sep}..`;
  return !(path.includes(sep + sep) || path.includes(dot + sep) || path.endsWith(dot) || path.includes(dots + sep) || path.endsWith(dots));
}
