// SPDX-License-Identifier: MIT
// The engine's view of the shell analyzer (lib/bash): risk classification and command-prefix rules.
// Loaded lazily so that importing the engine does not load the shell parser.

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
  /**
   * Whether every segment of the command is covered by an approved prefix or is known-safe, with at
   * least one real match; returns the matched prefix.
   */
  matchCommandPrefix?: (
    command: string,
    persistent: ReadonlyArray<readonly string[]>,
    session: ReadonlyArray<readonly string[]>,
  ) => { prefix: string[]; session: boolean } | undefined;
  /** The prefix to offer for approving a shell call, or undefined. */
  proposeCommandPrefix?: (toolName: string, args: Record<string, unknown>) => string[] | undefined;
  /**
   * Why the shell parser could not be loaded, or undefined when it works. While it is set, no shell
   * command can be analyzed, so the engine asks before running any (fail closed).
   */
  parserFailure?: () => string | undefined;
}

/** The parts of lib/bash an analyzer is built from: the modules themselves, or stand-ins. */
export interface AnalyzerModules {
  /** lib/bash/risk.js. */
  risk: Pick<typeof import('../../bash/risk.js'), 'classifyRisk'>;
  /** lib/bash/prefix.js. */
  prefix: Pick<typeof import('../../bash/prefix.js'), 'validateCommandPrefix' | 'matchCommandPrefix' | 'proposeCommandPrefix'>;
  /** lib/bash/parse.js (optional: without it the engine cannot tell a failed parser from a complex command). */
  parse?: Pick<typeof import('../../bash/parse.js'), 'parserStatus'>;
}

let loaded: Promise<Analyzer> | undefined;

/** Loads lib/bash once. */
export function loadAnalyzer(): Promise<Analyzer> {
  loaded ??= Promise.all([import('../../bash/risk.js'), import('../../bash/prefix.js'), import('../../bash/parse.js')]).then(async ([risk, prefix, parse]) => {
    // The WebAssembly parser instantiates asynchronously: ready before the first classification.
    await parse.loadShellParser();
    return buildAnalyzer({ risk, prefix, parse });
  });
  return loaded;
}

/** The analyzer over lib/bash modules a caller already has (the CLI imports them statically). */
export function buildAnalyzer({ risk, prefix, parse }: AnalyzerModules): Analyzer {
  return {
    parserFailure: () => {
      const status = parse?.parserStatus();
      return status?.state === 'failed' ? status.reason : undefined;
    },
    classifyRisk: (request, context) => risk.classifyRisk(request, context ?? {}),
    validateCommandPrefix: (p) => prefix.validateCommandPrefix(p).ok,
    matchCommandPrefix: (command, persistent, session) => {
      const match = prefix.matchCommandPrefix(command, { persistent, session });
      return match.matched ? { prefix: match.prefix, session: match.session } : undefined;
    },
    proposeCommandPrefix: (toolName, args) => prefix.proposeCommandPrefix({ toolName, args }) ?? undefined,
  };
}
