// SPDX-License-Identifier: MIT
// How an absolute path is handed to the addon's file walks: as the root the walk starts from and
// the components below it. POSIX walks start at "/"; Windows walks start at the volume's root (a
// drive, C:\, or a share, \\server\share\), the only part opened by name: every component after
// it is opened relative to the handle before it (see native/windows/nt_walk.h).

/**
 * [root, rel] for an absolute path (a byte string, see beneath.ts): on POSIX `['/', path without
 * its leading slashes]`; on Windows the drive or share root and the rest with `\` separators.
 * Undefined for a Windows path that names no drive or share (relative, `\\.\` device paths).
 */
export function walkArgs(path: string, windows: boolean): [string, string] | undefined {
  if (!windows) return ['/', path.replace(/^\/+/, '')];
  const p = path.replace(/\//g, '\\');
  // "\\?\" asks for no normalization and names the same drive or share as the plain form.
  const long = /^\\\\\?\\(UNC\\)?/i.exec(p);
  const plain = long === null ? p : long[1] !== undefined ? `\\\\${p.slice(long[0].length)}` : p.slice(long[0].length);
  const drive = /^([A-Za-z]:)(?:\\+|$)/.exec(plain);
  if (drive !== null) return [`${drive[1]}\\`, trim(plain.slice(drive[0].length))];
  const share = /^\\\\([^\\]+)\\([^\\]+)(?:\\+|$)/.exec(plain);
  if (share !== null && share[1] !== '.' && share[1] !== '?') return [`\\\\${share[1]}\\${share[2]}\\`, trim(plain.slice(share[0].length))];
  return undefined;
}

/** Collapses repeated separators and drops a trailing one ("a\\b\" is a\b). */
function trim(rel: string): string {
  return rel.split('\\').filter((part) => part !== '').join('\\');
}
