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

/**
 * A plain `.env` (in every directory of a write root) stays writable: it is an everyday project
 * file that setup scripts write. But Gemini CLI loads the nearest one (walking up from its working
 * directory, when there is no `.gemini/.env`) into its own environment in a trusted folder, and
 * every MCP server and shell command it starts inherits it. So after the run a change that adds a
 * line naming one of EXEC_ENV_NAMES (or a name starting with one of EXEC_ENV_PREFIXES) is undone,
 * and other changes are kept (env-files.ts).
 */
export const ENV_FILE_NAME = '.env';

/**
 * Environment variables through which a program (or one it starts) runs code, loads code or
 * settings from elsewhere, or picks the program it runs. Matched case-insensitively (Windows
 * environment names are). Not on it: everyday keys (API keys, DATABASE_URL, PORT, NODE_ENV).
 */
export const EXEC_ENV_NAMES: readonly string[] = [
  // Node.js: options of every node process (`--require`, `--import`), and where modules resolve.
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'ELECTRON_RUN_AS_NODE',
  // Shells: files sourced at start (`BASH_ENV` for `bash -c`, `ENV` for sh), code run at each
  // prompt or trace line, options (`xtrace` with PS4), the startup directory of zsh, the shell
  // tools start.
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'ZDOTDIR',
  'SHELL',
  // Which program a name runs, and where programs look for their own configs.
  'PATH',
  'PATHEXT',
  'COMSPEC',
  'HOME',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  // Programs tools start for the user: editors, pagers, browsers, password prompts.
  'EDITOR',
  'VISUAL',
  'PAGER',
  'MANPAGER',
  'LESSOPEN',
  'LESSCLOSE',
  'BROWSER',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  // Python, Perl, Ruby: code run at start and where modules load from.
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  // The JVM and .NET: agents and options of every JVM, startup hooks and profilers of .NET.
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'DOTNET_STARTUP_HOOKS',
  'DOTNET_ADDITIONAL_DEPS',
  // Gemini CLI itself: settings files it loads (MCP server commands), where its home and trusted
  // folders are, whether the workspace is trusted, the system prompt file it reads or writes,
  // its sandbox (`SANDBOX` set means "already inside one": none is started), and the commands
  // it starts for its IDE connection and sandbox proxy.
  'GEMINI_SYSTEM_MD',
  'GEMINI_WRITE_SYSTEM_MD',
  'SANDBOX',
  'SEATBELT_PROFILE',
  'BUILD_SANDBOX',
];

/** Prefixes of EXEC_ENV_NAMES' kind: a whole family of variables, matched as the names are. */
export const EXEC_ENV_PREFIXES: readonly string[] = [
  // The dynamic loaders (Linux `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`; macOS `DYLD_INSERT_LIBRARIES`).
  'LD_',
  'DYLD_',
  // Exported bash functions run in every bash that starts.
  'BASH_FUNC_',
  // git: `GIT_SSH_COMMAND`, `GIT_EXEC_PATH`, `GIT_PAGER`, `GIT_EDITOR`, `GIT_ASKPASS`, and
  // `GIT_CONFIG_*` (any config key, hence any hook path, pager or filter driver).
  'GIT_',
  // .NET profilers loaded into every process (`CORECLR_PROFILER_PATH`, `COR_PROFILER_PATH`).
  'CORECLR_',
  'COR_',
  // npm, pnpm and yarn settings from the environment (`npm_config_script_shell`,
  // `npm_config_node_options`, yarn's `YARN_YARN_PATH`): the programs their scripts run in.
  'NPM_CONFIG_',
  'YARN_',
  // XDG base directories: where programs load their own configs (git, shells, editors).
  'XDG_',
  // Gemini CLI's own settings paths, trust and IDE server command (`GEMINI_CLI_HOME`,
  // `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, `GEMINI_CLI_TRUST_WORKSPACE`,
  // `GEMINI_CLI_IDE_SERVER_STDIO_COMMAND`), its sandbox command, image and proxy command
  // (`GEMINI_SANDBOX*`), and the flags, mounts and environment of that sandbox (`SANDBOX_*`).
  'GEMINI_CLI_',
  'GEMINI_SANDBOX',
  'SANDBOX_',
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
 * reports the entries so named (the first component of each protected path, workspace files, and
 * every plain `.env`, whose content is checked: ENV_FILE_NAME); the guard then notes the protected
 * paths below each (tool-configs.ts).
 *
 * Not reported below a `node_modules` directory: package managers write there what packages ship
 * (many publish their `.vscode/`), and nobody opens an editor or agent on a dependency's folder
 * without choosing to.
 */
export const NESTED_CONFIG_SCAN = {
  names: [...new Set([...AGENT_TOOL_CONFIG_FILES, ...AGENT_TOOL_CONFIG_DIRS].map((file) => file.split('/')[0] as string)), ENV_FILE_NAME],
  suffixes: ['.code-workspace'],
  skip: ['node_modules'],
  /** Entries reported per scan, at most: beyond it the run is refused (the check could not cover them). */
  max: 4096,
} as const;

/** Whether a name the scan reported is a VS Code workspace file (a protected file itself). */
export function isWorkspaceFile(name: string): boolean {
  return NESTED_CONFIG_SCAN.suffixes.some((suffix) => name.length > suffix.length && name.toLowerCase().endsWith(suffix));
}
