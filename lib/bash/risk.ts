// SPDX-License-Identifier: MIT
// classifyRisk: the risk of any tool request (side effect, shell command, path arguments).
import { posix, resolve, win32 } from 'node:path';
import { normalizeSideEffect } from '../enums.js';
import { cleanJoin } from '../path-within.js';
import { classifyCommand } from './classify.js';
import type { Risk, RiskCategory, RiskLevel, RiskRequest, SideEffect } from './types.js';

export { normalizeSideEffect } from '../enums.js';

const RANK: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2, critical: 3 };

const SIDE_EFFECTS: Record<SideEffect, { category?: RiskCategory; level: RiskLevel }> = {
  read: { category: 'read', level: 'low' },
  write: { category: 'write', level: 'medium' },
  shell: { category: 'shell', level: 'high' },
  network: { category: 'network', level: 'high' },
  local_control: { category: 'local_control', level: 'high' },
  local_browser: { category: 'local_browser', level: 'high' },
  local_desktop: { category: 'local_desktop', level: 'high' },
  local_terminal: { category: 'local_terminal', level: 'high' },
  out_of_workspace: { category: 'out_of_workspace', level: 'critical' },
  none: { level: 'low' },
};

/** Levels of the categories the command and the paths add. */
const LEVELS: Partial<Record<RiskCategory, RiskLevel>> = {
  network: 'critical',
  destructive: 'critical',
  piped_installer: 'critical',
  unparseable_command: 'high',
  absolute_path: 'medium',
  path_escape: 'critical',
  symlink_traversal: 'critical',
  out_of_workspace: 'critical',
};

/** Argument keys that may carry the shell command, in order of preference. */
export const COMMAND_KEYS = ['command', 'cmd', 'script', 'shell'] as const;

/** Argument keys that carry paths. */
export const PATH_KEYS = ['path', 'file', 'file_path', 'filepath', 'filename', 'cwd', 'workdir', 'dir', 'directory'] as const;

/** Extra checks the engine supplies. */
export interface RiskContext {
  /** The engine's write-scope check for an absolute path: the category of a violation, or null. */
  validateWritePath?: (absPath: string) => 'symlink_traversal' | 'out_of_workspace' | null;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** The request's shell command: the first non-empty of `command`, `cmd`, `script`, `shell`. */
export function requestCommand(args: Record<string, unknown> | undefined): string | undefined {
  if (args === undefined || args === null || typeof args !== 'object') return undefined;
  for (const key of COMMAND_KEYS) {
    const value = stringify(args[key]).trim();
    if (value !== '') return value;
  }
  return undefined;
}

function isAbsolutePath(path: string): boolean {
  return posix.isAbsolute(path) || win32.isAbsolute(path);
}

function escapes(path: string): boolean {
  for (const form of [path, path.replace(/\\/g, '/')]) {
    if (posix.isAbsolute(form) || win32.isAbsolute(path)) continue;
    const clean = posix.normalize(form);
    if (clean === '..' || clean.startsWith('../')) return true;
  }
  return false;
}

/** Builds the risk from level-tagged categories. */
export function buildRisk(entries: readonly { category: RiskCategory; level: RiskLevel }[]): Risk {
  let level: RiskLevel = 'low';
  const categories = new Set<RiskCategory>();
  for (const entry of entries) {
    categories.add(entry.category);
    if (RANK[entry.level] > RANK[level]) level = entry.level;
  }
  const sorted = [...categories].sort();
  return { level, categories: sorted, reason: sorted.length === 0 ? level : `${level} risk: ${sorted.join(', ')}` };
}

/**
 * The risk of a tool request: side-effect base risk, the shell command's categories, and path
 * categories (`absolute_path`, `path_escape`, and with `context.validateWritePath` and a
 * workspace root, `symlink_traversal`/`out_of_workspace`). Never throws.
 */
export function classifyRisk(request: RiskRequest, context: RiskContext = {}): Risk {
  const entries: { category: RiskCategory; level: RiskLevel }[] = [];
  const base = SIDE_EFFECTS[normalizeSideEffect(request?.sideEffect)];
  if (base.category !== undefined) entries.push({ category: base.category, level: base.level });
  const args = request?.args !== null && typeof request?.args === 'object' ? request.args : undefined;
  const command = requestCommand(args);
  if (command !== undefined) {
    for (const category of classifyCommand(command).categories) {
      entries.push({ category, level: LEVELS[category] ?? 'high' });
    }
  }
  if (args !== undefined) {
    for (const key of PATH_KEYS) {
      const value = args[key];
      if (typeof value !== 'string' || value.trim() === '') continue;
      if (isAbsolutePath(value)) entries.push({ category: 'absolute_path', level: 'medium' });
      if (escapes(value)) entries.push({ category: 'path_escape', level: 'critical' });
      const root = request.workspaceRoot;
      if (context.validateWritePath !== undefined && typeof root === 'string' && root !== '') {
        let verdict: 'symlink_traversal' | 'out_of_workspace' | null = null;
        try {
          verdict = context.validateWritePath(isAbsolutePath(value) ? value : (cleanJoin(root, value) ?? resolve(root, value)));
        } catch {
          verdict = 'out_of_workspace';
        }
        if (verdict !== null) entries.push({ category: verdict, level: 'critical' });
      }
    }
  }
  return buildRisk(entries);
}
