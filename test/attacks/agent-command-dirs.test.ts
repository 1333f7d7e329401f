// Attack: a sandboxed command plants what an agent on the host runs later without asking, through
// files other than settings: Gemini CLI project commands (`.gemini/commands/*.toml`, whose `!{...}`
// runs in a shell when the command is invoked, and which shadow the user's commands of the same
// name) and its `.env` (loaded into its environment at start: NODE_OPTIONS reaches every Node
// program it starts); Claude Code skills and commands (the model invokes a skill by itself, its
// `` !`...` `` lines run before the model sees them, its `allowed-tools` lets them) and subagents
// (`hooks` in their front matter); Continue's workspace MCP server blocks (`.continue/mcpServers/`,
// commands it starts when it loads its configuration); dev container configurations
// (`initializeCommand` runs on the host when a folder used in a container is reopened). At the top of the workspace and below it. Fix: these
// directories are read-only when they exist; once the sandbox is gone, one the command created is
// removed, `.gemini/.env` is treated as the other config files, and the run fails with the
// violations. Each test runs in a real sandbox and then looks at the host.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { NESTED, payload, TOP, write } from '../helpers/tool-configs.js';


/** What Gemini CLI does with a `.gemini/.env` at start, for NODE_OPTIONS: a Node program it starts gets it. */
function startNodeAsGemini(envFile: string): void {
  if (!existsSync(envFile)) return;
  const line = readFileSync(envFile, 'utf8').split('\n').find((l) => l.startsWith('NODE_OPTIONS='));
  if (line === undefined) return;
  const value = line.slice('NODE_OPTIONS='.length).replace(/^'(.*)'$/, '$1');
  execFileSync(process.execPath, ['-e', '0'], { env: { ...process.env, NODE_OPTIONS: value }, stdio: 'ignore' });
}

const PLANTS = {
  '.gemini/commands/review.toml': 'gemini-command.toml',
  '.claude/skills/review/SKILL.md': 'claude-skill.md',
  '.claude/commands/review.md': 'claude-skill.md',
  '.claude/agents/helper.md': 'claude-agent.md',
  '.continue/mcpServers/evil.yaml': 'continue-mcp.yaml',
  '.devcontainer/devcontainer.json': 'devcontainer.json',
} as const;
/** The directory each planted file makes the command's own (what the check removes and reports). */
const DIRS = ['.gemini/commands', '.claude/skills', '.claude/commands', '.claude/agents', '.continue/mcpServers', '.devcontainer'];

test('the .gemini/.env vector runs its command in a Node program started with it (the test below is not vacuous)', () => {
  const t = makeTree();
  try {
    const env = join(t.base, 'gemini.env');
    writeFileSync(env, payload(t, TOP['.gemini/.env']));
    startNodeAsGemini(env);
    assert.ok(existsSync(join(t.outside, 'ran')));
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: Gemini commands and .env, Claude skills, commands and subagents, Continue MCP servers, dev containers planted at the top and below: removed, reported, the run fails', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'packages', 'app'), { recursive: true });
    const files: Record<string, string> = { '.gemini/.env': payload(t, TOP['.gemini/.env']), 'packages/app/.gemini/.env': payload(t, TOP['.gemini/.env']) };
    for (const [file, vector] of Object.entries(PLANTS)) {
      files[file] = payload(t, NESTED[vector]);
      files[`packages/app/${file}`] = payload(t, NESTED[vector]);
    }
    const r = await sh(t, `${Object.entries(files).map(([file, content]) => write(file, content)).join(' && ')} && echo written`);
    assert.match(r.stdout, /written/, 'the writes succeed inside the sandbox (nothing was created on the host to stop them)');
    for (const file of Object.keys(files)) assert.not.ok(existsSync(join(t.ws, ...file.split('/'))), `${file} is gone after the run`);
    const expected = ['.gemini/.env', 'packages/app/.gemini/.env', ...DIRS, ...DIRS.map((dir) => `packages/app/${dir}`)].map((file) => join(t.ws, ...file.split('/')));
    assert.equal([...r.protectedPathViolations].sort(), expected.sort());
    const scopes = r.denials.filter((d) => d.capability.kind === 'protected_metadata').map((d) => d.capability.scope ?? '');
    assert.equal(scopes.sort(), expected.sort());
    assert.is(r.exitCode, 1);
    // The user starts Gemini CLI at the top and in the package: nothing of the command's runs.
    startNodeAsGemini(join(t.ws, '.gemini', '.env'));
    startNodeAsGemini(join(t.ws, 'packages', 'app', '.gemini', '.env'));
    assert.not.ok(existsSync(join(t.outside, 'ran')), 'no marker: nothing planted ran');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: existing commands, skills and subagents (top and below) cannot be changed or added to; an existing .gemini/.env changed is put back', async () => {
  const t = makeTree();
  try {
    const mine: Record<string, string> = { 'packages/app/.gemini/.env': 'GEMINI_MODEL=mine\n' };
    for (const file of Object.keys(PLANTS)) {
      mine[file] = `mine: ${file}\n`;
      mine[`packages/app/${file}`] = `mine: ${file}\n`;
    }
    for (const [file, content] of Object.entries(mine)) {
      const path = join(t.ws, ...file.split('/'));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
    }
    const attempts = Object.entries(PLANTS).flatMap(([file, vector]) => [file, `packages/app/${file}`].flatMap((at) => [
      `${write(at, payload(t, NESTED[vector]))} && echo changed:${at}`,
      `${write(`${dirname(at)}/extra.md`, payload(t, NESTED[vector]))} && echo added:${at}`,
    ]));
    const r = await sh(t, [...attempts, write('packages/app/.gemini/.env', payload(t, TOP['.gemini/.env'])), 'echo done'].join('; '));
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /changed:|added:/, 'the existing directories are read-only during the run');
    for (const [file, content] of Object.entries(mine)) assert.is(readFileSync(join(t.ws, ...file.split('/')), 'utf8'), content, `${file} is as it was`);
    assert.equal(r.protectedPathViolations, [join(t.ws, 'packages', 'app', '.gemini', '.env')]);
    assert.is(r.exitCode, 1);
    startNodeAsGemini(join(t.ws, 'packages', 'app', '.gemini', '.env'));
    assert.not.ok(existsSync(join(t.outside, 'ran')));
  } finally {
    t.cleanup();
  }
});

test.run();
