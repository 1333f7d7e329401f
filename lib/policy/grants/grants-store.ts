// SPDX-License-Identifier: MIT
// The persistent grants store: path resolution, cached reads, locked atomic writes, migrations with
// exclusive backups and a one-time notice. A broken file is never rewritten or deleted.
import { closeSync, copyFileSync, constants as fsConstants, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { SandboxError } from '../../errors.js';
import { selectGrant } from './grant-match.js';
import {
  buildMigrationNotice,
  emptyGrantsState,
  GrantsFileError,
  normalizeGrantRecord,
  normalizeApprovedCommand,
  normalizePrefixRecord,
  normalizeToolName,
  parseGrantsText,
  serializeGrantsState,
  type GrantsState,
  type PrefixValidator,
} from './grants-file.js';
import { acquireLock } from './lock.js';
import { grantsFilePath } from '../config/settings-dir.js';
import type { ApprovedCommand, CommandPrefixGrant, Grant } from '../schema.js';

/** `$ZERO_SANDBOX_GRANTS_PATH` → `$XDG_CONFIG_HOME/zero/sandbox-grants.json` → `~/.config/zero/sandbox-grants.json`. */
export function resolveGrantsPath(env: NodeJS.ProcessEnv = process.env): string {
  return grantsFilePath(env);
}

/** Input of a new grant; the scope is stored as given (callers resolve it first). */
export interface GrantInput {
  /** Tool name (letters, digits, `.`, `_`, `-`). */
  toolName: string;
  /** allow or deny; anything else is refused. */
  decision: 'allow' | 'deny' | string;
  /** Absolute path or host; absent for tool-wide. */
  scope?: string;
  /** file, dir, host, or ''/absent for tool-wide. */
  scopeKind?: '' | 'file' | 'dir' | 'host' | string;
  /** Why (secrets are redacted before storing). */
  reason?: string;
}

/** Options of a GrantStore. */
export interface GrantStoreOptions {
  /** Validates command prefixes (the analyzer's rules); defaults to structural checks only. */
  validatePrefix?: PrefixValidator;
  /** Clock for approvedAt. */
  now?: () => Date;
  /** Lock timeout (default 5000 ms). */
  lockTimeoutMs?: number;
  /**
   * How long a read may reuse the last one without checking the file again (default 20 ms). Other
   * processes' changes are seen after at most this long; this process's own writes immediately.
   */
  recheckMs?: number;
}

/** Structural prefix check used when no analyzer validator is supplied. */
export function structuralPrefixCheck(prefix: readonly string[]): boolean {
  return prefix.length > 0 && prefix.every((t) => t.trim() !== '' && !/[\0\r\n*?[\]{}`]|\$\(/.test(t));
}

function nowIso(now: () => Date): string {
  return now().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The persistent store of one grants file. */
export class GrantStore {
  readonly path: string;
  private readonly validatePrefix: PrefixValidator;
  private readonly now: () => Date;
  private readonly lockTimeoutMs: number;
  private cache: { signature: string; state: GrantsState; checkedAt: number } | undefined;
  private readonly recheckMs: number;

  constructor(path: string, options: GrantStoreOptions = {}) {
    this.path = resolve(path);
    this.validatePrefix = options.validatePrefix ?? structuralPrefixCheck;
    this.now = options.now ?? (() => new Date());
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5_000;
    this.recheckMs = options.recheckMs ?? 20;
  }

  private invalid(error: unknown): SandboxError {
    if (error instanceof SandboxError) return error;
    const detail = error instanceof GrantsFileError ? error.message : (error as Error).message;
    return new SandboxError('grants_invalid', `invalid sandbox grants file at ${this.path}: ${detail}`, { path: this.path, cause: error });
  }

  private unwritable(error: unknown): SandboxError {
    if (error instanceof SandboxError) return error;
    return new SandboxError('grants_invalid', `cannot write the sandbox grants file at ${this.path}: ${(error as Error).message}`, {
      path: this.path,
      cause: error,
    });
  }

  private signature(): string | undefined {
    try {
      const st = statSync(this.path, { throwIfNoEntry: false });
      return st === undefined ? undefined : `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch (error) {
      throw this.invalid(error);
    }
  }

  private readText(): string | undefined {
    try {
      return readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.invalid(error);
    }
  }

  /**
   * The current state. Migrates (under the lock, with a backup) when the file is legacy or from an
   * older policy version. Throws SandboxError `grants_invalid` for a broken file, which stays untouched.
   */
  read(): GrantsState {
    // process.hrtime, not performance.now: the global `performance` loads perf_hooks (~1 ms of cold start).
    const now = Number(process.hrtime.bigint()) / 1e6;
    if (this.cache !== undefined && now - this.cache.checkedAt < this.recheckMs) return this.cache.state;
    const signature = this.signature();
    if (signature === undefined) {
      this.cache = undefined;
      return emptyGrantsState();
    }
    if (this.cache !== undefined && this.cache.signature === signature) {
      this.cache.checkedAt = now;
      return this.cache.state;
    }
    const text = this.readText();
    if (text === undefined) return emptyGrantsState();
    let parsed;
    try {
      parsed = parseGrantsText(text, this.validatePrefix);
    } catch (error) {
      throw this.invalid(error);
    }
    if (parsed.kind === 'migrate') return this.withLock((state) => state, false);
    this.cache = { signature, state: parsed.state, checkedAt: now };
    return parsed.state;
  }

  /** Reads under the lock, migrating first when needed, applies `mutate`, writes when `write`. */
  private withLock<T>(mutate: (state: GrantsState) => T, write = true): T {
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw this.unwritable(error);
    }
    const release = acquireLock(`${this.path}.lockfile`, { timeoutMs: this.lockTimeoutMs });
    try {
      const text = this.readText();
      let state = emptyGrantsState();
      let dirty = write;
      if (text !== undefined) {
        let parsed;
        try {
          parsed = parseGrantsText(text, this.validatePrefix);
        } catch (error) {
          throw this.invalid(error);
        }
        state = parsed.state;
        if (parsed.kind === 'migrate') {
          const backupPath = this.writeBackup(parsed.backupSuffix);
          state.migration = {
            fromSchemaVersion: parsed.fromSchemaVersion,
            backupPath,
            migrated: parsed.migrated,
            invalidated: parsed.invalidated,
            noticePending: true,
          };
          if (parsed.fromPolicyVersion !== undefined) state.migration.fromPolicyVersion = parsed.fromPolicyVersion;
          dirty = true;
        }
      }
      const result = mutate(state);
      if (dirty) {
        try {
          this.writeAtomic(serializeGrantsState(state));
        } catch (error) {
          throw this.unwritable(error);
        }
      }
      this.cache = undefined;
      return result;
    } finally {
      release();
    }
  }

  /** Copies the current file to `<path><suffix>` (then `.1`, `.2`, …), created exclusively, 0600. */
  private writeBackup(suffix: string): string {
    for (let n = 0; n < 1000; n++) {
      const candidate = `${this.path}${suffix}${n === 0 ? '' : `.${n}`}`;
      try {
        copyFileSync(this.path, candidate, fsConstants.COPYFILE_EXCL);
        return candidate;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw this.invalid(error);
      }
    }
    throw new SandboxError('grants_invalid', `cannot find a free backup name for ${this.path}${suffix}`, { path: this.path });
  }

  private writeAtomic(text: string): void {
    const tmp = `${this.path}.tmp-${process.pid}-${process.hrtime.bigint()}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(tmp, this.path);
    } catch (error) {
      try {
        unlinkSync(tmp);
      } catch {
        // nothing left to clean
      }
      throw error;
    }
  }

  /** The covering grant for a tool and resolved request scope ('' = tool-wide). */
  lookup(toolName: string, requestScope: string): Grant | undefined {
    const list = this.read().grants[toolName.trim()];
    return list === undefined ? undefined : selectGrant(list, requestScope);
  }

  /** Stores a grant, replacing one with the same scope and kind. */
  grant(input: GrantInput): Grant {
    const tool = this.checkTool(input.toolName);
    let grant: Grant;
    try {
      grant = normalizeGrantRecord({ ...input, toolName: tool, approvedAt: nowIso(this.now) }, tool, 'grant');
    } catch (error) {
      throw new SandboxError('invalid_argument', (error as Error).message, { cause: error });
    }
    this.withLock((state) => {
      const list = (state.grants[tool] ??= []);
      const at = list.findIndex((g) => (g.scope ?? '') === (grant.scope ?? '') && (g.scopeKind ?? '') === (grant.scopeKind ?? ''));
      if (at === -1) list.push(grant);
      else list[at] = grant;
    });
    return grant;
  }

  /** Stores a command prefix, replacing the same prefix. Refused prefixes throw invalid_argument. */
  grantCommandPrefix(toolName: string, prefix: readonly string[], reason?: string): CommandPrefixGrant {
    const tool = this.checkTool(toolName);
    let record: CommandPrefixGrant;
    try {
      record = normalizePrefixRecord({ prefix: [...prefix], approvedAt: nowIso(this.now), reason }, tool, 'prefix', this.validatePrefix);
    } catch (error) {
      throw new SandboxError('invalid_argument', (error as Error).message, { cause: error });
    }
    this.withLock((state) => {
      const list = (state.commandPrefixes[tool] ??= []);
      const at = list.findIndex((p) => p.prefix.join('\0') === record.prefix.join('\0'));
      if (at === -1) list.push(record);
      else list[at] = record;
    });
    return record;
  }

  /** Stores an always-approval of one exact network/destructive command (replacing the same text). */
  approveCommand(toolName: string, command: string, risks: readonly string[]): ApprovedCommand {
    const tool = this.checkTool(toolName);
    let record: ApprovedCommand;
    try {
      record = normalizeApprovedCommand({ command, risks: [...risks], approvedAt: nowIso(this.now) }, tool, 'approved command');
    } catch (error) {
      throw new SandboxError('invalid_argument', (error as Error).message, { cause: error });
    }
    this.withLock((state) => {
      const list = (state.approvedCommands[tool] ??= []);
      const at = list.findIndex((a) => a.command === record.command);
      if (at === -1) list.push(record);
      else list[at] = { ...record, risks: [...new Set([...(list[at] as ApprovedCommand).risks, ...record.risks])].sort() };
    });
    return record;
  }

  /** Always-approved exact commands of a tool. */
  approvedCommandsOf(toolName: string): ApprovedCommand[] {
    return this.read().approvedCommands[toolName.trim()] ?? [];
  }

  /** Always-approved exact commands, sorted by tool and text. */
  listApprovedCommands(): ApprovedCommand[] {
    return Object.values(this.read().approvedCommands)
      .flat()
      .sort((a, b) => a.toolName.localeCompare(b.toolName) || a.command.localeCompare(b.command));
  }

  /** The first stored prefix of `toolName` that is a token prefix of `argv`. */
  lookupCommandPrefix(toolName: string, argv: readonly string[]): CommandPrefixGrant | undefined {
    const list = this.read().commandPrefixes[toolName.trim()] ?? [];
    return list.find((p) => p.prefix.length <= argv.length && p.prefix.every((t, i) => argv[i] === t));
  }

  /** Grants sorted by tool, then scope, then kind. */
  list(): Grant[] {
    const state = this.read();
    return Object.keys(state.grants)
      .sort()
      .flatMap((tool) =>
        [...(state.grants[tool] ?? [])].sort((a, b) =>
          (a.scope ?? '').localeCompare(b.scope ?? '') || (a.scopeKind ?? '').localeCompare(b.scopeKind ?? ''),
        ),
      );
  }

  /** Command prefixes sorted by their joined words. */
  listCommandPrefixes(): CommandPrefixGrant[] {
    return Object.values(this.read().commandPrefixes)
      .flat()
      .sort((a, b) => a.prefix.join(' ').localeCompare(b.prefix.join(' ')));
  }

  /** Removes every grant and prefix of a tool; returns how many. */
  revoke(toolName: string): number {
    const tool = this.checkTool(toolName);
    return this.withLock((state) => {
      const count = (state.grants[tool]?.length ?? 0) + (state.commandPrefixes[tool]?.length ?? 0) + (state.approvedCommands[tool]?.length ?? 0);
      delete state.grants[tool];
      delete state.commandPrefixes[tool];
      delete state.approvedCommands[tool];
      return count;
    });
  }

  /** Removes the grants of a tool whose scope is exactly `path` (made absolute against the cwd). */
  revokePath(toolName: string, path: string): number {
    const tool = this.checkTool(toolName);
    const abs = resolve(path);
    return this.withLock((state) => {
      const list = state.grants[tool] ?? [];
      const kept = list.filter((g) => g.scope !== abs);
      state.grants[tool] = kept;
      return list.length - kept.length;
    });
  }

  /** Removes everything; returns how many grants and prefixes were removed. */
  clear(): number {
    return this.withLock((state) => {
      const count = [state.grants, state.commandPrefixes, state.approvedCommands].reduce((n, map) => n + Object.values(map).flat().length, 0);
      state.grants = {};
      state.commandPrefixes = {};
      state.approvedCommands = {};
      return count;
    });
  }

  /**
   * Returns the migration notice once, then clears the pending flag. Peeks without the lock first, so
   * a read-only directory with nothing pending never fails.
   */
  consumeMigrationNotice(): string | undefined {
    if (this.read().migration?.noticePending !== true) return undefined;
    return this.withLock((state) => {
      if (state.migration?.noticePending !== true) return undefined;
      delete state.migration.noticePending;
      return buildMigrationNotice(state.migration);
    });
  }

  private checkTool(toolName: string): string {
    try {
      return normalizeToolName(toolName);
    } catch (error) {
      throw new SandboxError('invalid_argument', (error as Error).message, { cause: error });
    }
  }
}
