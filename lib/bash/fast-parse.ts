// SPDX-License-Identifier: MIT
// The fast path of the shell parser: a single linear scan that builds the syntax tree of the
// commands agents run most (simple commands joined by `&&`, `||`, `;`, newlines and `|`, with quoted
// words, plain `$VAR` expansions, `$(...)` substitutions, file redirections and whole-line comments)
// without tree-sitter. It accepts only a strict
// subset of bash and returns undefined for anything else, which then goes to tree-sitter; the tree
// it builds has the node types and shapes the tree-sitter-bash copy has, so the analysis cannot
// tell them apart. test/unit/bash-fast-parse.test.ts checks that every analysis, risk and prefix
// decision is the same on both paths.
import type { ShNode } from './tree.js';

/** Characters of a bare word: no quoting, expansion, operator, glob class, brace, comment or history character (`*` and `?` globs are words to tree-sitter). */
const BARE_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,@%+~*?';
const BARE_TABLE = new Uint8Array(128);
for (const ch of BARE_CHARS) BARE_TABLE[ch.charCodeAt(0)] = 1;
const isBare = (code: number): boolean => code < 128 && BARE_TABLE[code] === 1;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** Words that start a compound command or change how bash reads the rest (left to tree-sitter). */
const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'in', 'function', 'select', 'time', 'coproc']);
/** Builtins tree-sitter-bash reads as their own node types (declaration_command, unset_command), not as commands. */
const OWN_NODE_TYPES = new Set(['export', 'local', 'declare', 'readonly', 'typeset', 'unset', 'unsetenv']);

class Unsupported extends Error {}

/**
 * The fast parser reads texts of up to this many simple commands (read as a stream: statements of
 * up to this many, since none is kept once handed on); longer ones go to tree-sitter, whose time
 * and node limits bound the cost of a hostile text (thousands of commands are analyzed one by one).
 */
export const FAST_MAX_COMMANDS = 2500;

/** `$(...)` nested deeper than this is left to tree-sitter (and its nesting limit). */
const MAX_FAST_NESTING = 16;

const leaf = (type: string, start: number, end: number): ShNode => ({ type, start, end, children: [] });

class Scanner {
  pos = 0;
  /**
   * Where the top level's statements go as soon as they are read, when the text is read as a
   * stream ({@link fastStream}): the program node then keeps none of them.
   */
  private readonly sink: ((node: ShNode) => void) | undefined;
  /** How many statements (not comments) went to the sink. */
  private streamed = 0;
  /** How deep in statements of substitutions and loop bodies the scanner is (0: the top level). */
  private inner = 0;

  constructor(
    readonly text: string,
    sink?: (node: ShNode) => void,
  ) {
    this.sink = sink;
  }

  /**
   * Hands what the top level has read so far to the sink. The limit on commands then counts from
   * zero again: a stream keeps no tree, so it bounds what one statement (a pipeline, say) holds.
   */
  private flush(nodes: ShNode[]): void {
    const sink = this.sink as (node: ShNode) => void;
    this.commands = 0;
    for (const node of nodes) {
      if (node.type !== 'comment' && node.type !== ';' && node.type !== '&&' && node.type !== '||') this.streamed++;
      sink(node);
    }
    nodes.length = 0;
  }

  fail(): never {
    throw new Unsupported();
  }

  skipBlanks(): void {
    const { text } = this;
    while (this.pos < text.length && (text[this.pos] === ' ' || text[this.pos] === '\t')) this.pos++;
  }

  /** Blanks and newlines (where bash lets a statement continue on the next line). */
  skipSpace(): void {
    const { text } = this;
    while (this.pos < text.length && (text[this.pos] === ' ' || text[this.pos] === '\t' || text[this.pos] === '\n')) this.pos++;
  }

  private nesting = 0;

  /** `$(statements)`: a command_substitution node (`$((` arithmetic is left to tree-sitter). */
  substitution(): ShNode {
    const start = this.pos;
    // Nesting is bounded here so the recursion stays shallow; deeper texts go to tree-sitter's limits.
    if (this.text[start + 2] === '(' || ++this.nesting > MAX_FAST_NESTING) this.fail();
    this.pos += 2;
    const body = this.statements(')');
    if (body.length === 0 || this.text[this.pos] !== ')') this.fail();
    this.pos++;
    this.nesting--;
    return { type: 'command_substitution', start, end: this.pos, children: [leaf('$(', start, start + 2), ...body, leaf(')', this.pos - 1, this.pos)] };
  }

  /** `$NAME` or `${NAME}`: a simple_expansion or expansion node. */
  expansion(): ShNode {
    const start = this.pos;
    const { text } = this;
    if (text[start + 1] === '{') {
      NAME.lastIndex = start + 2;
      if (!NAME.test(text) || text[NAME.lastIndex] !== '}') this.fail();
      this.pos = NAME.lastIndex + 1;
      return { type: 'expansion', start, end: this.pos, children: [leaf('${', start, start + 2), leaf('variable_name', start + 2, this.pos - 1), leaf('}', this.pos - 1, this.pos)] };
    }
    NAME.lastIndex = start + 1;
    if (!NAME.test(text)) this.fail();
    this.pos = NAME.lastIndex;
    return { type: 'simple_expansion', start, end: this.pos, children: [leaf('$', start, start + 1), leaf('variable_name', start + 1, this.pos)] };
  }

  /** A double-quoted string: literal text and plain expansions only. */
  doubleQuoted(): ShNode {
    const start = this.pos;
    const { text } = this;
    const children: ShNode[] = [leaf('"', start, start + 1)];
    let chunk = ++this.pos;
    for (;;) {
      const ch = text[this.pos];
      if (ch === undefined || ch === '`' || ch === '\n' || ch === '\r' || ch === '!') this.fail();
      if (ch === '\\') {
        // An escaped character stays inside the string_content, as tree-sitter reads it; a
        // backslash-newline (a line continuation) is left to tree-sitter.
        const next = text[this.pos + 1];
        if (next === undefined || next === '\n' || next === '\r') this.fail();
        this.pos += 2;
        continue;
      }
      if (ch === '"' || ch === '$') {
        if (this.pos > chunk) children.push(leaf('string_content', chunk, this.pos));
        if (ch === '"') break;
        children.push(text[this.pos + 1] === '(' ? this.substitution() : this.expansion());
        chunk = this.pos;
        continue;
      }
      this.pos++;
    }
    this.pos++;
    children.push(leaf('"', this.pos - 1, this.pos));
    return { type: 'string', start, end: this.pos, children };
  }

  /** One word: adjacent bare text, quoted strings and expansions (a concatenation when several). */
  word(): ShNode | undefined {
    const { text } = this;
    const parts: ShNode[] = [];
    const start = this.pos;
    for (;;) {
      const ch = text[this.pos];
      if (ch === undefined) break;
      if (ch === "'") {
        const close = text.indexOf("'", this.pos + 1);
        if (close === -1 || /[\n\r]/.test(text.slice(this.pos, close))) this.fail();
        parts.push(leaf('raw_string', this.pos, close + 1));
        this.pos = close + 1;
      } else if (ch === '"') {
        parts.push(this.doubleQuoted());
      } else if (ch === '$') {
        parts.push(text[this.pos + 1] === '(' ? this.substitution() : this.expansion());
      } else if (isBare(ch.charCodeAt(0))) {
        const from = this.pos;
        while (this.pos < text.length && isBare(text.charCodeAt(this.pos))) this.pos++;
        // A `~` or `=` only means something at the start of a word or of an assignment value;
        // tree-sitter reads words around them differently, so anything unusual goes there.
        parts.push(leaf('word', from, this.pos));
      } else {
        break;
      }
    }
    if (parts.length === 0) return undefined;
    if (parts.length === 1) return parts[0];
    // Two bare runs cannot be adjacent, so a concatenation always mixes kinds.
    return { type: 'concatenation', start, end: this.pos, children: parts };
  }

  /** A file redirection after the words of a command (`>`, `>>`, `<`, `N>`, `N>&M`), or undefined. */
  redirect(): ShNode | undefined {
    const { text } = this;
    const start = this.pos;
    let at = start;
    const children: ShNode[] = [];
    if (/[0-9]/.test(text[at] ?? '')) {
      if (!/[<>]/.test(text[at + 1] ?? '')) return undefined;
      children.push(leaf('file_descriptor', at, at + 1));
      at++;
    }
    const ch = text[at];
    if (ch !== '>' && ch !== '<') return undefined;
    let op = ch;
    if (ch === '>' && text[at + 1] === '>') op = '>>';
    else if (ch === '>' && text[at + 1] === '&') op = '>&';
    const next = text[at + op.length];
    // Heredocs, here-strings, `<>`, `>|`, `>&>` and `<&` are left to tree-sitter.
    if (next === '<' || next === '>' || next === '|' || next === '&' || next === '(' || (ch === '<' && next === '&')) this.fail();
    children.push(leaf(op, at, at + op.length));
    this.pos = at + op.length;
    if (op === '>&') {
      if (!/[0-9]/.test(text[this.pos] ?? '') || /[0-9A-Za-z_]/.test(text[this.pos + 1] ?? '')) this.fail();
      children.push(leaf('number', this.pos, this.pos + 1));
      this.pos++;
    } else {
      this.skipBlanks();
      const target = this.word();
      if (target === undefined) this.fail();
      children.push(target);
    }
    return { type: 'file_redirect', start, end: this.pos, children };
  }

  private commands = 0;

  /** A simple command: assignments, the program word and arguments, then redirections. */
  command(): { node: ShNode; redirects: ShNode[] } {
    if (++this.commands > FAST_MAX_COMMANDS) this.fail();
    this.skipBlanks();
    if (this.keyword('for')) return { node: this.forStatement(), redirects: [] };
    const start = this.pos;
    const children: ShNode[] = [];
    const redirects: ShNode[] = [];
    let named = false;
    for (;;) {
      this.skipBlanks();
      const redirect = named ? this.redirect() : undefined;
      if (redirect !== undefined) {
        redirects.push(redirect);
        continue;
      }
      if (redirects.length > 0 && this.startsWord()) this.fail();
      const from = this.pos;
      const word = this.word();
      if (word === undefined) break;
      // `10>file` redirects descriptor 10: a number glued to `<`/`>` is left to tree-sitter.
      if (/^[0-9]+$/.test(this.text.slice(from, this.pos)) && /[<>]/.test(this.text[this.pos] ?? '')) this.fail();
      const raw = this.text.slice(from, this.pos);
      if (!named && ASSIGNMENT.test(raw)) {
        children.push(this.assignment(word, from));
        continue;
      }
      if (!named) {
        if (RESERVED.has(raw) || OWN_NODE_TYPES.has(raw)) this.fail();
        // tree-sitter-bash reads `--opt=v` in command position as an assignment, and `NAME:x` after an
        // assignment as an error: both are left to it, so the two paths never disagree.
        // A glob in the program name is read differently by tree-sitter-bash: left to it as well.
        if (raw.includes('=') || raw.includes('*') || raw.includes('?') || (children.length > 0 && raw.includes(':'))) this.fail();
        children.push({ type: 'command_name', start: word.start, end: word.end, children: [word] });
        named = true;
      } else {
        children.push(word);
      }
    }
    // Assignments alone, or nothing at all, are left to tree-sitter.
    if (!named) this.fail();
    const last = children[children.length - 1] as ShNode;
    return { node: { type: 'command', start, end: last.end, children }, redirects };
  }

  /** Whether the reserved word `word` is at the current position (followed by a blank, a separator or the end). */
  keyword(word: string): boolean {
    const { text } = this;
    if (!text.startsWith(word, this.pos)) return false;
    const after = text[this.pos + word.length];
    return after === undefined || after === ' ' || after === '\t' || after === '\n' || after === ';';
  }

  /** `for NAME in WORDS; do STATEMENTS; done` (the forms without `in`, and redirections after `done`, are left to tree-sitter). */
  forStatement(): ShNode {
    const { text } = this;
    const start = this.pos;
    if (++this.nesting > MAX_FAST_NESTING) this.fail();
    const children: ShNode[] = [leaf('for', start, start + 3)];
    this.pos += 3;
    this.skipBlanks();
    NAME.lastIndex = this.pos;
    if (!NAME.test(text)) this.fail();
    children.push(leaf('variable_name', this.pos, NAME.lastIndex));
    this.pos = NAME.lastIndex;
    this.skipBlanks();
    if (!this.keyword('in')) this.fail();
    children.push(leaf('in', this.pos, this.pos + 2));
    this.pos += 2;
    for (;;) {
      this.skipBlanks();
      const from = this.pos;
      const word = this.word();
      if (word === undefined) break;
      if (RESERVED.has(text.slice(from, this.pos))) this.fail();
      children.push(word);
    }
    if (text[this.pos] === ';') {
      children.push(leaf(';', this.pos, this.pos + 1));
      this.pos++;
    } else if (text[this.pos] !== '\n') {
      this.fail();
    }
    this.skipSpace();
    if (!this.keyword('do')) this.fail();
    const doStart = this.pos;
    this.pos += 2;
    const body = this.statements('done');
    if (body.length === 0 || !this.keyword('done')) this.fail();
    this.pos += 4;
    children.push({ type: 'do_group', start: doStart, end: this.pos, children: [leaf('do', doStart, doStart + 2), ...body, leaf('done', this.pos - 4, this.pos)] });
    this.nesting--;
    return { type: 'for_statement', start, end: this.pos, children };
  }

  private startsWord(): boolean {
    const ch = this.text[this.pos];
    return ch !== undefined && (ch === "'" || ch === '"' || ch === '$' || isBare(ch.charCodeAt(0)));
  }

  /** `NAME=value` before the program word: the value must be one word-like part. */
  private assignment(word: ShNode, from: number): ShNode {
    const eq = this.text.indexOf('=', from);
    const name = leaf('variable_name', from, eq);
    const op = leaf('=', eq, eq + 1);
    const children = [name, op];
    if (this.pos > eq + 1) {
      // Re-read the value on its own so that it gets the node types tree-sitter gives it.
      const saved = this.pos;
      this.pos = eq + 1;
      const value = this.word();
      if (value === undefined || this.pos !== saved) this.fail();
      children.push(value);
    }
    return { type: 'variable_assignment', start: word.start, end: this.pos, children };
  }

  /** Stages joined by `|`; redirections of the last stage apply to the whole pipeline, as tree-sitter reads them. */
  pipeline(): ShNode {
    const stages: ShNode[] = [];
    for (;;) {
      const { node, redirects } = this.command();
      this.skipBlanks();
      const more = this.text[this.pos] === '|' && this.text[this.pos + 1] !== '|';
      if (!more) {
        const body = stages.length === 0 ? node : { type: 'pipeline', start: (stages[0] as ShNode).start, end: node.end, children: [...stages, node] };
        return redirects.length > 0 ? wrap(body, redirects) : body;
      }
      if (this.text[this.pos + 1] === '&') this.fail();
      stages.push(redirects.length > 0 ? wrap(node, redirects) : node, leaf('|', this.pos, this.pos + 1));
      this.pos++;
      this.skipSpace();
    }
  }

  /** Pipelines joined by `&&`/`||`: one flat list, as the tree copy flattens tree-sitter's. */
  list(): ShNode {
    const items: ShNode[] = [this.pipeline()];
    for (;;) {
      this.skipBlanks();
      const op = this.text.slice(this.pos, this.pos + 2);
      if (op !== '&&' && op !== '||') break;
      items.push(leaf(op, this.pos, this.pos + 2));
      this.pos += 2;
      this.skipSpace();
      items.push(this.pipeline());
      // A streamed chain goes on as it is read (all but its last pipeline, which the next operator
      // joins): a chain as long as the text is never held whole.
      if (this.sink !== undefined && this.inner === 0 && items.length > 64) this.flush(items.splice(0, items.length - 1));
    }
    if (items.length === 1) return items[0] as ShNode;
    return { type: 'list', start: (items[0] as ShNode).start, end: (items[items.length - 1] as ShNode).end, children: items };
  }

  /**
   * Statements separated by `;` or newlines, up to the end of the text (`until` undefined), the `)`
   * that closes a substitution or the `done` of a loop. Comments are read on the top level only.
   */
  statements(until?: ')' | 'done'): ShNode[] {
    const { text } = this;
    const children: ShNode[] = [];
    const inner = until !== undefined;
    const stream = this.sink !== undefined && !inner;
    if (inner) this.inner++;
    const atEnd = (): boolean => {
      const ch = text[this.pos];
      return ch === undefined || (until === ')' && ch === ')') || (until === 'done' && this.keyword('done'));
    };
    const done = (): ShNode[] => {
      if (inner) this.inner--;
      if (stream) this.flush(children);
      return children;
    };
    for (;;) {
      if (stream) this.flush(children);
      this.skipSpace();
      if (!inner && this.comment(children)) continue;
      if (atEnd()) return done();
      children.push(this.list());
      this.skipBlanks();
      if (!inner) this.comment(children);
      const next = text[this.pos];
      if (next === undefined || (until === ')' && next === ')')) return done();
      if (next === ';' && text[this.pos + 1] !== ';') {
        children.push(leaf(';', this.pos, this.pos + 1));
        this.pos++;
      } else if (next !== '\n') {
        this.fail();
      }
    }
  }

  /** A `#` comment to the end of the line, when `#` starts a word (after a blank, a newline or at the start). */
  private comment(children: ShNode[]): boolean {
    const { text } = this;
    if (text[this.pos] !== '#') return false;
    const before = text[this.pos - 1];
    if (this.pos > 0 && before !== ' ' && before !== '\t' && before !== '\n') this.fail();
    let end = text.indexOf('\n', this.pos);
    if (end === -1) end = text.length;
    if (text.slice(this.pos, end).includes('\r')) this.fail();
    children.push(leaf('comment', this.pos, end));
    this.pos = end;
    return true;
  }

  program(): ShNode {
    const children = this.statements();
    if (this.sink !== undefined && this.streamed === 0) this.fail();
    if (this.sink === undefined && (children.length === 0 || children.every((child) => child.type === 'comment'))) this.fail();
    return { type: 'program', start: 0, end: this.text.length, children };
  }
}

function wrap(body: ShNode, redirects: ShNode[]): ShNode {
  return { type: 'redirected_statement', start: body.start, end: (redirects[redirects.length - 1] as ShNode).end, children: [body, ...redirects] };
}

/**
 * The syntax tree of `text` when it is in the fast path's subset (see the file comment), else
 * undefined. Linear in the length of the text; never throws.
 */
export function fastParse(text: string): ShNode | undefined {
  return read(new Scanner(text));
}

/**
 * Reads `text` as {@link fastParse} does, handing each top-level statement to `visit` as soon as it
 * is read instead of building the program node, and a long `&&`/`||` chain in parts (its
 * pipelines and operators): a walk that does nothing for a program or list node itself sees what
 * it would see on fastParse's tree. False when the text is not in the fast path's subset; what
 * `visit` was given is then to be forgotten.
 */
export function fastStream(text: string, visit: (node: ShNode) => void): boolean {
  return read(new Scanner(text, visit)) !== undefined;
}

function read(scanner: Scanner): ShNode | undefined {
  try {
    return scanner.program();
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
