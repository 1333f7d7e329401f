// SPDX-License-Identifier: MIT
// Adapts the permission engine (lib/policy) to what exec needs: evaluate, network mode, extra write roots.
import type { ExecEngine } from './headless.js';
import type { ShellDecision, ShellRequest } from './session.js';

interface PolicyEngine {
  evaluate(request: ShellRequest): ShellDecision;
  effectivePolicy(): { network: string };
  scope: { extraWriteRoots(): string[] };
  consumeMigrationNotice?(): string | undefined;
}

/** Creates the real engine for `workspace` (user and project config, grants store, analyzer, probed backend). */
export async function createExecEngine(workspace: string): Promise<ExecEngine> {
  // The engine lands on another branch; until it is merged this specifier is not type-checked.
  const specifier = '../policy/create-engine.js';
  const { createEngine } = (await import(specifier)) as { createEngine: (options: { workspaceRoot: string }) => Promise<PolicyEngine> };
  const engine = await createEngine({ workspaceRoot: workspace });
  return {
    evaluate: (request) => engine.evaluate(request),
    network: () => (engine.effectivePolicy().network === 'allow' ? 'allow' : 'deny'),
    extraWriteRoots: () => engine.scope.extraWriteRoots(),
    notice: engine.consumeMigrationNotice?.(),
  };
}
