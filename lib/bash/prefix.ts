// SPDX-License-Identifier: MIT
// Command-prefix approvals: launcher-name normalization, validation, proposal and
// matching. An approved prefix only means "do not ask again": the command still runs sandboxed.
import { isKnownSafeSegment } from './known-safe.js';
import { parseShell, type ShNode } from './parse.js';
import { COMMAND_KEYS } from './risk.js';

const BANNED_SUGGESTIONS = new Set([
  'python3', 'python3 -', 'python3 -c', 'python', 'py', 'py -3', 'pythonw', 'pyw', 'pypy', 'pypy3', 'git', 'bash',
  'bash -lc', 'sh', 'sh -c', 'sh -lc', 'zsh', 'zsh -lc', '/bin/zsh', '/bin/zsh -lc', '/bin/bash', '/bin/bash -lc',
  'pwsh', 'pwsh -command', 'pwsh -c', 'powershell', 'powershell -command', 'powershell -c', 'powershell.exe',
  'powershell.exe -command', 'powershell.exe -c', 'env', 'sudo', 'node', 'node -e', 'perl', 'perl -e', 'ruby',
  'ruby -e', 'php', 'php -r', 'lua', 'lua -e', 'osascript',
]);

const BANNED_LAUNCHERS = new Set([
  // shells
  'bash', 'sh', 'zsh', 'dash', 'ash', 'ksh', 'csh', 'tcsh', 'fish', 'busybox', 'pwsh', 'powershell', 'cmd', 'wsl',
  // privilege and launch wrappers
  'env', 'sudo', 'sudoedit', 'doas', 'su', 'run0', 'osascript', 'command', 'eval', 'exec', 'time', 'find', 'xargs',
  'timeout', 'nice', 'nohup', 'watch', 'setsid', 'stdbuf', 'ionice',
  // remote and build launchers
  'ssh', 'make',
  // package runners
  'npm', 'npx', 'pnpm', 'yarn', 'bunx', 'uv', 'uvx',
  // interpreters
  'python', 'py', 'pythonw', 'pyw', 'pypy', 'node', 'nodejs', 'perl', 'ruby', 'php', 'lua', 'deno', 'bun',
]);

/**
 * Reduces a launcher spelling before the deny list is checked: lower-case, trailing dots/spaces,
 * one executable suffix, a build suffix, CPython ABI letters after a digit, version groups.
 * `python3.11` → `python3`, `node-nightly` → `node`, `python3-config` stays.
 */
export function normalizeLauncherName(name: string): string {
  let value = name.toLowerCase().replace(/[. ]+$/, '');
  value = value.replace(/(.)\.(?:exe|cmd|bat|com|ps1)$/, '$1');
  value = value.replace(/(.)-(?:dbg|debug|static|nightly|preview|beta)$/, '$1');
  value = value.replace(/(\d)[mdut]+$/, '$1');
  for (let previous = ''; previous !== value; ) {
    previous = value;
    value = value.replace(/(.)[.-]\d+$/, '$1');
  }
  return value;
}

/** The outcome of validating a command prefix. */
export type PrefixValidation = { ok: true; prefix: string[] } | { ok: false; reason: string };

const FORBIDDEN_CHARS = /[\0\r\n*?[\]{}`]|\$\(/;

/** Validates (and trims) a command prefix proposed for approval. */
export function validateCommandPrefix(prefix: readonly unknown[]): PrefixValidation {
  if (!Array.isArray(prefix) || prefix.length === 0) return { ok: false, reason: 'the prefix is empty' };
  const tokens: string[] = [];
  for (const [index, raw] of prefix.entries()) {
    if (typeof raw !== 'string') return { ok: false, reason: `token ${index + 1} is not a string` };
    const token = raw.trim();
    if (token === '') return { ok: false, reason: `token ${index + 1} is empty` };
    if (FORBIDDEN_CHARS.test(token)) return { ok: false, reason: `token ${JSON.stringify(token)} contains a control, glob or substitution character` };
    tokens.push(token);
  }
  const first = tokens[0] as string;
  if (/[/\\:~]/.test(first)) return { ok: false, reason: `the program ${JSON.stringify(first)} must be a bare name, not a path` };
  const launcher = normalizeLauncherName(first);
  const raw = tokens.join(' ').toLowerCase();
  const normalized = [launcher, ...tokens.slice(1)].join(' ').toLowerCase();
  if (BANNED_SUGGESTIONS.has(raw) || BANNED_SUGGESTIONS.has(normalized)) {
    return { ok: false, reason: `"${tokens.join(' ')}" would approve arbitrary code` };
  }
  const bare = launcher.replace(/\d+$/, '');
  if (BANNED_LAUNCHERS.has(launcher) || BANNED_LAUNCHERS.has(bare)) {
    return { ok: false, reason: `${first} is a shell, interpreter, wrapper or launcher; approving it would approve arbitrary commands` };
  }
  return { ok: true, prefix: tokens };
}

/** Whether a prefix must be refused as an approval. */
export function isUnsafePrefix(prefix: readonly unknown[]): boolean {
  return !validateCommandPrefix(prefix).ok;
}

const GLOB = /[*?[\]{}\\$`'"]/;

function statementSegments(node: ShNode, source: string, out: string[][]): boolean {
  switch (node.type) {
    case 'list':
    case 'pipeline':
      for (const child of node.children) {
        if (child.type === '&&' || child.type === '||' || child.type === '|') continue;
        if (!statementSegments(child, source, out)) return false;
      }
      return true;
    case 'command': {
      const argv: string[] = [];
      for (const child of node.children) {
        const word = child.type === 'command_name' ? child.children[0] : child;
        if (word === undefined || (word.type !== 'word' && word.type !== 'number') || word.children.length > 0) return false;
        const text = source.slice(word.start, word.end);
        if (GLOB.test(text)) return false;
        argv.push(text);
      }
      out.push(argv);
      return argv.length > 0;
    }
    default:
      return false;
  }
}

/**
 * Splits a command into the argv of each segment when it is "safely segmentable": only plain
 * calls joined by `;`, `&&`, `||` or `|`, with bare literal words (no quotes, expansions, globs,
 * redirections, assignments, negation or background jobs). Otherwise undefined.
 */
export function splitSafeSegments(command: string): string[][] | undefined {
  const parsed = parseShell(command);
  if (!parsed.ok) return undefined;
  const out: string[][] = [];
  for (const child of parsed.root.children) {
    if (child.type === ';') continue;
    if (!statementSegments(child, command, out)) return undefined;
  }
  return out.length > 0 ? out : undefined;
}

function startsWith(argv: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= argv.length && prefix.every((token, index) => argv[index] === token);
}

function commandText(args: Record<string, unknown> | undefined): string | undefined {
  if (args === undefined || args === null || typeof args !== 'object') return undefined;
  for (const key of COMMAND_KEYS) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** Input of {@link proposeCommandPrefix}. */
export interface PrefixProposalInput {
  /** The tool; only `bash` and `exec_command` get proposals. */
  toolName: string;
  /** Tool arguments: `command`/`cmd`, and optionally the model's `prefix_rule` (string array). */
  args: Record<string, unknown>;
  /** Platform whose known-safe list applies; default: this one. */
  platform?: NodeJS.Platform;
}

/** The prefix to offer the user for approval, or null when none is safe to offer. */
export function proposeCommandPrefix(input: PrefixProposalInput): string[] | null {
  const tool = typeof input?.toolName === 'string' ? input.toolName.trim().toLowerCase() : '';
  if (tool !== 'bash' && tool !== 'exec_command') return null;
  // process.platform default: which commands are read-only differs per OS (cmd.exe built-ins vs POSIX tools).
  const platform = input.platform ?? process.platform;
  const command = commandText(input.args);
  if (command === undefined) return null;
  const segments = splitSafeSegments(command);
  if (segments === undefined) return null;
  const requested = input.args.prefix_rule;
  if (requested !== undefined && requested !== null) {
    if (!Array.isArray(requested)) return null;
    const valid = validateCommandPrefix(requested);
    if (!valid.ok) return null;
    const covered = segments.filter((segment) => startsWith(segment, valid.prefix));
    if (covered.length === 0) return null;
    const othersSafe = segments.every((segment) => startsWith(segment, valid.prefix) || isKnownSafeSegment(segment, platform));
    return othersSafe ? valid.prefix : null;
  }
  const unsafe = segments.filter((segment) => !isKnownSafeSegment(segment, platform));
  if (unsafe.length > 1) return null;
  const candidate = unsafe[0] ?? segments[0];
  if (candidate === undefined) return null;
  const valid = validateCommandPrefix(candidate);
  return valid.ok ? valid.prefix : null;
}

/** Approved prefixes to match against. Invalid prefixes never match. */
export interface PrefixGrants {
  /** Prefixes persisted in the grants file. */
  persistent?: readonly (readonly string[])[];
  /** Prefixes approved for this session. */
  session?: readonly (readonly string[])[];
}

/** The outcome of matching a command against approved prefixes. */
export type PrefixMatch = { matched: true; prefix: string[]; session: boolean } | { matched: false };

/**
 * Whether every segment of the command is covered by an approved prefix (persistent first, then
 * session) or is known-safe, with at least one real prefix match.
 */
export function matchCommandPrefix(command: string, prefixes: PrefixGrants, options: { platform?: NodeJS.Platform } = {}): PrefixMatch {
  // process.platform default: which commands are read-only differs per OS (cmd.exe built-ins vs POSIX tools).
  const platform = options.platform ?? process.platform;
  const segments = typeof command === 'string' ? splitSafeSegments(command) : undefined;
  if (segments === undefined) return { matched: false };
  const valid = (list: PrefixGrants['persistent']): string[][] =>
    (list ?? []).flatMap((prefix) => {
      const result = validateCommandPrefix(prefix);
      return result.ok ? [result.prefix] : [];
    });
  const persistent = valid(prefixes?.persistent);
  const session = valid(prefixes?.session);
  let first: { prefix: string[]; session: boolean } | undefined;
  for (const segment of segments) {
    const hit = persistent.find((prefix) => startsWith(segment, prefix));
    const sessionHit = hit === undefined ? session.find((prefix) => startsWith(segment, prefix)) : undefined;
    if (hit !== undefined) first ??= { prefix: hit, session: false };
    else if (sessionHit !== undefined) first ??= { prefix: sessionHit, session: true };
    else if (!isKnownSafeSegment(segment, platform)) return { matched: false };
  }
  return first === undefined ? { matched: false } : { matched: true, ...first };
}
