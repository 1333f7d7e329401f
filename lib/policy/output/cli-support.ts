// SPDX-License-Identifier: MIT
// What the check/policy/grants subcommands share: building the engine of the current workspace
// with the user's config and grants, and printing config warnings and the migration notice once.
import { warnParserFailure, type CliIo } from '../../cli/io.js';
import { createEngine, type EngineWithConfig } from '../engine/create-engine.js';

/** The engine for the CLI: cwd workspace, user + project config, default grants file and backend. */
export async function openCliEngine(io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<EngineWithConfig> {
  const engine = await createEngine({ workspaceRoot: process.cwd(), env });
  // createEngine loaded the shell parser; a failure makes every shell request ask, so say why.
  const parser = (await import('../../bash/parse.js')).parserStatus();
  if (parser.state === 'failed') warnParserFailure(io, 'check', parser.reason);
  for (const warning of engine.config?.warnings ?? []) io.stderr(`warning: ${warning}\n`);
  const notice = engine.consumeMigrationNotice();
  if (notice !== undefined) io.stderr(`${notice}\n`);
  return engine;
}
