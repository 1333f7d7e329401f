// SPDX-License-Identifier: MIT
// Small pure helpers of the engine: building deny/prompt decisions with blocks, the fail-closed
// grants-error suffix, the command of a request, and the re-entrancy check.
import type { PathBlock } from '../paths/path-check.js';
import type { Block, Decision } from '../schema.js';

/** Maps a scope check code to the analyzer's path category. */
export function riskPathCode(code: string | null): 'symlink_traversal' | 'out_of_workspace' | null {
  if (code === null) return null;
  return code === 'symlink_traversal' ? 'symlink_traversal' : 'out_of_workspace';
}

/** True when both re-entrancy markers are set: we already run inside a sandbox. */
export function isReentrant(env: NodeJS.ProcessEnv): boolean {
  return env.ZERO_SANDBOXED === '1' && (env.ZERO_SANDBOX_BACKEND ?? '').trim() !== '';
}

/** The command string of a request: the first non-empty of command, cmd, script, shell. */
export function commandOf(args: Record<string, unknown>): string | undefined {
  for (const key of ['command', 'cmd', 'script', 'shell']) {
    const value = args[key];
    if (value === undefined || value === null) continue;
    const text = (typeof value === 'string' ? value : JSON.stringify(value)).trim();
    if (text !== '') return text;
  }
  return undefined;
}

/** argv of a command made only of plain words; undefined when it uses any shell syntax. */
export function splitPlainCommand(command: string): string[] | undefined {
  const words = command.trim().split(/[ \t]+/);
  return words.every((w) => /^[A-Za-z0-9_./:=@%+,-]+$/.test(w)) ? words : undefined;
}

/** A deny decision carrying a block. */
export function deny(risk: Decision['risk'], code: Block['code'], toolName: string, reason: string, recoverable = false): Decision {
  return { action: 'deny', reason, risk, block: { code, toolName, action: 'deny', risk, reason, recoverable } };
}

/** A deny or prompt decision carrying a path block (recoverable when it prompts). */
export function blockDecision(action: 'deny' | 'prompt', risk: Decision['risk'], toolName: string, block: PathBlock): Decision {
  return {
    action,
    reason: block.reason,
    risk,
    block: { code: block.code, toolName, action, risk, path: block.path, reason: block.reason, recoverable: action === 'prompt' },
  };
}

/** Appends the grants-file error to the reasons of a decision (fail closed: a broken grants file allows nothing by itself). */
export function withGrantsError(decision: Decision, error: string): Decision {
  const suffix = `; grants file unusable, no grant or auto-allow honoured: ${error}`;
  const out: Decision = { ...decision, reason: `${decision.reason ?? decision.action}${suffix}` };
  if (decision.block !== undefined) out.block = { ...decision.block, reason: `${decision.block.reason}${suffix}` };
  return out;
}
