// SPDX-License-Identifier: MIT
// The engine in front of a sandboxed run: evaluate the command, run the approval flow, and turn
// the decision into run options — the network the decision allows, the extra write roots and
// deny-read paths of the effective policy, the configured env pass list. Whatever it approves
// still runs inside the sandbox; approvals never unsandbox a command.
import { existsSync } from 'node:fs';

import { isNetworkPrompt } from '../policy/approval/approval.js';
import { authorizeCommand, type HintSurface, type PermissionPrompt } from '../policy/approval/authorize.js';
import type { ResourceLimits } from '../backend/types.js';
import type { Engine } from '../policy/engine/engine.js';
import { DENY_READ_IF_APPEARS, type EngineOptions, type SandboxCommand, type SandboxOptions } from './options.js';
import { assertHostEnforceable } from '../backend/current.js';
import { mergeLimits } from './default-limits.js';

export type { PermissionPrompt } from '../policy/approval/authorize.js';
export type { EngineOptions } from './options.js';

const PLAIN_ARG = /^[A-Za-z0-9_\-./=:,@%+]+$/;

/** The command as one shell string, for the analyzer (argv arguments quoted as bash would need). */
export function commandText(command: SandboxCommand): string {
  if (typeof command === 'string') return command;
  return command.map((arg) => (PLAIN_ARG.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export interface AuthorizedRun<T extends SandboxOptions> {
  options: T;
  /** Ends turn-scoped approvals; call once the command has finished. */
  cleanup: () => void;
}

/**
 * Evaluates `command` with the engine and returns the options to run it with. Rejects with
 * SandboxError `permission_denied`, `approval_required` (a prompt with no responder) or `aborted`.
 * A caller that asked for `network: 'allow'` explicitly has answered the network prompt itself.
 */
export async function authorizeRun<T extends SandboxOptions & EngineOptions>(
  command: SandboxCommand,
  options: T,
  surface: HintSurface = 'api',
): Promise<AuthorizedRun<T>> {
  const engine = options.engine as Engine;
  // Nothing can run unsandboxed here: when the sandbox cannot be set up, say so before asking anyone.
  assertHostEnforceable(options.network === 'allow' ? 'allow' : 'deny');
  const callerAllowsNetwork = options.network === 'allow';
  const responder = options.onPermissionRequest;
  const auth = await authorizeCommand(commandText(command), {
    engine,
    surface,
    ...(options.toolName === undefined ? {} : { toolName: options.toolName }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
    ...(options.onPermissionEvent === undefined ? {} : { onPermissionEvent: options.onPermissionEvent }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(responder === undefined && !callerAllowsNetwork
      ? {}
      : {
          onPermissionRequest: (prompt: PermissionPrompt) => {
            if (callerAllowsNetwork && isNetworkPrompt(prompt.decision)) return 'allow';
            return responder === undefined ? 'deny' : responder(prompt);
          },
        }),
  });
  const temp = new Set(engine.scope.tempRoots);
  const workspace = engine.workspaceRoot;
  const extraWrite = engine.shellWriteRoots().filter((root) => root !== workspace && !temp.has(root) && existsSync(root));
  const lists = engine.pathLists();
  // The config's deny-read entries as they are now (the lists were resolved when the engine was
  // built): a present one is masked, a missing one kept unreadable should it appear.
  const denyReadNow: string[] = [];
  const denyReadLater: string[] = [];
  for (const path of new Set([...lists.denyRead, ...(lists.denyReadMissing ?? [])])) (existsSync(path) ? denyReadNow : denyReadLater).push(path);
  const config = (engine as { config?: { envPass?: string[]; limits?: ResourceLimits } }).config;
  const effective: T = {
    ...options,
    // An explicit network choice of the caller stands (allow answered the network prompt above).
    network: options.network === 'deny' || options.network === 'allow' ? options.network : auth.network,
    allowWrite: [...new Set([...(options.allowWrite ?? []), ...extraWrite])],
    denyRead: [...new Set([...(options.denyRead ?? []), ...denyReadNow])],
    [DENY_READ_IF_APPEARS]: denyReadLater,
    denyWrite: [...new Set([...(options.denyWrite ?? []), ...lists.denyWrite.filter((path) => existsSync(path))])],
    envPass: [...new Set([...(options.envPass ?? []), ...(config?.envPass ?? [])])],
    // The config's caps, under the ones the caller gave (an explicit option or flag stands).
    ...(config?.limits === undefined || Object.keys(config.limits).length === 0 ? {} : { limits: mergeLimits(config.limits, options.limits) }),
  };
  return { options: effective, cleanup: auth.cleanup };
}
