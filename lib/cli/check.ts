// SPDX-License-Identifier: MIT
// `zero-sandbox check <tool>`: what the engine would decide for a hypothetical request, and why.
import { resolve } from 'node:path';

import { resolveScope, deriveScope } from '../policy/grants/grant-match.js';
import { allowHint } from '../policy/approval/authorize.js';
import { openCliEngine } from '../policy/output/cli-support.js';
import { FILE_MUTATION_TOOLS, SHELL_TOOLS } from '../policy/engine/constants.js';
import { buildCheckReport, formatCheckText } from '../policy/output/report.js';
import type { Grant } from '../policy/schema.js';
import { flagBool, flagString, parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';

export const CHECK_HELP = `Usage: zero-sandbox check <tool> [--side-effect read|write|shell|network|none]
                          [--path P] [--command 'CMD'] [--reason T] [--json]

Evaluates a hypothetical tool request in the current workspace with the user's config and grants
(permission mode "ask", tool permission "prompt") and prints the decision, risk, block and
matching grant.

Options:
  --side-effect S   read, write, shell, network or none; default: shell with --command (as
                    \`run\` evaluates a command) or for a shell tool (bash), write for a file
                    tool that changes files (write_file, edit_file, apply_patch), else read
  --path P          the path argument of the request
  --command CMD     the shell command of the request
  --reason T        the tool's reason text
  --json            print the report as JSON
  -h, --help        show this help

Exit status: 0 when the report was printed, 2 for usage errors, 3 for config errors.
`;

const SIDE_EFFECTS = ['read', 'write', 'shell', 'network', 'none'];

export async function runCheck(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, {
    flags: [
      { name: 'side-effect', type: 'string' },
      { name: 'path', type: 'string' },
      { name: 'command', type: 'string' },
      { name: 'reason', type: 'string' },
      { name: 'json', type: 'boolean' },
    ],
    maxPositionals: 1,
  });
  if (args.help) {
    io.stdout(CHECK_HELP);
    return 0;
  }
  const tool = args.positionals[0]?.trim() ?? '';
  if (tool === '') throw new UsageError('tool name is required: zero-sandbox check <tool> [flags]');
  if (!/^[A-Za-z0-9._-]+$/.test(tool)) throw new UsageError(`invalid tool name "${tool}" (letters, digits, ".", "_" and "-" only)`);
  // A command is evaluated as `run` evaluates it: a shell request.
  const sideEffect = flagString(args, 'side-effect') ?? defaultSideEffect(tool, flagString(args, 'command') !== undefined);
  if (!SIDE_EFFECTS.includes(sideEffect)) throw new UsageError(`invalid --side-effect "${sideEffect}": must be one of ${SIDE_EFFECTS.join(', ')}`);
  const path = flagString(args, 'path');
  if (path !== undefined && path.trim() === '') throw new UsageError('--path requires a non-empty path');
  const command = flagString(args, 'command');
  if (command !== undefined && command.trim() === '') throw new UsageError('--command requires a non-empty command');
  const reason = flagString(args, 'reason');

  const engine = await openCliEngine(io);
  const requestArgs: Record<string, unknown> = {};
  if (path !== undefined) requestArgs.path = path;
  if (command !== undefined) requestArgs.command = command;
  const request = { toolName: tool, sideEffect, permissionMode: 'ask', args: requestArgs, ...(reason === undefined ? {} : { reason }) };
  const decision = engine.evaluate(request);
  const grantsError = engine.grantsError();
  let grant: Grant | undefined;
  if (grantsError === undefined) {
    const scope = path === undefined ? engine.workspaceRoot : resolveScope(deriveScope(tool, { path }), engine.workspaceRoot).raw || resolve(path);
    grant = engine.lookupGrant(tool, scope);
  }
  const report = buildCheckReport({
    tool,
    policy: engine.effectivePolicy(),
    backend: engine.backend(),
    workspaceRoot: engine.workspaceRoot,
    decision,
    grant,
    grantsError,
  });
  if (flagBool(args, 'json')) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  // What would let a refused or prompting request through, as `run` says it.
  const hint = decision.action === 'allow' ? '' : allowHint(decision, 'cli', true);
  io.stdout(`${formatCheckText(report)}${hint === '' ? '' : `${hint}\n`}`);
  return 0;
}

/** The side effect a tool's request has when --side-effect is not given, as the engine's callers send it. */
function defaultSideEffect(tool: string, hasCommand: boolean): string {
  if (hasCommand || SHELL_TOOLS.has(tool)) return 'shell';
  return FILE_MUTATION_TOOLS.has(tool) ? 'write' : 'read';
}
