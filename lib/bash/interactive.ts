// SPDX-License-Identifier: MIT
// detectInteractiveCommand: the bash tool's pre-exec guard against programs that need a terminal.
import { analyzeCommandDetail } from './analyze.js';
import { interactiveSuggestion } from './interactive-rules.js';

/** The verdict of the interactive-command guard. */
export interface InteractiveVerdict {
  /** The command would wait for a terminal that an agent does not have. */
  interactive: boolean;
  /** The matched program or form, e.g. `vim` or `git rebase -i`. */
  command?: string;
  /** Why the command is refused. */
  reason?: string;
  /** What to run instead, phrased for the platform (e.g. `type` on Windows, `cat` elsewhere). */
  suggestion?: string;
}

/**
 * Finds the first simple command (through wrappers, launchers and substitutions, never inside
 * quotes) that needs an interactive terminal. Never throws.
 */
export function detectInteractiveCommand(text: string, options: { platform?: NodeJS.Platform } = {}): InteractiveVerdict {
  // process.platform default: interactive programs and their flags differ per OS.
  const platform = options.platform ?? process.platform;
  const detail = analyzeCommandDetail(text, { platform });
  const match = detail.interactive;
  if (match === undefined) return { interactive: false };
  return {
    interactive: true,
    command: match.command,
    reason: `${match.command} needs an interactive terminal and would hang without one`,
    suggestion: interactiveSuggestion(match, platform),
  };
}
