// SPDX-License-Identifier: MIT
// The tree-sitter-bash wrapper: loads the parser lazily, parses under size/time/depth limits, and
// copies the tree into plain objects so the analysis never calls into the native parser again.
import { createRequire } from 'node:module';

/** A syntax node copied out of tree-sitter. Offsets are UTF-16 indexes into the parsed text. */
export interface ShNode {
  /** tree-sitter-bash node type, e.g. `command`, `word`, `pipeline`, `&&`. */
  type: string;
  /** Start offset (inclusive). */
  start: number;
  /** End offset (exclusive). */
  end: number;
  /** Child nodes, named and anonymous, in source order. */
  children: ShNode[];
}

/** The outcome of parsing: a tree (possibly with recovered errors) or a reason there is none. */
export type ParseResult =
  | { ok: true; root: ShNode; text: string }
  | { ok: false; root: ShNode | undefined; text: string; reason: string };

/** Inputs longer than this (UTF-16 units) are not parsed: they are reported as too complex. */
export const MAX_PARSE_LENGTH = 256 * 1024;
/** Parsing stops after this many milliseconds. */
export const PARSE_TIMEOUT_MS = 250;
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
}
interface TsTree {
  rootNode: { hasError: boolean; descendantCount: number };
  walk(): TsCursor;
}
interface TsParser {
  parse(input: string, oldTree: null, options: { progressCallback: () => boolean }): TsTree | undefined;
  reset(): void;
}

let parser: TsParser | undefined;
let loadError: string | undefined;

function getParser(): TsParser | undefined {
  if (parser !== undefined || loadError !== undefined) return parser;
  try {
    const require = createRequire(import.meta.url);
    const Parser = require('tree-sitter') as new () => TsParser & { setLanguage(lang: unknown): void };
    const bash = require('tree-sitter-bash') as unknown;
    const instance = new Parser();
    instance.setLanguage(bash);
    parser = instance;
  } catch (error) {
    loadError = error instanceof Error ? error.message.split('\n')[0] ?? 'unknown error' : String(error);
  }
  return parser;
}

/** Whether the native parser loads on this machine (the reason when it does not). */
export function parserStatus(): { available: true } | { available: false; reason: string } {
  return getParser() !== undefined ? { available: true } : { available: false, reason: loadError ?? 'unknown error' };
}

function copyTree(tree: TsTree): { root: ShNode; tooBig: string | undefined } {
  const cursor = tree.walk();
  const root: ShNode = { type: cursor.nodeType, start: cursor.startIndex, end: cursor.endIndex, children: [] };
  const stack: ShNode[] = [root];
  let count = 1;
  for (;;) {
    if (cursor.gotoFirstChild()) {
      const node: ShNode = { type: cursor.nodeType, start: cursor.startIndex, end: cursor.endIndex, children: [] };
      (stack[stack.length - 1] as ShNode).children.push(node);
      stack.push(node);
      count++;
      if (stack.length > MAX_TREE_DEPTH) return { root, tooBig: `nesting deeper than ${MAX_TREE_DEPTH} levels` };
      if (count > MAX_TREE_NODES) return { root, tooBig: `more than ${MAX_TREE_NODES} syntax nodes` };
      continue;
    }
    for (;;) {
      if (cursor.gotoNextSibling()) {
        stack.pop();
        const node: ShNode = { type: cursor.nodeType, start: cursor.startIndex, end: cursor.endIndex, children: [] };
        (stack[stack.length - 1] as ShNode).children.push(node);
        stack.push(node);
        count++;
        if (count > MAX_TREE_NODES) return { root, tooBig: `more than ${MAX_TREE_NODES} syntax nodes` };
        break;
      }
      if (!cursor.gotoParent()) return { root, tooBig: undefined };
      stack.pop();
    }
  }
}

/** Parses a shell command. Never throws: every failure is a `{ ok: false, reason }`. */
export function parseShell(text: string): ParseResult {
  if (text.length > MAX_PARSE_LENGTH) {
    return { ok: false, root: undefined, text, reason: `command is longer than ${MAX_PARSE_LENGTH} characters` };
  }
  const instance = getParser();
  if (instance === undefined) {
    return { ok: false, root: undefined, text, reason: `the shell parser could not be loaded: ${loadError ?? 'unknown error'}` };
  }
  let tree: TsTree | undefined;
  const deadline = performance.now() + PARSE_TIMEOUT_MS;
  try {
    tree = instance.parse(text, null, { progressCallback: () => performance.now() > deadline });
  } catch {
    tree = undefined;
  }
  if (tree === undefined || tree === null) {
    try {
      instance.reset();
    } catch {
      // A parser that cannot reset is replaced on the next call.
      parser = undefined;
    }
    return { ok: false, root: undefined, text, reason: `parsing took longer than ${PARSE_TIMEOUT_MS} ms` };
  }
  if (tree.rootNode.descendantCount > MAX_TREE_NODES) {
    return { ok: false, root: undefined, text, reason: `command too complex to analyze: more than ${MAX_TREE_NODES} syntax nodes` };
  }
  const { root, tooBig } = copyTree(tree);
  if (tooBig !== undefined) return { ok: false, root: undefined, text, reason: `command too complex to analyze: ${tooBig}` };
  if (tree.rootNode.hasError) return { ok: false, root, text, reason: 'command has a syntax error' };
  return { ok: true, root, text };
}
