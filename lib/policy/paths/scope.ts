// SPDX-License-Identifier: MIT
// The workspace scope: workspace root, extra write roots, read-only roots and temp roots, and the
// multi-root path validation the engine uses.
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, parse, resolve } from 'node:path';

import { SandboxError } from '../../errors.js';
import { REASON_NO_WORKSPACE_ROOT } from '../engine/constants.js';
import { assertNoSymlinkHop, assertNotHostHandover } from '../../sandbox/host-handover.js';
import { expandHome, isWithin, resolveBestEffort, tryRealpath, validateUnderRoot, type PathCheck } from './paths.js';

/** Environment and platform the scope reads its temp roots from. */
export interface ScopeOptions {
  /** Environment for $TMPDIR / %TEMP% (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Platform whose temp roots apply (default process.platform). */
  platform?: NodeJS.Platform | string;
}

/** The temp-root candidates of a platform: POSIX `/tmp` and `$TMPDIR`; Windows `%TEMP%`, `%TMP%`. */
export function defaultTempRootCandidates(platform: string, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const push = (value: string | undefined) => {
    if (value !== undefined && value.trim() !== '' && !out.includes(value)) out.push(value);
  };
  if (platform === 'win32' || platform === 'windows') {
    push(env.TEMP);
    push(env.TMP);
  } else {
    push('/tmp');
    push(env.TMPDIR);
  }
  return out;
}

/**
 * Strictly normalizes an extra root: `~` expanded, made absolute, symlinks resolved; it must exist,
 * be a directory and not be the filesystem root. `what` names the source in the error.
 */
export function normalizeExtraRoot(input: string, what = 'extra write root'): string {
  const trimmed = input.trim();
  if (trimmed === '') throw new SandboxError('invalid_argument', `${what} is empty`);
  const abs = resolve(expandHome(trimmed, homedir()));
  const real = tryRealpath(abs);
  if (real === undefined) throw new SandboxError('invalid_argument', `${what} ${input} does not exist`, { path: abs });
  let isDir = false;
  try {
    isDir = statSync(real).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new SandboxError('invalid_argument', `${what} ${input} is not a directory`, { path: abs });
  if (parse(real).root === real) throw new SandboxError('invalid_argument', `${what} ${input} is the filesystem root`, { path: abs });
  return real;
}

/**
 * An extra write root from config or the engine's caller: normalized as above, reached without a
 * symlink and not handing the host over (see lib/sandbox/host-handover.ts).
 */
export function normalizeWriteRoot(input: string, what = 'extra write root'): string {
  const root = normalizeExtraRoot(input, what);
  assertNoSymlinkHop(input, resolve(expandHome(input.trim(), homedir())), root, what);
  assertNotHostHandover(root, what, input);
  return root;
}

/** Workspace root plus extra write, read and temp roots, with undoable temporary additions. */
export class WorkspaceScope {
  /** Absolute, symlink-resolved workspace root ('' when the engine has none). */
  readonly workspaceRoot: string;
  /** Temp roots added by default (resolved, existing). */
  readonly tempRoots: readonly string[];
  private readonly extras: string[] = [];
  private readonly reads: string[] = [];
  private readonly temporaryWrites = new Map<number, string>();
  private readonly temporaryReads = new Map<number, string>();
  private nextToken = 1;

  constructor(workspaceRoot: string, extraRoots: readonly string[] = [], options: ScopeOptions = {}) {
    this.workspaceRoot = workspaceRoot === '' ? '' : resolveBestEffort(workspaceRoot);
    for (const extra of extraRoots) this.add(normalizeWriteRoot(extra));
    const env = options.env ?? process.env;
    const temps: string[] = [];
    // process.platform default: the temp roots and path rules are the host OS's.
    for (const candidate of defaultTempRootCandidates(options.platform ?? process.platform, env)) {
      const real = isAbsolute(candidate) ? tryRealpath(candidate) : undefined;
      if (real !== undefined && parse(real).root !== real && !temps.includes(real)) temps.push(real);
    }
    this.tempRoots = temps;
  }

  /** Write roots: workspace, extra roots, temporary write grants, then temp roots. */
  writeRoots(): string[] {
    const roots: string[] = [];
    if (this.workspaceRoot !== '') roots.push(this.workspaceRoot);
    roots.push(...this.extras, ...this.temporaryWrites.values(), ...this.tempRoots);
    return roots;
  }

  /** Extra write roots only (configured, --add-dir, session and turn grants); no temp roots. */
  extraWriteRoots(): string[] {
    return [...this.extras, ...this.temporaryWrites.values()];
  }

  /** Read-only roots granted on top of the write roots. */
  readRoots(): string[] {
    return [...this.reads, ...this.temporaryReads.values()];
  }

  private covered(roots: readonly string[], path: string): boolean {
    return roots.some((root) => isWithin(root, path));
  }

  /** Adds a write root (strictly normalized); idempotent for paths already covered. */
  add(path: string): void {
    const root = normalizeExtraRoot(path);
    if (this.covered(this.writeRootsWithoutTemp(), root)) return;
    this.extras.push(root);
  }

  /** Adds a read-only root; idempotent for paths already readable. */
  addRead(path: string): void {
    const root = normalizeExtraRoot(path, 'read root');
    if (this.covered([...this.writeRootsWithoutTemp(), ...this.reads], root)) return;
    this.reads.push(root);
  }

  /** Adds a write root until the returned undo function runs. */
  addTemporaryWrite(path: string): () => void {
    const root = normalizeExtraRoot(path);
    const token = this.nextToken++;
    this.temporaryWrites.set(token, root);
    return () => void this.temporaryWrites.delete(token);
  }

  /** Adds a read root until the returned undo function runs. */
  addTemporaryRead(path: string): () => void {
    const root = normalizeExtraRoot(path, 'read root');
    const token = this.nextToken++;
    this.temporaryReads.set(token, root);
    return () => void this.temporaryReads.delete(token);
  }

  private writeRootsWithoutTemp(): string[] {
    return this.workspaceRoot === '' ? [...this.extras] : [this.workspaceRoot, ...this.extras];
  }

  /**
   * Validates a path for writing (write roots) or reading (write + read roots). Relative paths are
   * checked against the workspace root only. A symlink traversal wins over outside-workspace.
   */
  validate(path: string, access: 'write' | 'read'): PathCheck {
    if (!isAbsolute(path)) {
      if (this.workspaceRoot === '') {
        return { code: 'outside_workspace', reason: `${path} ${REASON_NO_WORKSPACE_ROOT}` };
      }
      return rewrite(validateUnderRoot(this.workspaceRoot, path), path, access);
    }
    const roots = access === 'read' ? [...this.writeRoots(), ...this.readRoots()] : this.writeRoots();
    let traversal: PathCheck | undefined;
    for (const root of roots) {
      const check = validateUnderRoot(root, path);
      if (check.code === null) return check;
      if (check.code === 'symlink_traversal' && traversal === undefined) traversal = check;
    }
    if (traversal !== undefined) return traversal;
    return rewrite({ code: 'outside_workspace', reason: `${path} is outside the workspace` }, path, access);
  }
}

function rewrite(check: PathCheck, path: string, access: 'write' | 'read'): PathCheck {
  if (check.code !== 'outside_workspace') return check;
  return {
    code: 'outside_workspace',
    reason:
      access === 'read'
        ? `Reading ${path} requires access outside the workspace.`
        : `Writing to ${path} requires access outside the workspace. Allow writes there with --allow-write or --add-dir (CLI) or allowWrite (API), or approve the prompt.`,
  };
}
