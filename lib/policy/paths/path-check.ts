// SPDX-License-Identifier: MIT
// Validates one request path against the policy lists and the scope for a side effect, and
// gathers the paths a request names.
import { isAbsolute, join, relative, sep } from 'node:path';

import { cleanJoin, normalized } from '../../path-within.js';

import { PATH_ARG_KEYS, PROTECTED_SEGMENTS, REASON_NO_WORKSPACE_ROOT } from '../engine/constants.js';
import { parsePatchPaths, patchText } from '../engine/patch.js';
import { allowWriteCovers, isReadDenied, isWriteDenied, type PathLists } from './path-lists.js';
import { isWithin, type PathCheck } from './paths.js';
import type { WorkspaceScope } from './scope.js';

/** A path block before it becomes a Block: `denied` is a list hit. */
export interface PathBlock {
  /** Block code. */
  code: 'outside_workspace' | 'symlink_traversal' | 'denied';
  /** Human reason (for outside paths, the Go Zero CLI's wording, which agents already recognise). */
  reason: string;
  /** The path as the request gave it. */
  path: string;
}

/** Inputs of checkRequestPath. */
export interface PathCheckContext {
  /** Normalized side effect of the request. */
  sideEffect: string;
  /** Scope to validate against. */
  scope: WorkspaceScope;
  /** Resolved policy lists. */
  lists: PathLists;
  /** Whether any list entry exists. */
  listsActive: boolean;
  /** policy.enforceWorkspace (before the root check). */
  policyEnforce: boolean;
  workspaceRoot: string;
}

const OK_CHECK: PathCheck = { code: null, reason: '' };

/** Checks one path; returns undefined when it passes. */
export function checkRequestPath(path: string, ctx: PathCheckContext): PathBlock | undefined {
  const relative = !isAbsolute(path);
  if (relative && ctx.workspaceRoot === '') {
    if (ctx.policyEnforce || ctx.listsActive) return { code: 'outside_workspace', reason: `${path} ${REASON_NO_WORKSPACE_ROOT}`, path };
    return undefined;
  }
  const enforce = ctx.policyEnforce && ctx.workspaceRoot !== '';
  const abs = relative ? (cleanJoin(ctx.workspaceRoot, path) ?? join(ctx.workspaceRoot, path)) : normalized(path);
  let check: PathCheck = OK_CHECK;
  if (ctx.sideEffect === 'read') {
    if (ctx.listsActive && isReadDenied(ctx.lists, abs)) {
      return { code: 'denied', reason: `Reading ${path} is denied by the sandbox read policy.`, path };
    }
    if (enforce) check = ctx.scope.validate(path, 'read');
  } else if (ctx.sideEffect === 'write' || ctx.sideEffect === 'out_of_workspace') {
    if (ctx.listsActive && isWriteDenied(ctx.lists, abs)) {
      return { code: 'denied', reason: `Writing to ${path} is denied by the sandbox write policy.`, path };
    }
    if (!enforce) return undefined;
    check = ctx.scope.validate(path, 'write');
    if (check.code !== null && !relative && ctx.lists.allowWrite.length > 0 && allowWriteCovers(ctx.lists, abs)) return undefined;
  } else if (enforce) {
    check = ctx.scope.validate(path, 'write');
  }
  return check.code === null ? undefined : { code: check.code, reason: check.reason, path };
}

/** Every non-empty string among the path keys, then apply_patch targets (joined with a non-`.` cwd). */
export function collectRequestPaths(toolName: string, args: Record<string, unknown>): { paths: string[]; patchPaths: string[] } {
  const paths: string[] = [];
  for (const key of PATH_ARG_KEYS) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') paths.push(value.trim());
  }
  const patchPaths: string[] = [];
  if (toolName === 'apply_patch') {
    const cwd = typeof args.cwd === 'string' ? args.cwd.trim() : '';
    for (const target of parsePatchPaths(patchText(args))) {
      patchPaths.push(target);
      paths.push(cwd !== '' && cwd !== '.' && !isAbsolute(target) ? join(cwd, target) : target);
    }
  }
  return { paths, patchPaths };
}

/** Whether a write path's first segment below its write root (or the workspace) is `.git`, `.zero` or `.agents`. */
export function touchesProtectedPath(path: string, root: string, writeRoots: readonly string[]): boolean {
  const abs = isAbsolute(path) ? normalized(path) : (cleanJoin(root, path) ?? join(root, path));
  for (const writeRoot of writeRoots) {
    if (!isWithin(writeRoot, abs)) continue;
    if (PROTECTED_SEGMENTS.has(firstNameBelow(writeRoot, abs))) return true;
  }
  if (root === '') return false;
  if (isWithin(root, abs)) return PROTECTED_SEGMENTS.has(firstNameBelow(root, abs));
  // relative() folds case on Windows, where isWithin does not.
  return PROTECTED_SEGMENTS.has(relative(root, abs).split(sep)[0] ?? '');
}

/** The first name of `child` below `parent` ('' for `parent` itself); `child` is within `parent`. */
function firstNameBelow(parent: string, child: string): string {
  if (child === parent) return '';
  const rest = child.slice(parent.endsWith(sep) ? parent.length : parent.length + 1);
  const end = rest.indexOf(sep);
  return end === -1 ? rest : rest.slice(0, end);
}
