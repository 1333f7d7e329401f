// SPDX-License-Identifier: MIT
// Pure builder: the PATH a macOS command gets, with the Homebrew and /usr/local tool directories.

/** Tool directories every macOS command should find, in priority order. */
export const MAC_TOOL_DIRS = ['/opt/homebrew/bin', '/opt/homebrew/sbin', '/usr/local/bin', '/usr/local/sbin'] as const;

/**
 * Prepends the tool directories that `path` lacks, in their order, keeping every existing entry
 * where it is (a scrubbed default PATH would otherwise hide brew-installed tools).
 */
export function buildMacToolPath(path: string): string {
  const entries = path === '' ? [] : path.split(':');
  const missing = MAC_TOOL_DIRS.filter((dir) => !entries.includes(dir));
  return [...missing, ...entries].join(':');
}
