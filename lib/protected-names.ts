// SPDX-License-Identifier: MIT
// The workspace metadata a sandboxed command may never create or change: agent configuration
// (.zero, .agents) that the host reads and acts on later, and the files through which coding
// agents and editors on the host start programs. One list for the plan, the engine, the reports
// and the probes. (.git has its own finer rules: git-guard.ts, git-check.ts.)
import { join, sep } from 'node:path';

import { isCleanAbsolute } from './path-within.js';

/** Directories in every write root that stay read-only (or are removed when created). */
export const PROTECTED_METADATA_NAMES: readonly string[] = ['.zero', '.agents'];

/**
 * Files (relative to a write root, `/`-separated) that a coding agent or editor on the host loads
 * from the project it is opened in and then runs programs from, without anyone running that file
 * by hand. Agents and users edit them through the agent's own file tools (outside the sandbox); a
 * sandboxed shell command may neither create nor change them: the existing ones are read-only
 * during the run, and once it has ended whatever it created or changed there is removed or put
 * back (tool-configs.ts). Only these files: the rest of `.vscode/`, `.claude/` (commands, agents,
 * CLAUDE.md) and the like stays writable.
 *
 * They are not protected segments of the permission engine (PROTECTED_METADATA_NAMES are): the
 * engine's segments are whole top-level directories with the reference behaviour, and the
 * directories holding these files are everyday project files.
 */
export const AGENT_TOOL_CONFIG_FILES: readonly string[] = [
  // Claude Code: project and local settings (`hooks` run commands on tool and session events,
  // `statusLine` and `apiKeyHelper` are commands,
  // `enableAllProjectMcpServers` starts the servers of .mcp.json unasked).
  '.claude/settings.json',
  '.claude/settings.local.json',
  // Claude Code's (and Copilot's portable) project MCP servers: `mcpServers.*.command` is started.
  '.mcp.json',
  // Cursor: project MCP servers (`mcpServers.*.command`) and project hooks (`hooks.*[].command`).
  '.cursor/mcp.json',
  '.cursor/hooks.json',
  // Gemini CLI: project settings (`mcpServers.*.command`; `tools.discoveryCommand` and
  // `tools.callCommand` are commands it runs), and its own `.env`, loaded into its environment
  // at start (never filtered, unlike a plain `.env`): `NODE_OPTIONS=--require ...` reaches every
  // Node program it starts, other variables point it at settings or programs of the command's.
  '.gemini/settings.json',
  '.gemini/.env',
  // Codex: project config, read in a trusted project (`mcp_servers.*.command` is started).
  '.codex/config.toml',
  // VS Code (and its forks): tasks (`runOptions.runOn: folderOpen` runs one when the folder is
  // opened), launch configurations (`program`, `runtimeExecutable`, `preLaunchTask`), workspace
  // MCP servers (`servers.*.command`) and workspace settings, where many keys name an executable
  // (`terminal.integrated.profiles.*`, `python.defaultInterpreterPath`, `git.path`, extension
  // tool paths): the whole file, since extensions add such keys.
  '.vscode/tasks.json',
  '.vscode/launch.json',
  '.vscode/mcp.json',
  '.vscode/settings.json',
  // Zed: project settings (`lsp.*.binary.path` and `arguments` start a language server when a
  // file of that language is opened; `terminal.shell`) and project tasks (`command`).
  '.zed/settings.json',
  '.zed/tasks.json',
  // aider: `lint-cmd` and `test-cmd` are run after each edit with `auto-lint` / `auto-test`.
  '.aider.conf.yml',
  // Dev containers (VS Code, the devcontainer CLI): `initializeCommand` runs on the host before
  // the container is created and at every start, so reopening a folder already used in a
  // container runs it without a question. (`.devcontainer/` itself is in AGENT_TOOL_CONFIG_DIRS.)
  '.devcontainer.json',
];

/**
 * Directories (relative to a write root) whose whole content a coding agent loads and runs from.
 * Under the same rule as AGENT_TOOL_CONFIG_FILES: read-only when they exist, removed when the
 * command created one.
 */
export const AGENT_TOOL_CONFIG_DIRS: readonly string[] = [
  // Gemini CLI workspace extensions: `<name>/gemini-extension.json` names MCP server commands,
  // started at each session, and the extension's own files are what they run.
  '.gemini/extensions',
  // Gemini CLI project commands (`*.toml`): a prompt's `!{...}` runs in a shell when the command
  // is invoked, and a project command shadows the user's own command of the same name.
  '.gemini/commands',
  // Claude Code skills and commands (one mechanism): the model invokes a skill by itself when its
  // description fits, its `` !`...` `` lines run in a shell before the model sees the text, and
  // its `allowed-tools` lets them (and the model) run without asking.
  '.claude/skills',
  '.claude/commands',
  // Claude Code subagents, delegated to by the model: their front matter carries `hooks`
  // (commands run on tool events), `mcpServers` (commands started) and `permissionMode`.
  '.claude/agents',
  // Continue: MCP server blocks of the workspace (YAML or JSON), whose commands it starts when it
  // loads its configuration.
  '.continue/mcpServers',
  // Dev container configurations (`devcontainer.json`, one per subdirectory when there are
  // several, and the Dockerfile and compose files beside them): `initializeCommand` runs on the
  // host, and a compose file can mount any host directory into the container.
  '.devcontainer',
];

/** AGENT_TOOL_CONFIG_FILES and AGENT_TOOL_CONFIG_DIRS relative to a write root, with this OS's separator. */
let relativeConfigPaths: string[] | undefined;

/** AGENT_TOOL_CONFIG_FILES and AGENT_TOOL_CONFIG_DIRS in a write root, as paths of this OS. */
export function agentToolConfigPaths(root: string): string[] {
  relativeConfigPaths ??= [...AGENT_TOOL_CONFIG_FILES, ...AGENT_TOOL_CONFIG_DIRS].map((file) => file.split('/').join(sep));
  // Under a clean root, concatenation gives what join() would (a plan of many roots asks often).
  if (isCleanAbsolute(root)) {
    const prefix = root === sep ? sep : root + sep;
    return relativeConfigPaths.map((file) => prefix + file);
  }
  return relativeConfigPaths.map((file) => join(root, file));
}

/**
 * How the repository scan (which walks every directory of the workspace anyway) finds the same
 * configs below the top of a write root: an editor or agent opened on `packages/app` reads
 * `packages/app/.vscode/tasks.json` as it reads the workspace's own, and a VS Code workspace file
 * (`*.code-workspace`, anywhere) carries `tasks` and `settings` that run the same way. The scan
 * reports the entries so named (the first component of each protected path, and workspace files);
 * the guard then notes the protected paths below each (tool-configs.ts).
 *
 * Not reported below a `node_modules` directory: package managers write there what packages ship
 * (many publish their `.vscode/`), and nobody opens an editor or agent on a dependency's folder
 * without choosing to.
 */
export const NESTED_CONFIG_SCAN = {
  names: [...new Set([...AGENT_TOOL_CONFIG_FILES, ...AGENT_TOOL_CONFIG_DIRS].map((file) => file.split('/')[0] as string))],
  suffixes: ['.code-workspace'],
  skip: ['node_modules'],
  /** Entries reported per scan, at most: beyond it the run is refused (the check could not cover them). */
  max: 4096,
} as const;

/** Whether a name the scan reported is a VS Code workspace file (a protected file itself). */
export function isWorkspaceFile(name: string): boolean {
  return NESTED_CONFIG_SCAN.suffixes.some((suffix) => name.length > suffix.length && name.toLowerCase().endsWith(suffix));
}
