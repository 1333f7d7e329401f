// SPDX-License-Identifier: MIT
// classifyCommand: the command-level part of the risk (AST flags, raw-text patterns, fail-closed fallback).
import { analyzeCommandDetail } from './analyze.js';
import { destructivePattern, pipedInstallerPattern, unparseableDestructivePattern, unparseableNetworkPattern } from './patterns.js';
import type { AnalyzeOptions, CommandAnalysis, RiskCategory } from './types.js';

/** The command-level categories with the reason each was added. */
export interface CommandClassification {
  /** Categories the command adds, sorted: `network`, `destructive`, `piped_installer` (critical), `unparseable_command` (high). */
  categories: RiskCategory[];
  /** The syntax-tree analysis the categories were partly derived from. */
  analysis: CommandAnalysis;
  /** Why each category was added. */
  reasons: Partial<Record<RiskCategory, string>>;
}

/**
 * Classifies a shell command: AST network → `network`, destructive → `destructive`, too complex →
 * `unparseable_command`; raw-text destructive shapes and piped installers (also through sudo); and,
 * when the command cannot be parsed, `network` if it names an obvious network program (fail closed).
 */
export function classifyCommand(text: string, options?: AnalyzeOptions): CommandClassification {
  const source = typeof text === 'string' ? text : String(text);
  const detail = analyzeCommandDetail(source, options);
  const { analysis } = detail;
  const reasons: Partial<Record<RiskCategory, string>> = {};
  const add = (category: RiskCategory, reason: string | undefined): void => {
    if (reason !== undefined) reasons[category] ??= reason;
  };
  add('network', analysis.reasons.network);
  add('destructive', analysis.reasons.destructive);
  add('unparseable_command', analysis.reasons.tooComplex);
  add('piped_installer', detail.pipedInstaller);
  let patternError: string | undefined;
  try {
    // Quoted and heredoc text given to a program that only reads it is data, never a command; when
    // the command could not be analyzed completely, the whole text is checked (fail closed).
    const code = analysis.tooComplex ? source : (detail.codeText ?? source);
    // Text the parser never read (no parser, or past a limit): any data-destroying program name counts.
    if (detail.unread) add('destructive', unparseableDestructivePattern(source));
    // The raw scan is the slow part on long texts: skipped once the command is known destructive.
    if (reasons.destructive === undefined) add('destructive', destructivePattern(code));
    add('piped_installer', pipedInstallerPattern(code));
    if (analysis.tooComplex) {
      add('network', detail.recovered.network);
      add('destructive', detail.recovered.destructive);
      add('network', unparseableNetworkPattern(source));
    }
  } catch (error) {
    patternError = error instanceof Error ? error.message : String(error);
  }
  if (patternError !== undefined) add('unparseable_command', `the text checks failed: ${patternError}`);
  const categories = (Object.keys(reasons) as RiskCategory[]).sort();
  return { categories, analysis, reasons };
}
