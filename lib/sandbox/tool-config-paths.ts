// SPDX-License-Identifier: MIT
// Whether a path is an agent or editor config of a write root (AGENT_TOOL_CONFIG_FILES and
// AGENT_TOOL_CONFIG_DIRS below it), asked of the paths of a plan without building every root's
// protected paths: a plan of a thousand roots holds some 25,000 of them.
import { sep } from 'node:path';

import { agentToolConfigPaths, AGENT_TOOL_CONFIG_DIRS, AGENT_TOOL_CONFIG_FILES } from '../protected-names.js';
import { hasPrefix, isCleanAbsolute } from '../path-within.js';

/** The agent and editor configs relative to a write root, `/`-separated (agentToolConfigPaths). */
export const CONFIGS = [...AGENT_TOOL_CONFIG_FILES, ...AGENT_TOOL_CONFIG_DIRS];
const SEP_CODE = sep.charCodeAt(0);

/**
 * Whether a path is one of agentToolConfigPaths(root) for one of `roots`, asked without building
 * those paths (a plan of a thousand roots holds some 25,000): under a clean root the path is the
 * root, a separator and a protected path, so its last components name the protected path and the
 * rest the root. Other roots are asked the long way. `root`, when given, is the root the path is
 * most likely under (the one whose plan paths are being asked): tried first, with one lookup.
 */
export function toolConfigPathTest(roots: Iterable<string>): (path: string, root?: string) => boolean {
  const clean = new Set<string>();
  const other = new Set<string>();
  for (const root of roots) {
    if (isCleanAbsolute(root)) clean.add(root);
    else for (const path of agentToolConfigPaths(root)) other.add(path);
  }
  const relatives = new Set(CONFIGS.map((file) => file.split('/').join(sep)));
  const depth = Math.max(...CONFIGS.map((file) => file.split('/').length));
  return (path, root) => {
    if (root !== undefined && clean.has(root)) {
      const at = root === sep ? 0 : root.length;
      if (path.length > at + 1 && path.charCodeAt(at) === SEP_CODE && path.startsWith(root) && relatives.has(path.slice(at + 1))) return true;
    }
    if (other.size > 0 && other.has(path)) return true;
    let at = path.length;
    for (let k = 0; k < depth; k++) {
      at = path.lastIndexOf(sep, at - 1);
      if (at < 0) return false;
      if (!relatives.has(path.slice(at + 1))) continue;
      // The root "/" gives "/" and the protected path; a doubled separator is no clean join.
      const root = at === 0 ? sep : path.slice(0, at);
      if (clean.has(root) && (at === 0 || !root.endsWith(sep))) return true;
      if (at === 0) return false;
    }
    return false;
  };
}

/** CONFIGS relative to a write root with this OS's separator, in agentToolConfigPaths' order. */
const RELATIVE_CONFIGS = CONFIGS.map((file) => file.split('/').join(sep));
/** The last component of each of CONFIGS: a path whose last component is none of them is no tool config of any root. */
const LAST_PARTS = new Set(CONFIGS.map((file) => file.slice(file.lastIndexOf('/') + 1)));

/**
 * The paths of `paths` (a write root's plan paths) that toolConfigPathTest(roots) does not hold,
 * asked per root: a plan lists a clean root's protected paths in agentToolConfigPaths' order, so
 * each path is first compared with the one expected next (its length, root, separator and end:
 * no string made, nothing hashed), and asked the long way when it is not that one and its last
 * component is that of a config (every path toolConfigPathTest holds ends in one: the root's
 * `.git/hooks` and `.git/config` are kept with one lookup). The comparisons are hasPrefix and an
 * indexOf at the one place the end can be, as startsWith and endsWith are slow on the
 * concatenated paths of a plan (27,000 for 1,000 roots).
 */
export function toolConfigPathFilter(roots: Iterable<string>): (root: string, paths: readonly string[]) => string[] {
  const all = [...roots];
  const isTool = toolConfigPathTest(all);
  const clean = new Set(all.filter(isCleanAbsolute));
  return (root, paths) => {
    const out: string[] = [];
    const at = root === sep ? 0 : root.length;
    const guess = clean.has(root);
    let next = 0;
    for (const path of paths) {
      const rel = guess ? RELATIVE_CONFIGS[next] : undefined;
      if (rel !== undefined && path.length === at + 1 + rel.length && path.charCodeAt(at) === SEP_CODE && hasPrefix(path, root) && path.indexOf(rel, at + 1) === at + 1) {
        next++;
        continue;
      }
      if (!LAST_PARTS.has(path.slice(path.lastIndexOf(sep) + 1)) || !isTool(path, root)) out.push(path);
    }
    return out;
  };
}
