// SPDX-License-Identifier: MIT
// The one subtree test every path decision uses: is `child` the `parent` itself or beneath it.
import { sep } from 'node:path';

/** True when `child` equals `parent` or lies beneath it (both absolute and clean). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}
