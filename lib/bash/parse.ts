// SPDX-License-Identifier: MIT
// The tree-sitter-bash wrapper (WebAssembly, through web-tree-sitter): loads the parser on demand, parses under size/time/depth limits, and
// copies the tree into plain objects so the analysis never calls into the native parser again.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { BoundedMemo } from '../bounded-memo.js';
import { fastParse, fastStream } from './fast-parse.js';
import { pastDeadline, startDeadline, type Deadline } from './parse-clock.js';
import { firstLine, GRAMMAR_PATH, installProblem } from './parser-files.js';
import { scriptCuts } from './split.js';
import type { ShNode } from './tree.js';

export type { ShNode } from './tree.js';
export { GRAMMAR_PATH } from './parser-files.js';

/** The outcome of parsing: a tree (possibly with recovered errors) or a reason there is none. */
export type ParseResult =
  | { ok: true; root: ShNode; text: string }
  // `unread`: nothing of the text was read (no parser, a limit, a parser failure), unlike a syntax
  // error, where the recovered tree is still analyzed.
  | { ok: false; root: ShNode | undefined; text: string; reason: string; unread?: true };

/** Inputs longer than this (UTF-16 units) are not parsed: they are reported as too complex. */
export const MAX_PARSE_LENGTH = 256 * 1024;
/**
 * Parsing one text stops after this many milliseconds of the parsing thread's CPU time (see
 * parse-clock.ts), so a hostile text that makes the parser backtrack stays bounded. CPU time,
 * because a loaded machine slows a parse down without making the text any harder: a wall-clock
 * limit made the same command readable on an idle machine and "too complex" on a busy one. The
 * wall clock still ends a parse at {@link PARSE_WALL_LIMIT_MS}.
 */
export const PARSE_TIMEOUT_MS = 250;
/** The wall-clock backstop of one parse (the event loop is blocked while it runs). */
export const PARSE_WALL_LIMIT_MS = 2_000;
/**
 * A long script cut into statements (see {@link PIECE_LENGTH}) gets {@link PARSE_TIMEOUT_MS} plus
 * this per KiB, in CPU time only (about 1.8 s at the maximum): tree-sitter reads ordinary shell at
 * about 0.5-1 ms of CPU per KiB on an idle machine and up to 4 ms on a heavily loaded one (cache
 * contention). CPU time, because a loaded machine slows a parse down without making the script any
 * harder, and must not turn a script the analyzer can read into an unreadable one.
 */
export const SCRIPT_MS_PER_KIB = 6;
/** Texts longer than this are cut at top-level statement ends into pieces of about this size, parsed one by one. */
export const PIECE_LENGTH = 4 * 1024;
/** Trees nested deeper than this are not analyzed. */
export const MAX_TREE_DEPTH = 400;
/** Trees with more nodes than this are not analyzed. */
export const MAX_TREE_NODES = 100_000;

interface TsCursor {
  nodeType: string;
  startIndex: number;
  endIndex: number;
  gotoFirstChild(): boolean;
  gotoNextSibling(): boolean;
  gotoParent(): boolean;
  delete(): void;
}
interface TsTree {
  rootNode: { hasError: boolean; descendantCount: number };
  walk(): TsCursor;
  delete(): void;
}
interface TsParser {
  parse(input: string | ((index: number) => string), oldTree?: null, options?: { progressCallback: () => boolean }): TsTree | null;
  reset(): void;
  setLanguage(language: unknown): void;
}
interface WebTreeSitter {
  Parser: { init(options?: { wasmBinary?: Uint8Array }): Promise<void>; new (): TsParser };
  Language: { load(bytes: Uint8Array): Promise<{ abiVersion: number }> };
}

/** How to restore the analyzer when the parser does not load (doctor prints it). */
export const PARSER_FIX =
  'reinstall zero-sandbox (npm install zero-sandbox) so that its web-tree-sitter dependency and ' +
  'dist/lib/bash/tree-sitter-bash.wasm are present; until then every shell command needs approval';

const WARM_UP = [
  'set -e; for f in src/*.c; do cc -c "$f" -o "${f%.c}.o" 2>&1 | tee -a log; done',
  'if [ -f x ] && [[ $a == b* ]]; then echo "$(date +%s) ${x:-y}" > out; elif (( n > 1 )); then :; else exit 1; fi',
  "case \"$1\" in a|b) x=1 ;; *) y=$'\\n' ;; esac; while read -r l; do echo $l; done < <(ls) &",
  "f() { local v=`pwd`; export V=1; }; cat <<'EOF' | sh\nbody $x\nEOF\necho 'q' {a,b} ~/x $((1 + 2)) # c",
].join('\n');

let parser: TsParser | undefined;
let loadError: string | undefined;
let loading: Promise<ParserStatus> | undefined;
let wanted = 0;

/** Whether the parser is ready, still to be loaded, or could not be loaded (with the reason). */
export type ParserStatus = { state: 'ready' } | { state: 'not_loaded' } | { state: 'failed'; reason: string };

/** Whether the process was started with its own choice of V8's WebAssembly tiering flags. */
const TIERING_BY_USER = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => /liftoff|wasm-tier|wasm-dynamic-tiering/.test(arg));
let baselineWanted = false;

/**
 * Asks for the parser's WebAssembly to be compiled by V8's baseline compiler only, for the rest of
 * this process (the zero-sandbox CLI does; a process started with its own WebAssembly tiering
 * flags keeps them). By default V8 recompiles the functions a parse runs often with its
 * optimizing compiler, in the background: for this grammar's large lexer and parse tables that
 * costs 1.5 to 2.5 s of CPU in every process that parses one ordinary command, and the process
 * cannot exit before it is done, while parsing stays dominated by the JavaScript walk of the tree.
 * A long-lived process amortizes that once; a command-line run pays it every time. The setting is
 * process-wide (V8 flags are) and changes V8's flag hash, so code caches made afterwards fit only
 * processes with the same setting: call it in a program that owns its process, before the load.
 */
export function preferBaselineWebAssembly(): void {
  baselineWanted = true;
}

/**
 * Loads the WebAssembly parser once (web-tree-sitter's runtime and the bash grammar, ~1.5 MB of
 * WebAssembly, no native code, so nothing needs a compiler or a particular libc). WebAssembly
 * instantiation is asynchronous, so every entry point that parses awaits this first; a parse
 * before it resolves fails closed. Never rejects: a failure is `{ state: 'failed', reason }`.
 */
export function loadShellParser(): Promise<ParserStatus> {
  loading ??= (async (): Promise<ParserStatus> => {
    // WebAssembly compilation completes on V8's own threads, which libuv does not see: with no
    // other handle alive, Node's loop would count as idle, and Node then resumes this function
    // from a step that first waits for every queued V8 background job, including the optimizing
    // compiler's work on the grammar, which takes seconds on a loaded machine. Everything the
    // caller did after the load (a sandbox started, a timeout armed) would wait with it. A timer
    // held for the duration of the load keeps the resumption in the loop.
    const hold = setInterval(() => undefined, 60_000);
    try {
      const require = createRequire(import.meta.url);
      const ts = require('web-tree-sitter') as WebTreeSitter;
      const grammar = readFileSync(GRAMMAR_PATH);
      if (baselineWanted && !TIERING_BY_USER) (require('node:v8') as typeof import('node:v8')).setFlagsFromString('--liftoff-only');
      await ts.Parser.init();
      const language = await ts.Language.load(grammar);
      const instance = new ts.Parser();
      instance.setLanguage(language);
      // The first parses run WebAssembly compiled lazily, function by function: one parse of a
      // script touching most of the grammar here keeps that cost out of the first command's time.
      instance.parse(WARM_UP)?.delete();
      parser = instance;
      return { state: 'ready' };
    } catch (error) {
      loadError = firstLine(error);
      return { state: 'failed', reason: loadError };
    } finally {
      clearInterval(hold);
    }
  })();
  return loading;
}

let installChecked = false;

/**
 * Checks once per process, synchronously and without loading anything, that the parser's two
 * WebAssembly files (web-tree-sitter's runtime and the bash grammar) are installed. Most commands
 * are read by the fast path and never load the parser, so without this a broken install (an
 * incomplete copy, a removed grammar) would stay silent until the first command only the parser
 * can read; with it, the first shell command already fails closed and the CLI warns.
 */
function checkInstalled(): void {
  if (installChecked) return;
  installChecked = true;
  loadError ??= installProblem();
}

/**
 * The parser's state now (synchronous; {@link loadShellParser} changes it). Before the parser is
 * loaded, `failed` already when its files are missing or are not WebAssembly (checked once).
 */
export function parserStatus(): ParserStatus {
  if (parser !== undefined) return { state: 'ready' };
  checkInstalled();
  if (loadError !== undefined) return { state: 'failed', reason: loadError };
  return { state: 'not_loaded' };
}

/** How many parses were asked for before the parser was loaded (callers then load it and retry). */
export function parsesWanted(): number {
  return wanted;
}

/** Why a parse cannot happen now, or undefined when the parser is ready. */
export function parserUnavailableReason(): string | undefined {
  if (parser !== undefined) return undefined;
  if (loadError !== undefined) return `the shell parser could not be loaded: ${loadError}`;
  return 'the shell parser is not loaded yet (await loadShellParser() first, or use analyzeShellCommand())';
}

/**
 * Copies the tree into plain objects, iteratively. A `list` (`a && b || c`) nests one level per
 * operator in the grammar; its left-nested lists are merged into one flat list here, so chains of
 * any length keep a constant depth and only real nesting (subshells, substitutions, groups,
 * control flow) counts against {@link MAX_TREE_DEPTH}.
 */
function copyTree(tree: TsTree): { root: ShNode; tooBig: string | undefined } {
  const cursor = tree.walk();
  try {
    const root: ShNode = { type: cursor.nodeType, start: cursor.startIndex, end: cursor.endIndex, children: [] };
    // One entry per cursor level; a merged list repeats its parent's entry.
    const stack: ShNode[] = [root];
    let depth = 1;
    let count = 1;
    const enter = (first: boolean): string | undefined => {
      const parent = stack[stack.length - 1] as ShNode;
      const type = cursor.nodeType;
      if (first && type === 'list' && parent.type === 'list') {
        stack.push(parent);
        return undefined;
      }
      const node: ShNode = { type, start: cursor.startIndex, end: cursor.endIndex, children: [] };
      parent.children.push(node);
      stack.push(node);
      depth++;
      if (++count > MAX_TREE_NODES) return `more than ${MAX_TREE_NODES} syntax nodes`;
      if (depth > MAX_TREE_DEPTH) return `nesting deeper than ${MAX_TREE_DEPTH} levels`;
      return undefined;
    };
    const leave = (): void => {
      const node = stack.pop() as ShNode;
      if (stack[stack.length - 1] !== node) depth--;
    };
    for (;;) {
      if (cursor.gotoFirstChild()) {
        const tooBig = enter(true);
        if (tooBig !== undefined) return { root, tooBig };
        continue;
      }
      for (;;) {
        if (cursor.gotoNextSibling()) {
          leave();
          const tooBig = enter(false);
          if (tooBig !== undefined) return { root, tooBig };
          break;
        }
        if (!cursor.gotoParent()) return { root, tooBig: undefined };
        leave();
      }
    }
  } finally {
    cursor.delete();
  }
}

let fastPath = true;
let streaming = true;

/** Turns the reading of long scripts as a stream off (tests compare it with the whole tree) and returns the previous setting. */
export function setStreaming(enabled: boolean): boolean {
  const previous = streaming;
  streaming = enabled;
  return previous;
}

/** Turns the fast path off (tests compare both paths) and returns the previous setting. */
export function setFastPath(enabled: boolean): boolean {
  const previous = fastPath;
  fastPath = enabled;
  return previous;
}

// The analysis and the risk classifier (and the interactive check, and prefix matching) each ask
// for the tree of the same command in turn: the last few trees are kept, so a command is parsed
// once. Trees are shared, and nothing that reads them changes them.
let recent = new BoundedMemo<ParseResult>(32);
// Long scripts: only the last two, so memory stays bounded (a tree of 256 KiB is a few MB).
let recentLong = new BoundedMemo<ParseResult>(2);

/** Forgets the kept trees (benchmarks measure parsing, not the memo). */
export function forgetRecentTrees(): void {
  recent = new BoundedMemo<ParseResult>(32);
  recentLong = new BoundedMemo<ParseResult>(2);
}
const MEMO_MAX_LENGTH = 16 * 1024;

/**
 * Parses a shell command: with the fast path (lib/bash/fast-parse.ts) when the text is in its
 * subset, else with tree-sitter. Never throws: every failure is a `{ ok: false, reason }`.
 */
export function parseShell(text: string): ParseResult {
  if (text.length > MAX_PARSE_LENGTH) {
    return { ok: false, root: undefined, text, reason: `command is longer than ${MAX_PARSE_LENGTH} characters`, unread: true };
  }
  if (fastPath && text.length <= 2 * PIECE_LENGTH) {
    const root = fastParse(text);
    if (root !== undefined) return { ok: true, root, text };
  }
  const run = (): ParseResult => (text.length > 2 * PIECE_LENGTH ? parseLong(text) : treeSitterParse(text, deadlineFor()));
  // Without a parser nothing is kept: the same text is parsed again once the parser is loaded.
  if (parser === undefined) return run();
  return (text.length > MEMO_MAX_LENGTH ? recentLong : recent).get(text, run);
}

function deadlineFor(): Deadline {
  return startDeadline(PARSE_TIMEOUT_MS, PARSE_WALL_LIMIT_MS);
}

function scriptDeadline(text: string): Deadline {
  return startDeadline(PARSE_TIMEOUT_MS + (text.length / 1024) * SCRIPT_MS_PER_KIB, Number.POSITIVE_INFINITY);
}

/**
 * A long text: cut at top-level statement ends, or between the commands of a long `&&`/`||` chain
 * (lib/bash/split.ts), and parsed piece by piece, each with the fast path or tree-sitter, under one
 * time limit for the whole text; the pieces' statements become the children of one program node,
 * and the two sides of a cut operator one flat list, the shape a parse of the whole text has. When
 * a piece has a syntax error or cannot be joined (the text has an error, or a cut was wrong), the
 * whole text is parsed in one go instead, so cutting never changes an answer: a long text that
 * cannot be read in one go stays unparseable (fail closed).
 */
function parseLong(text: string): ParseResult {
  const children: ShNode[] = [];
  const whole = readPieces(text, (statement) => children.push(statement), true);
  return whole ?? { ok: true, root: { type: 'program', start: 0, end: text.length, children }, text };
}

/**
 * Reads a long text (one {@link parseShell} would read in pieces) as a stream: each top-level
 * statement goes to `visit` as soon as it is read, and no tree of the whole text is built or kept.
 * A 256 KiB script's tree is tens of MB: kept while the analysis runs, it outlives the garbage
 * collector's young generation, and copying it made the cost per KiB several times that of a
 * short script. The text is read in one scan by the fast path when it is in its subset, else in
 * pieces; if the fast path stops partway, `forget` is called (what `visit` was given is to be
 * forgotten) and the pieces are read.
 *
 * `visit` sees the statements of parseShell's tree in order, except that an `&&`/`||` chain may
 * come in parts (its pipelines and operators), so that a chain as long as the text is never one
 * node: a walk that does nothing for a list node itself cannot tell. Returns undefined when every
 * statement was visited; otherwise a parse to use instead, after forgetting what `visit` was given:
 * the text is short or too long (parseShell's answer, kept for later parses of the same text), or
 * it has a syntax error or a cut could not be joined (the whole text parsed in one go).
 */
export function streamStatements(text: string, visit: (statement: ShNode) => void, forget: () => void): ParseResult | undefined {
  if (!streaming || text.length > MAX_PARSE_LENGTH || text.length <= 2 * PIECE_LENGTH) return parseShell(text);
  // In the fast path's subset (most long scripts agents write), one scan reads it all; no cuts.
  if (fastPath) {
    if (fastStream(text, visit)) return undefined;
    forget();
  }
  return readPieces(text, visit, false);
}

/**
 * The pieces of a long text, their statements handed to `visit` in order; a result when the text
 * must be read in one go. With `keep`, the two sides of a cut operator are joined into one list;
 * without, they are handed over as they are (a walk that does nothing for a list node itself,
 * only for what is in it, cannot tell).
 */
function readPieces(text: string, visit: (statement: ShNode) => void, keep: boolean): ParseResult | undefined {
  const cuts = scriptCuts(text, PIECE_LENGTH);
  if (cuts.length === 0) return parseWhole(text, deadlineFor());
  const deadline = scriptDeadline(text);
  // The last statement so far: the next piece may join it (a cut inside an `&&` chain).
  let pending: ShNode | undefined;
  let start = 0;
  let operator: ShNode | undefined;
  for (const cut of [...cuts, { end: text.length, resume: text.length, operator: undefined }]) {
    const piece = text.slice(start, cut.end);
    const fast = fastPath ? fastParse(piece) : undefined;
    const parsed: ParseResult = fast !== undefined ? { ok: true, root: fast, text: piece } : treeSitterParse(piece, deadline);
    if (!parsed.ok) {
      if (parsed.unread === true) return { ...parsed, root: undefined, text };
      return treeSitterParse(text, deadline);
    }
    shift(parsed.root, start);
    const statements = parsed.root.children;
    let from = 0;
    if (operator !== undefined) {
      const right = statements[0];
      if (!joinable(pending) || !joinable(right)) return treeSitterParse(text, deadline);
      if (keep) {
        pending = joinLists(pending, operator, right);
      } else {
        // A chain of any length would otherwise be one statement as long as the text.
        visit(pending);
        pending = right;
      }
      from = 1;
    }
    for (let i = from; i < statements.length; i++) {
      if (pending !== undefined) visit(pending);
      pending = statements[i] as ShNode;
    }
    operator = cut.operator === undefined ? undefined : { type: cut.operator, start: cut.end, end: cut.resume, children: [] };
    start = cut.resume;
  }
  if (pending !== undefined) visit(pending);
  return undefined;
}

/** Whether a node is a statement that an operator can join (not a comment, separator or missing). */
function joinable(node: ShNode | undefined): node is ShNode {
  return node !== undefined && node.children.length > 0 && node.type !== 'comment' && node.type !== 'ERROR';
}

/** `left op right` as one flat list (both sides' lists merged in place: chains can be long). */
function joinLists(left: ShNode, operator: ShNode, right: ShNode): ShNode {
  const list = left.type === 'list' ? left : { type: 'list', start: left.start, end: left.end, children: [left] };
  list.children.push(operator);
  if (right.type === 'list') for (const child of right.children) list.children.push(child);
  else list.children.push(right);
  list.end = right.end;
  return list;
}

function parseWhole(text: string, deadline: Deadline): ParseResult {
  const root = fastPath ? fastParse(text) : undefined;
  return root !== undefined ? { ok: true, root, text } : treeSitterParse(text, deadline);
}

/** Moves every offset of a piece's tree by `by` (iteratively: trees can be long). */
function shift(root: ShNode, by: number): void {
  if (by === 0) return;
  const stack = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    node.start += by;
    node.end += by;
    for (const child of node.children) stack.push(child);
  }
}

let treeSitterRuns = 0;

/** How many texts tree-sitter has parsed in this process (tests check that a command is parsed once). */
export function treeSitterParses(): number {
  return treeSitterRuns;
}

function treeSitterParse(text: string, deadline: Deadline): ParseResult {
  const instance = parser;
  if (instance === undefined) {
    if (loadError === undefined) wanted++;
    return { ok: false, root: undefined, text, reason: parserUnavailableReason() ?? 'no parser', unread: true };
  }
  treeSitterRuns++;
  let tree: TsTree | null = null;
  // The parser reads the text in bounded slices (not one copy of the rest per call).
  const read = (index: number): string => text.slice(index, index + 4096);
  try {
    tree = instance.parse(read, null, { progressCallback: () => pastDeadline(deadline) });
  } catch (error) {
    return { ok: false, root: undefined, text, reason: `the shell parser failed: ${firstLine(error)}`, unread: true };
  }
  if (tree === null) {
    try {
      instance.reset();
    } catch {
      // A parser that cannot reset is not used again: every later parse fails closed.
      parser = undefined;
      loadError = 'the parser could not be reset after a timeout';
    }
    return { ok: false, root: undefined, text, reason: `parsing took longer than its time limit (${PARSE_TIMEOUT_MS} ms; a script of many statements: plus ${SCRIPT_MS_PER_KIB} ms of CPU per KiB)`, unread: true };
  }
  try {
    if (tree.rootNode.descendantCount > MAX_TREE_NODES) {
      return { ok: false, root: undefined, text, reason: `command too complex to analyze: more than ${MAX_TREE_NODES} syntax nodes`, unread: true };
    }
    const { root, tooBig } = copyTree(tree);
    if (tooBig !== undefined) return { ok: false, root: undefined, text, reason: `command too complex to analyze: ${tooBig}`, unread: true };
    if (tree.rootNode.hasError) return { ok: false, root, text, reason: 'command has a syntax error' };
    return { ok: true, root, text };
  } catch (error) {
    return { ok: false, root: undefined, text, reason: `the shell parser failed: ${firstLine(error)}`, unread: true };
  } finally {
    tree.delete();
  }
}
