// SPDX-License-Identifier: MIT
// The permission engine in front of headless runs: createEngine for the workspace, authorizeRun per command.
import type { ShellAuthorizer } from './session.js';

/** An engine ready to authorize commands, with what it wants people to read. */
export interface EngineAuthority {
  /** authorizeRun bound to the engine (no responder: prompts end as approval_required). */
  authorize: ShellAuthorizer;
  /** Config warnings and the one-time grants-migration notice, for stderr. */
  notices: string[];
}

/**
 * Creates the engine for `workspace` as `zero-sandbox run` does (user and project config, grants
 * store, analyzer, the measured backend) and binds authorizeRun to it.
 */
export async function createEngineAuthority(workspace: string): Promise<EngineAuthority> {
  const [{ createEngine }, { authorizeRun }, { quickBackendInfo }] = await Promise.all([
    import('../policy/engine/create-engine.js'),
    import('../sandbox/authorize.js'),
    import('../backend/current.js'),
  ]);
  const backend = quickBackendInfo();
  const engine = await createEngine({ workspaceRoot: workspace, ...(backend === undefined ? {} : { backend }) });
  const notices = (engine.config?.warnings ?? []).map((warning) => `warning: ${warning}`);
  const migration = engine.consumeMigrationNotice();
  if (migration !== undefined) notices.push(migration);
  return {
    // No terminal to ask: hints name the flags, and the terminal run that can store an approval.
    authorize: (command, options, onEvent) => authorizeRun(command, { ...options, engine, onPermissionEvent: onEvent }, 'headless'),
    notices,
  };
}
