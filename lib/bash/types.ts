// SPDX-License-Identifier: MIT
// Plain types of the shell analyzer and risk classifier (no zod, so importing them costs nothing).

import type { SideEffectName } from '../enums.js';

/** What a tool request does; unknown values are treated as `out_of_workspace`. */
export type SideEffect = SideEffectName;

/** Risk levels, ranked `low < medium < high < critical`. */
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

/** Risk category strings (wire values, as clients of the Go Zero CLI decode them): every side effect but `none`, plus the command and path categories. */
export type RiskCategory =
  | Exclude<SideEffect, 'none'>
  | 'destructive'
  | 'piped_installer'
  | 'unparseable_command'
  | 'absolute_path'
  | 'path_escape'
  | 'symlink_traversal';

/** The risk of one tool request. */
export interface Risk {
  /** The highest level any category contributes (`low` when there is none). */
  level: RiskLevel;
  /** Every category found, sorted and without duplicates. */
  categories: RiskCategory[];
  /** "<level> risk: <cat1>, <cat2>", or just the level when there are no categories. */
  reason: string;
}

/** Sandbox permission mode of a request; unknown values mean `auto`. */
export type PermissionMode = 'auto' | 'ask' | 'unsafe';

/** A tool request as the classifier sees it. */
export interface RiskRequest {
  /** The tool's name, e.g. `bash` or `write_file`. */
  toolName: string;
  /** The tool's side effect; an unknown string counts as `out_of_workspace`. */
  sideEffect: SideEffect | (string & {});
  /** Tool arguments; `command`/`cmd`/`script`/`shell` carry a shell command, path keys carry paths. */
  args?: Record<string, unknown>;
  /** Workspace root used to resolve relative paths for the write-scope check. */
  workspaceRoot?: string;
  /** Permission mode; accepted for completeness, it does not change the risk. */
  permissionMode?: PermissionMode | (string & {});
}

/** One simple command found in a shell command, after wrapper and launcher resolution. */
export interface SimpleCommand {
  /** The normalized program: basename, lower-case, Windows executable suffix removed. */
  program: string;
  /** The static text of each word from the program word on (expansions contribute nothing). */
  argv: string[];
  /** The wrappers and launchers it was reached through, outermost first (e.g. `sudo`, `bash -c`). */
  via: string[];
}

/** Human reasons for each analysis flag that is set. */
export interface AnalysisReasons {
  /** Why the command is considered to use the network. */
  network?: string;
  /** Why the command is considered destructive. */
  destructive?: string;
  /** Why the command is considered interactive (it would hang without a terminal). */
  interactive?: string;
  /** Why the command could not be analyzed completely. */
  tooComplex?: string;
}

/** The result of analyzing a shell command on its syntax tree. */
export interface CommandAnalysis {
  /** Every simple command found, in source order (launcher payloads after their launcher). */
  commands: SimpleCommand[];
  /** A command contacts the network (downloads, package installs, remote shells, dev servers). */
  network: boolean;
  /** A command destroys data (rm -rf, mkfs, dd, shred, find -delete, ...). */
  destructive: boolean;
  /** A command needs a terminal (editors, pagers, REPLs, `tail -f`, ...). */
  interactive: boolean;
  /** The command could not be parsed or analyzed completely (parse error, limits, opaque payload). */
  tooComplex: boolean;
  /** A human reason for each flag that is set. */
  reasons: AnalysisReasons;
}

/** Options of the analyzer. */
export interface AnalyzeOptions {
  /** Platform whose conventions apply (interactive table, known-safe segments); default: this one. */
  platform?: NodeJS.Platform;
}
