// SPDX-License-Identifier: MIT
// Where a long shell script can be cut into independent pieces: the ends of top-level statements
// (a newline or `;` outside quotes, heredoc bodies, comments, substitutions, groups and compound
// commands, not after an operator that continues the statement), and, inside one long statement,
// its top-level `&&` and `||` operators (a chain of thousands of commands has no statement end;
// the operator then belongs to neither piece and the caller joins the two lists). Each piece is
// then parsed on its own, so the cost of a script is linear in its length and no single parse meets the parser's time
// limit. The scan is deliberately conservative: whenever it is unsure (an unterminated quote or
// heredoc, an unbalanced closer, nesting past its limit) it reports no cut at all, and the caller
// parses the whole text as one piece. A cut in the wrong place would leave a piece with an
// unterminated construct, which the parser reports as an error: the caller then falls back to one
// parse of the whole text as well, so a wrong cut never changes an analysis.

/** Recursion limit of the scan (substitutions and groups inside each other); deeper texts are not cut. */
const MAX_SCAN_NESTING = 64;

/** Words that open a compound command, with the word that closes it. */
const OPENERS: Record<string, string> = { if: 'fi', case: 'esac', for: 'done', while: 'done', until: 'done', select: 'done', '{': '}' };
const CLOSERS = new Set(['fi', 'esac', 'done', '}']);
/** Reserved words after which a command starts. */
const LEADING = new Set(['then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', 'time', '{']);
/** Characters that end a word outside quotes. */
const META = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

class Unsure extends Error {}

interface Heredoc {
  delimiter: string;
  stripTabs: boolean;
}

class Cutter {
  pos = 0;
  private readonly heredocs: Heredoc[] = [];
  private nesting = 0;
  /** Offsets just after each top-level statement end. */
  readonly cuts: number[] = [];
  /** Start and end offsets of each top-level `&&`/`||` operator. */
  readonly operators: [number, number][] = [];

  constructor(private readonly text: string) {}

  private unsure(): never {
    throw new Unsure();
  }

  private enter(): void {
    if (++this.nesting > MAX_SCAN_NESTING) this.unsure();
  }

  /** `'...'`: to the closing quote. */
  private single(): void {
    const close = this.text.indexOf("'", this.pos + 1);
    if (close === -1) this.unsure();
    this.pos = close + 1;
  }

  /** From `skip` characters on, to the next unescaped `close`: `$'...'` (skip 2) and `` `...` `` (skip 1). */
  private escapedTo(close: string, skip: number): void {
    const { text } = this;
    for (this.pos += skip; this.pos < text.length; this.pos++) {
      if (text[this.pos] === '\\') this.pos++;
      else if (text[this.pos] === close) {
        this.pos++;
        return;
      }
    }
    this.unsure();
  }

  /** `"..."`: escapes, substitutions and backquotes inside, to the closing quote. */
  private double(): void {
    const { text } = this;
    this.pos++;
    while (this.pos < text.length) {
      const ch = text[this.pos];
      if (ch === '"') {
        this.pos++;
        return;
      }
      if (ch === '\\') this.pos += 2;
      else if (ch === '`') this.escapedTo('`', 1);
      else if (ch === '$') this.dollar();
      else this.pos++;
    }
    this.unsure();
  }

  /** `$(...)`, `$((...))`, `${...}` or a plain `$`. */
  private dollar(): void {
    const next = this.text[this.pos + 1];
    if (next === '(') {
      this.pos += 2;
      this.code(')');
    } else if (next === '[') {
      // `$[...]`, bash's old arithmetic: its `&&`, `||` and `;` are not operators. Not followed.
      this.unsure();
    } else if (next === '{') {
      this.pos += 2;
      this.braces();
    } else {
      this.pos++;
    }
  }

  /** The inside of `${...}`, with quotes and nested expansions, to the matching `}`. */
  private braces(): void {
    const { text } = this;
    this.enter();
    while (this.pos < text.length) {
      const ch = text[this.pos];
      if (ch === '}') {
        this.pos++;
        this.nesting--;
        return;
      }
      if (ch === '\\') this.pos += 2;
      else if (ch === "'") this.single();
      else if (ch === '"') this.double();
      else if (ch === '`') this.escapedTo('`', 1);
      else if (ch === '$') this.dollar();
      else this.pos++;
    }
    this.unsure();
  }

  /** `<<` or `<<-` and its delimiter word (quotes removed); the body follows the end of the line. */
  private heredoc(): void {
    const { text } = this;
    this.pos += 2;
    const stripTabs = text[this.pos] === '-';
    if (stripTabs) this.pos++;
    while (text[this.pos] === ' ' || text[this.pos] === '\t') this.pos++;
    let delimiter = '';
    while (this.pos < text.length && !META.has(text[this.pos] as string)) {
      const ch = text[this.pos] as string;
      if (ch === "'" || ch === '"') {
        const close = text.indexOf(ch, this.pos + 1);
        if (close === -1) this.unsure();
        delimiter += text.slice(this.pos + 1, close);
        this.pos = close + 1;
      } else if (ch === '\\') {
        delimiter += text[this.pos + 1] ?? '';
        this.pos += 2;
      } else if (ch === '$' || ch === '`') {
        this.unsure();
      } else {
        delimiter += ch;
        this.pos++;
      }
    }
    if (delimiter === '') this.unsure();
    this.heredocs.push({ delimiter, stripTabs });
  }

  /** After the newline that ends a line with heredocs: skips their bodies, in order. */
  private heredocBodies(): void {
    const { text } = this;
    for (const { delimiter, stripTabs } of this.heredocs.splice(0)) {
      for (;;) {
        if (this.pos >= text.length) this.unsure();
        let end = text.indexOf('\n', this.pos);
        if (end === -1) end = text.length;
        let line = text.slice(this.pos, end);
        if (stripTabs) line = line.replace(/^\t+/, '');
        this.pos = Math.min(end + 1, text.length);
        if (line === delimiter) break;
      }
    }
  }

  /**
   * Code up to `closer` (`)` of a substitution or subshell) or to the end of the text (top level,
   * where statement ends are recorded as cuts).
   */
  code(closer?: ')'): void {
    const { text } = this;
    const top = closer === undefined;
    this.enter();
    const blocks: string[] = [];
    let commandStart = true;
    // A statement continues on the next line after `|`, `&&`, `||` or `!`.
    let continues = false;
    const cut = (): void => {
      if (top && blocks.length === 0 && !continues && this.heredocs.length === 0) this.cuts.push(this.pos);
    };
    while (this.pos < text.length) {
      const ch = text[this.pos] as string;
      if (ch === ' ' || ch === '\t') {
        this.pos++;
      } else if (ch === '\n') {
        this.pos++;
        if (this.heredocs.length > 0) this.heredocBodies();
        cut();
        commandStart = true;
      } else if (ch === ';') {
        // `;;` ends a case branch (inside a block, so never a cut); `;&` and `;;&` too.
        this.pos++;
        while (text[this.pos] === ';' || text[this.pos] === '&') this.pos++;
        cut();
        commandStart = true;
        continues = false;
      } else if (ch === '&' && text[this.pos + 1] === '>') {
        // `&>` and `&>>` redirect both outputs: part of the command.
        this.pos += text[this.pos + 2] === '>' ? 3 : 2;
      } else if (ch === '&' || ch === '|') {
        const next = text[this.pos + 1];
        const from = this.pos;
        if (next === ch || (ch === '|' && next === '&')) this.pos += 2;
        else this.pos++;
        // `|`, `|&`, `&&` and `||` continue the statement; a lone `&` ends it (run in the background).
        continues = ch === '|' || next === ch;
        if (!continues) cut();
        else if (next === ch && top && blocks.length === 0 && this.heredocs.length === 0) this.operators.push([from, this.pos]);
        commandStart = true;
      } else if (ch === '(') {
        this.pos++;
        this.code(')');
        commandStart = true;
        continues = false;
      } else if (ch === ')') {
        if (!top) {
          if (blocks.length > 0 && blocks[blocks.length - 1] === 'esac') {
            // A case pattern's closing parenthesis.
            this.pos++;
            commandStart = true;
            continue;
          }
          this.pos++;
          this.nesting--;
          return;
        }
        // Only a case pattern may close a parenthesis it never opened.
        if (blocks[blocks.length - 1] !== 'esac') this.unsure();
        this.pos++;
        commandStart = true;
      } else if (ch === '<' && text[this.pos + 1] === '<' && text[this.pos + 2] !== '<') {
        this.heredoc();
        commandStart = false;
      } else if (ch === '<' || ch === '>') {
        this.pos++;
        while (text[this.pos] === '<' || text[this.pos] === '>' || text[this.pos] === '&' || text[this.pos] === '|') this.pos++;
        // `<(...)` and `>(...)`: process substitution.
        if (text[this.pos] === '(') {
          this.pos++;
          this.code(')');
        }
      } else if (ch === '#') {
        const end = text.indexOf('\n', this.pos);
        this.pos = end === -1 ? text.length : end;
      } else {
        const word = this.word();
        continues = word === '!';
        // `[[ ... ]]`: its `&&`, `||`, `(` and `<` are the test's own, never cuts.
        if (word === ']]' && blocks[blocks.length - 1] === ']]') blocks.pop();
        else if (word === '[[' && commandStart) blocks.push(']]');
        if (commandStart) {
          const close = OPENERS[word];
          if (close !== undefined) blocks.push(close);
          else if (CLOSERS.has(word)) {
            if (blocks.pop() !== word) this.unsure();
          }
          commandStart = LEADING.has(word) || close !== undefined || CLOSERS.has(word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
          // After `for NAME`, `case WORD` or `select NAME` the next words are not commands.
          if (word === 'for' || word === 'case' || word === 'select') commandStart = false;
        }
      }
    }
    if (!top || blocks.length > 0 || this.heredocs.length > 0) this.unsure();
    this.nesting--;
  }

  /** One word outside quotes (quotes, escapes and expansions inside it included); returns its text. */
  private word(): string {
    const { text } = this;
    const start = this.pos;
    while (this.pos < text.length) {
      const ch = text[this.pos] as string;
      if (META.has(ch)) break;
      if (ch === '\\') this.pos += 2;
      else if (ch === "'") this.single();
      else if (ch === '"') this.double();
      else if (ch === '`') this.escapedTo('`', 1);
      else if (ch === '$' && text[this.pos + 1] === "'") this.escapedTo("'", 2);
      else if (ch === '$') this.dollar();
      else this.pos++;
    }
    return text.slice(start, this.pos);
  }
}

/** Where a text is cut: the piece before ends at `end`, the next one starts at `resume`. */
export interface Cut {
  end: number;
  /** Equal to `end` after a statement end; after the operator for an operator cut. */
  resume: number;
  /** For an operator cut: the `&&` or `||` that joins the last statement before it to the first after it. */
  operator?: '&&' | '||';
}

function scan(text: string): Cutter | undefined {
  const cutter = new Cutter(text);
  try {
    cutter.code();
    return cutter;
  } catch {
    // Unsure, a stack overflow or any other failure: no cuts (one parse of the whole text).
    return undefined;
  }
}

/**
 * Offsets at which `text` can be cut into pieces of at least `size` characters that each hold
 * whole top-level statements (see the file comment), or an empty list when it cannot be cut
 * safely. Linear in the length of the text; never throws.
 */
export function statementCuts(text: string, size: number): number[] {
  return scriptCuts(text, size, false).map((cut) => cut.end);
}

/**
 * {@link statementCuts}, and with `operators` also the top-level `&&`/`||` of long statements:
 * pieces of at least `size` characters, cut at statement ends where the text has them often enough
 * and between the commands of a chain where it does not. Empty when the text cannot be cut safely.
 */
export function scriptCuts(text: string, size: number, operators = true): Cut[] {
  const cutter = scan(text);
  if (cutter === undefined) return [];
  const out: Cut[] = [];
  let last = 0;
  const take = (cut: Cut): void => {
    if (cut.end - last >= size && text.length - cut.resume > 0) {
      out.push(cut);
      last = cut.resume;
    }
  };
  const ends = cutter.cuts;
  const ops = operators ? cutter.operators : [];
  // Both lists are in text order: merged, preferring a statement end where one comes soon enough
  // (an operator cut is taken only when no statement end lies within the next `size` characters).
  let e = 0;
  for (const [start, end] of ops) {
    while (e < ends.length && (ends[e] as number) <= start) take({ end: ends[e] as number, resume: ends[e++] as number });
    if (start - last < size) continue;
    const nextEnd = ends[e];
    if (nextEnd !== undefined && nextEnd - last < 2 * size) continue;
    take({ end: start, resume: end, operator: text.slice(start, end) as '&&' | '||' });
  }
  while (e < ends.length) take({ end: ends[e] as number, resume: ends[e++] as number });
  return out;
}
