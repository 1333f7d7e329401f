// SPDX-License-Identifier: MIT
// analyzeCommand/analyzeArgv: every simple command in a shell command, after wrappers and
// launchers, with the network, destructive, interactive and too-complex flags and their reasons.
import { loadShellParser, parserStatus, parseShell, parsesWanted, streamStatements, type ParserStatus, type ParseResult, type ShNode } from './parse.js';
import { destructiveReason, networkReason } from './rules.js';
import { interactiveMatch, type InteractiveMatch } from './interactive-rules.js';
import { resolveWords, SHELLS } from './resolve.js';
import { isDynamicNode, wordOf, type Word } from './words.js';
import type { AnalysisReasons, AnalyzeOptions, CommandAnalysis, SimpleCommand } from './types.js';

/** Launcher payloads nested deeper than this are reported as too complex. */
export const MAX_LAUNCHER_DEPTH = 8;

/** The analysis plus what only the classifier uses. */
export interface AnalysisDetail {
  /** The public analysis. */
  analysis: CommandAnalysis;
  /** Set when a download is piped into a shell or interpreter (structural check). */
  pipedInstaller: string | undefined;
  /** Flags found only in the error-recovered part of an unparseable command (fail-closed input). */
  recovered: { network?: string; destructive?: string };
  /** The first interactive match, with the command it was found in. */
  interactive: InteractiveMatch | undefined;
  /**
   * Some shell text was not read at all: the parser could not be loaded (or is not loaded yet), or
   * a limit (length, nesting, nodes, time) stopped it. Program names are then all there is to go on.
   */
  unread: boolean;
  /**
   * The top-level text with the quoted and heredoc text that programs which never run their
   * arguments receive blanked out (data, never a command), for the raw-text checks.
   */
  codeText: string | undefined;
}

/**
 * Programs that take quoted text as data and never run it as a command, so `echo "rm -rf /"` or a
 * commit message is not matched by the raw-text checks. Any other program (an interpreter, ssh,
 * docker, an unknown tool) keeps its quoted text visible to them.
 */
const DATA_PROGRAMS = new Set([
  'echo', 'printf', 'cat', 'grep', 'egrep', 'fgrep', 'rg', 'ag', 'ack', 'touch', 'mkdir', 'ls', 'wc', 'head', 'tail', 'sort', 'uniq',
  'cut', 'tr', 'tee', 'test', 'true', 'false', 'jq', 'column', 'logger', 'basename', 'dirname', 'realpath', 'stat', 'diff', 'cmp',
  'git', 'gh',
]);
const QUOTED = new Set(['string', 'raw_string', 'ansi_c_string', 'translated_string', 'heredoc_body']);
const CODE_INSIDE_QUOTES = new Set(['command_substitution', 'process_substitution']);

/** The ranges of a quoted node that are data: all of it but nested command or process substitutions. */
function dataRanges(node: ShNode, out: [number, number][]): void {
  let cursor = node.start;
  const visit = (parent: ShNode): void => {
    for (const child of parent.children) {
      if (CODE_INSIDE_QUOTES.has(child.type)) {
        if (child.start > cursor) out.push([cursor, child.start]);
        cursor = Math.max(cursor, child.end);
      } else {
        visit(child);
      }
    }
  };
  visit(node);
  if (node.end > cursor) out.push([cursor, node.end]);
}

/** Programs that run code from a file, stdin or their arguments (their input may be quoted text from elsewhere). */
const CODE_RUNNERS = new Set(['source', '.', 'eval', 'exec', 'xargs', 'parallel', 'ssh', 'docker', 'podman', 'kubectl', 'su', 'watch', 'script', 'make', 'awk', 'sed']);

function runsCode(command: SimpleCommand): boolean {
  return SHELLS.has(command.program) || STDIN_INTERPRETERS.test(command.program) || CODE_RUNNERS.has(command.program);
}

/** Whether a program's quoted arguments are data (git with `-c` can define a shell alias: not data). */
function takesQuotedData(command: SimpleCommand): boolean {
  if (!DATA_PROGRAMS.has(command.program)) return false;
  return command.program !== 'git' || !command.argv.some((arg) => arg === '-c' || arg.startsWith('--config-env') || arg.startsWith('alias.'));
}

const NOT_WORDS = new Set(['variable_assignment', 'file_redirect', 'herestring_redirect', 'heredoc_redirect', 'comment']);
const FETCHERS = new Set(['curl', 'wget', 'wget2', 'fetch', 'aria2c', 'iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod']);
const STDIN_INTERPRETERS = /^(?:python(?:\d+(?:\.\d+)*)?|py|node|nodejs|perl|ruby|php|pwsh|powershell|iex|invoke-expression)$/;

const DEV_NET = /\/dev\/(?:tcp|udp)\/[^/\s]*/;

/** The static text printed by `echo`/`printf` with literal arguments, or undefined. */
function echoedText(command: SimpleCommand): string | undefined {
  let args = command.argv.slice(1);
  if (command.program === 'echo') {
    while (args[0] !== undefined && /^-[neE]+$/.test(args[0])) args = args.slice(1);
    return args.join(' ');
  }
  if (command.program === 'printf') return args.join(' ').replace(/\\n/g, '\n');
  return undefined;
}

/** The static text of a heredoc body (expansions contribute nothing). */
function heredocText(body: ShNode, source: string): string {
  let text = '';
  let cursor = body.start;
  for (const child of body.children) {
    if (!isDynamicNode(child.type)) continue;
    text += source.slice(cursor, child.start);
    cursor = Math.max(cursor, child.end);
  }
  return text + source.slice(cursor, body.end);
}

function readsScriptFromStdin(command: SimpleCommand): boolean {
  const args = command.argv.slice(1);
  if (command.program === 'iex' || command.program === 'invoke-expression') return true;
  if (SHELLS.has(command.program)) {
    return args.every((arg) => arg.startsWith('-') || arg.startsWith('+')) || args.some((arg) => /^-[A-Za-z]*s[A-Za-z]*$/.test(arg));
  }
  if (!STDIN_INTERPRETERS.test(command.program)) return false;
  if (args.some((arg) => /^-(?:c|e|m|r|E|Command|command)$/.test(arg))) return false;
  const firstPositional = args.find((arg) => !arg.startsWith('-') || arg === '-');
  return firstPositional === undefined || firstPositional === '-';
}

interface WalkMark {
  commands: number;
  data: number;
  comments: number;
  reasons: AnalysisReasons;
  recovered: Walker['recovered'];
  pipedInstaller: string | undefined;
  interactive: InteractiveMatch | undefined;
  unread: boolean;
}

class Walker {
  readonly commands: SimpleCommand[] = [];
  readonly reasons: AnalysisReasons = {};
  readonly recovered: { network?: string; destructive?: string } = {};
  pipedInstaller: string | undefined;
  interactive: InteractiveMatch | undefined;
  unread = false;
  /** Data ranges of the top-level text (see {@link AnalysisDetail.codeText}). */
  readonly data: [number, number][] = [];
  /** Comments of the top-level text (never code, whatever else the command runs). */
  readonly comments: [number, number][] = [];
  private topSource: string | undefined;
  private readonly firstOf = new Map<ShNode, SimpleCommand>();

  constructor(private readonly platform: NodeJS.Platform) {}

  /** What the walk has found so far, for {@link rewind}. */
  private mark(): WalkMark {
    const { commands, data, comments, reasons, recovered, pipedInstaller, interactive, unread } = this;
    return { commands: commands.length, data: data.length, comments: comments.length, reasons: { ...reasons }, recovered: { ...recovered }, pipedInstaller, interactive, unread };
  }

  /** Forgets what the walk found after `mark`. */
  private rewind(mark: WalkMark): void {
    this.commands.length = mark.commands;
    this.data.length = mark.data;
    this.comments.length = mark.comments;
    for (const key of Object.keys(this.reasons) as (keyof AnalysisReasons)[]) delete this.reasons[key];
    Object.assign(this.reasons, mark.reasons);
    for (const key of Object.keys(this.recovered) as (keyof Walker['recovered'])[]) delete this.recovered[key];
    Object.assign(this.recovered, mark.recovered);
    this.pipedInstaller = mark.pipedInstaller;
    this.interactive = mark.interactive;
    this.unread = mark.unread;
    this.firstOf.clear();
  }

  tooComplex(reason: string): void {
    this.reasons.tooComplex ??= reason;
  }

  private add(command: SimpleCommand, words: readonly Word[], recovered: boolean): void {
    this.commands.push(command);
    const args = command.argv.slice(1);
    // A word built at run time is never taken as a literal flag or subcommand of an interactive form.
    const staticArgs = words.slice(1).map((word) => (word.dynamic ? '\u0000' : word.text));
    const network = networkReason(command.program, args, staticArgs);
    const destructive = destructiveReason(command.program, args);
    const bucket = recovered ? this.recovered : this.reasons;
    if (network !== undefined) bucket.network ??= network;
    if (destructive !== undefined) bucket.destructive ??= destructive;
    if (this.interactive === undefined || (!recovered && this.reasons.interactive === undefined)) {
      const match = interactiveMatch(command.program, staticArgs, this.platform);
      if (match !== undefined) {
        this.interactive ??= match;
        if (!recovered) this.reasons.interactive = `${match.command} needs an interactive terminal and would hang`;
      }
    }
  }

  /** Analyzes shell source (the top level or a launcher payload). */
  text(source: string, via: string[], depth: number, recovered: boolean): void {
    if (depth > MAX_LAUNCHER_DEPTH) {
      this.tooComplex(`launchers nested deeper than ${MAX_LAUNCHER_DEPTH} levels`);
      return;
    }
    if (source.trim() === '') return;
    const top = depth === 0 && via.length === 0;
    if (top) this.topSource = source;
    // A long script is walked statement by statement as it is read, and no tree of it is kept.
    const parsed = top ? this.stream(source, via, recovered) : parseShell(source);
    if (parsed === undefined) return;
    if (!parsed.ok) {
      if (parsed.unread === true) this.unread = true;
      const where = via.length === 0 ? '' : ` (in the script given to ${via[via.length - 1] as string})`;
      this.tooComplex(`${parsed.reason}${where}`);
      if (parsed.root !== undefined) this.walk(parsed.root, source, via, depth, true);
      return;
    }
    this.walk(parsed.root, source, via, depth, recovered);
  }

  /**
   * Walks the statements of a top-level script as {@link streamStatements} reads them; undefined
   * when they were all walked, else the parse to walk instead (the walk so far is forgotten).
   */
  private stream(source: string, via: string[], recovered: boolean): ParseResult | undefined {
    const mark = this.mark();
    const parsed = streamStatements(
      source,
      (statement) => {
        this.walk(statement, source, via, 0, recovered);
        // What the walk kept of the statement is needed only while it is walked.
        this.firstOf.clear();
      },
      () => this.rewind(mark),
    );
    if (parsed !== undefined) this.rewind(mark);
    return parsed;
  }

  private walk(node: ShNode, source: string, via: string[], depth: number, recovered: boolean): void {
    if (node.type === 'command') this.command(node, source, via, depth, recovered);
    // A comment is never run: blanked for the raw-text checks like quoted data.
    else if (node.type === 'comment' && depth === 0 && via.length === 0) this.comments.push([node.start, node.end]);
    for (const child of node.children) this.walk(child, source, via, depth, recovered);
    if (node.type === 'pipeline') this.pipeline(node, depth, recovered);
    else if (node.type === 'redirected_statement') this.redirects(node, source, depth, recovered);
    else if (node.type === 'file_redirect') {
      const target = DEV_NET.exec(source.slice(node.start, node.end));
      const bucket = recovered ? this.recovered : this.reasons;
      if (target !== null) bucket.network ??= `the redirect to ${target[0]}... opens a network connection`;
    }
  }

  /** Feeds a script given on stdin (heredoc or here-string) to a shell or interpreter as a payload. */
  private stdinScript(command: SimpleCommand, redirect: ShNode, source: string, depth: number, recovered: boolean): void {
    if (!SHELLS.has(command.program) || !readsScriptFromStdin(command)) return;
    const label = `${command.program} ${redirect.type === 'herestring_redirect' ? '<<<' : '<<'}`;
    const body = redirect.children.find((child) => child.type === 'heredoc_body');
    if (body !== undefined) {
      this.text(heredocText(body, source), [...command.via, label], depth + 1, recovered);
      return;
    }
    if (redirect.type !== 'herestring_redirect') return;
    const node = redirect.children.find((child) => child.type !== '<<<');
    if (node === undefined) return;
    const word = wordOf(node, source);
    if (!word.literal || (word.dynamic && word.text.trim() === '')) {
      this.tooComplex(`the script given to ${label} is built at run time and cannot be analyzed`);
      return;
    }
    this.text(word.text, [...command.via, label], depth + 1, recovered);
  }

  private redirects(node: ShNode, source: string, depth: number, recovered: boolean): void {
    const body = node.children[0];
    const command = body === undefined ? undefined : this.firstOf.get(body);
    if (command === undefined) return;
    const top = depth === 0 && takesQuotedData(command);
    for (const redirect of node.children.slice(1)) {
      if (redirect.type === 'heredoc_redirect' || redirect.type === 'herestring_redirect') this.stdinScript(command, redirect, source, depth, recovered);
      if (top) this.quotedData(redirect);
    }
  }

  private pipeline(node: ShNode, depth: number, recovered: boolean): void {
    let fetcher: string | undefined;
    let previous: SimpleCommand | undefined;
    for (const stage of node.children) {
      if (stage.type === '|' || stage.type === '|&') continue;
      const target: ShNode | undefined = stage.type === 'redirected_statement' ? stage.children[0] : stage;
      const command = target === undefined ? undefined : this.firstOf.get(target);
      if (command !== undefined && FETCHERS.has(command.program)) fetcher ??= command.program;
      else if (command !== undefined && readsScriptFromStdin(command)) {
        if (fetcher !== undefined) this.pipedInstaller ??= `${fetcher} output is piped into ${command.program}, which runs it as a script`;
        const script = previous === undefined || !SHELLS.has(command.program) ? undefined : echoedText(previous);
        if (script !== undefined) this.text(script, [...command.via, `${previous?.program ?? ''} | ${command.program}`], depth + 1, recovered);
      }
      previous = command;
    }
  }

  private command(node: ShNode, source: string, via: string[], depth: number, recovered: boolean): void {
    const words: Word[] = [];
    for (const child of node.children) {
      if (NOT_WORDS.has(child.type)) continue;
      if (child.type === 'command_name') {
        const inner = child.children[0];
        words.push(wordOf(inner ?? child, source));
      } else {
        words.push(wordOf(child, source));
      }
    }
    const first = this.words(words, via, depth, recovered);
    if (first === undefined) return;
    this.firstOf.set(node, first);
    const top = depth === 0 && takesQuotedData(first);
    for (const child of node.children) {
      if (child.type === 'herestring_redirect' || child.type === 'heredoc_redirect') this.stdinScript(first, child, source, depth, recovered);
      if (top) this.quotedData(child);
    }
  }

  /** Records the quoted parts of a word or redirect of a data program as data. */
  private quotedData(node: ShNode): void {
    if (QUOTED.has(node.type)) dataRanges(node, this.data);
    else if (node.type === 'concatenation' || node.type === 'heredoc_redirect' || node.type === 'herestring_redirect') {
      for (const child of node.children) this.quotedData(child);
    }
  }

  /** Resolves one word list (a command, an argv, or a find -exec payload). */
  words(words: readonly Word[], via: string[], depth: number, recovered: boolean): SimpleCommand | undefined {
    if (depth > MAX_LAUNCHER_DEPTH) {
      this.tooComplex(`launchers nested deeper than ${MAX_LAUNCHER_DEPTH} levels`);
      return undefined;
    }
    const res = resolveWords(words);
    const chain = res.wrappers.length === 0 ? via : [...via, ...res.wrappers];
    if (res.opaque !== undefined) this.tooComplex(res.opaque);
    let command: SimpleCommand | undefined;
    if (res.programIndex >= 0) {
      command = { program: res.program, argv: words.slice(res.programIndex).map((word) => word.text), via: chain };
      this.add(command, words.slice(res.programIndex), recovered);
    }
    for (const payload of res.payloads) this.text(payload.text, [...chain, payload.label], depth + 1, recovered);
    // `alias g=curl` runs nothing yet, but `g` runs curl once aliases expand: the value is analyzed.
    if (command?.program === 'alias') {
      for (const arg of command.argv.slice(1)) {
        const eq = arg.indexOf('=');
        if (eq > 0) this.text(arg.slice(eq + 1), [...chain, 'alias'], depth + 1, recovered);
      }
    }
    for (const nested of res.nested) this.words(nested.words, [...chain, nested.label], depth + 1, recovered);
    return command;
  }

  detail(): AnalysisDetail {
    const reasons: AnalysisReasons = {};
    if (this.reasons.network !== undefined) reasons.network = this.reasons.network;
    if (this.reasons.destructive !== undefined) reasons.destructive = this.reasons.destructive;
    if (this.reasons.interactive !== undefined) reasons.interactive = this.reasons.interactive;
    if (this.reasons.tooComplex !== undefined) reasons.tooComplex = this.reasons.tooComplex;
    return {
      analysis: {
        commands: this.commands,
        network: reasons.network !== undefined,
        destructive: reasons.destructive !== undefined,
        interactive: reasons.interactive !== undefined,
        tooComplex: reasons.tooComplex !== undefined,
        reasons,
      },
      pipedInstaller: this.pipedInstaller,
      recovered: this.recovered,
      interactive: this.interactive,
      unread: this.unread,
      codeText: this.codeText(),
    };
  }

  private codeText(): string | undefined {
    const source = this.topSource;
    // Data stays data only while nothing in the command could run it later: a script written by
    // `echo "..." > s.sh` and then run, or printed into a shell's stdin, is code.
    const ranges = this.commands.some(runsCode) ? [...this.comments] : [...this.data, ...this.comments];
    if (source === undefined || ranges.length === 0) return source;
    let out = '';
    let cursor = 0;
    for (const [start, end] of ranges.sort((a, b) => a[0] - b[0])) {
      if (end <= cursor) continue;
      const from = Math.max(start, cursor);
      // Blanked with spaces, so offsets and word boundaries stay where they were.
      out += source.slice(cursor, from) + ' '.repeat(end - from);
      cursor = end;
    }
    return out + source.slice(cursor);
  }
}

function safeDetail(run: (walker: Walker) => void, options: AnalyzeOptions | undefined): AnalysisDetail {
  // process.platform default: the shell and its commands' meaning are the host OS's.
  const walker = new Walker(options?.platform ?? process.platform);
  try {
    run(walker);
  } catch (error) {
    // The analyzer must never throw; an internal failure is reported as "too complex" (fail closed).
    walker.tooComplex(`the analyzer failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return walker.detail();
}

/** The analysis with the parts only the classifier needs. Never throws. */
export function analyzeCommandDetail(text: string, options?: AnalyzeOptions): AnalysisDetail {
  const source = typeof text === 'string' ? text : String(text);
  const words = plainWords(source);
  const detail = words !== undefined ? analyzeArgvDetail(words, options) : safeDetail((walker) => walker.text(source, [], 0, false), options);
  // Fail closed: once the parser is known to be broken, no shell string counts as fully analyzed.
  const status = parserStatus();
  if (status.state === 'failed' && !detail.analysis.tooComplex) {
    detail.analysis.tooComplex = true;
    detail.analysis.reasons.tooComplex = `the shell parser could not be loaded: ${status.reason}`;
  }
  if (status.state === 'failed') detail.unread = true;
  return detail;
}

// Characters that never change how bash splits or expands a word: no quotes, `$`, backquotes,
// backslashes, operators, redirections, groups, globs, `~`, `#`, `!` or newlines.
const PLAIN_TEXT = /^[A-Za-z0-9_\-./=:,@%+ \t]*$/;
const RESERVED_WORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc']);

/**
 * The words of a command string that bash would parse as exactly one simple command of literal
 * words, or undefined. Such a command is analyzed as argv, without loading tree-sitter; every other
 * string goes through the parser. (test/unit/bash-plain-fast-path.test.ts checks both agree.)
 */
export function plainWords(text: string): string[] | undefined {
  if (text.length > 4096 || !PLAIN_TEXT.test(text)) return undefined;
  const words = text.split(/[ \t]+/).filter((word) => word !== '');
  if (words.length === 0 || RESERVED_WORDS.has(words[0] as string)) return undefined;
  return words;
}

/** The analysis of an argv given without a shell; tree-sitter loads only for launcher payloads. */
export function analyzeArgvDetail(argv: readonly string[], options?: AnalyzeOptions): AnalysisDetail {
  return safeDetail((walker) => {
    const words = argv.map((text): Word => ({ text: String(text), dynamic: false, literal: true }));
    walker.words(words, [], 0, false);
  }, options);
}

/**
 * Analyzes a shell command on its tree-sitter-bash syntax tree: every simple command (after
 * wrappers and launchers), and the network/destructive/interactive/tooComplex flags with reasons.
 * Never throws; parse errors, limits and opaque payloads set `tooComplex`. Synchronous: a command
 * only tree-sitter can read is `tooComplex` until `await loadShellParser()` has run (the reason
 * says so); {@link analyzeShellCommand} awaits it itself.
 */
export function analyzeCommand(text: string, options?: AnalyzeOptions): CommandAnalysis {
  return analyzeCommandDetail(text, options).analysis;
}

/**
 * {@link analyzeCommand} that loads the shell parser first when the command needs it, so the
 * answer never depends on whether `loadShellParser()` was awaited. The misuse-proof entry point:
 * if the parser cannot be loaded, the answer is the fail-closed one (`tooComplex`, plus `network`
 * and `destructive` from program names), never "safe".
 */
export async function analyzeShellCommand(text: string, options?: AnalyzeOptions): Promise<CommandAnalysis> {
  await prepareShellParser(text);
  return analyzeCommand(text, options);
}

/** {@link analyzeCommand} for a command given as an argv array (no shell parsing of the argv itself). */
export function analyzeArgv(argv: readonly string[], options?: AnalyzeOptions): CommandAnalysis {
  return analyzeArgvDetail(argv, options).analysis;
}

/**
 * Loads the shell parser if analyzing `command` (a shell string, or an argv whose launcher
 * payloads are shell strings) needs it, so that the synchronous analysis that follows is complete.
 * Commands the analyzer reads without the parser leave it unloaded (the CLI's cold start).
 */
export async function prepareShellParser(command: string | readonly string[]): Promise<ParserStatus> {
  const status = parserStatus();
  if (status.state !== 'not_loaded') return status;
  const before = parsesWanted();
  if (typeof command === 'string') analyzeCommandDetail(command);
  else analyzeArgvDetail(command);
  return parsesWanted() === before ? status : loadShellParser();
}
