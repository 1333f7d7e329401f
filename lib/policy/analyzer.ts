// SPDX-License-Identifier: MIT
// The engine's view of the shell analyzer (lib/bash): risk classification and command-prefix rules.
// Loaded lazily so that importing the engine does not load tree-sitter.

/** Risk as the analyzer reports it. */
export interface AnalyzerRisk {
  level: 'low' | 'medium' | 'high' | 'critical';
  categories: string[];
  reason: string;
}

/** The request shape the analyzer classifies. */
export interface AnalyzerRiskRequest {
  toolName: string;
  sideEffect: string;
  args: Record<string, unknown>;
  workspaceRoot: string;
  permissionMode: string;
}

/** Per-request context: how to validate a write path against the active scope. */
export interface AnalyzerRiskContext {
  validateWritePath?: (absPath: string) => 'symlink_traversal' | 'out_of_workspace' | null;
}

/** Classifies a request's risk. */
export type RiskClassifier = (request: AnalyzerRiskRequest, context?: AnalyzerRiskContext) => AnalyzerRisk;

/** What the engine uses from the analyzer. */
export interface Analyzer {
  classifyRisk: RiskClassifier;
  /** Whether a prefix may be granted (launcher bans, token rules). */
  validateCommandPrefix: (prefix: readonly string[]) => boolean;
  /** The argv of a command when it is a single plain call, for prefix lookup; undefined otherwise. */
  matchCommandPrefix?: (command: string, prefixes: ReadonlyArray<readonly string[]>) => readonly string[] | undefined;
  /** The prefix to offer for approving a shell command, or undefined. */
  proposeCommandPrefix?: (command: string) => readonly string[] | undefined;
}

let loaded: Promise<Analyzer> | undefined;

/** Loads lib/bash once. */
export function loadAnalyzer(): Promise<Analyzer> {
  loaded ??= importAnalyzer();
  return loaded;
}

async function importAnalyzer(): Promise<Analyzer> {
  // The analyzer lands on another branch; until it is merged these specifiers are not type-checked.
  const riskPath = '../bash/risk.js';
  const prefixPath = '../bash/prefix.js';
  const risk = (await import(riskPath)) as { classifyRisk: RiskClassifier };
  const prefix = (await import(prefixPath)) as Record<string, unknown>;
  return {
    classifyRisk: risk.classifyRisk,
    validateCommandPrefix: prefix.validateCommandPrefix as Analyzer['validateCommandPrefix'],
  };
}
