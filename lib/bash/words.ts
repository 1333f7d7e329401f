// SPDX-License-Identifier: MIT
// Static word text from syntax nodes, and program-name normalization (paths, quotes, .exe).
import type { ShNode } from './parse.js';

/** A word of a simple command: its static text and whether expansions made part of it unknown. */
export interface Word {
  /** Concatenated literal parts (bare, single- and double-quoted); expansions add nothing. */
  text: string;
  /** Some part of the word is an expansion or substitution. */
  dynamic: boolean;
  /** The word has at least one literal part. */
  literal: boolean;
  /** The word's source text, quotes and backslashes included (used to normalize program names). */
  raw?: string;
}

const DYNAMIC_TYPES = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
]);

/** Whether a node type is an expansion or substitution (its value is only known at run time). */
export function isDynamicNode(type: string): boolean {
  return DYNAMIC_TYPES.has(type);
}

function unescapeBare(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\(\r?\n|[\s\S])/g, (_match, ch: string) => (ch === '\n' || ch === '\r\n' ? '' : ch));
}

function unescapeDouble(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\(\r?\n|[$`"\\])/g, (_match, ch: string) => (ch === '\n' || ch === '\r\n' ? '' : ch));
}

const ANSI_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', e: '\x1b' };

function unescapeAnsi(raw: string): string {
  return raw.replace(/\\([\s\S])/g, (_match, ch: string) => ANSI_ESCAPES[ch] ?? `\\${ch}`);
}

function quotedText(node: ShNode, source: string, open: number): Word {
  let text = '';
  let dynamic = false;
  let cursor = node.start + open;
  const stop = node.end - 1;
  for (const child of node.children) {
    if (DYNAMIC_TYPES.has(child.type)) {
      if (child.start > cursor) text += source.slice(cursor, child.start);
      cursor = Math.max(cursor, child.end);
      dynamic = true;
    }
  }
  if (stop > cursor) text += source.slice(cursor, stop);
  text = unescapeDouble(text);
  return { text, dynamic, literal: text.length > 0 || !dynamic };
}

/** The static text of a word node (see {@link Word}), with its source text in `raw`. */
export function wordOf(node: ShNode, source: string): Word {
  const word = staticWord(node, source);
  word.raw = source.slice(node.start, node.end);
  return word;
}

function staticWord(node: ShNode, source: string): Word {
  switch (node.type) {
    case 'word':
      return { text: unescapeBare(source.slice(node.start, node.end)), dynamic: false, literal: true };
    case 'raw_string':
      return { text: source.slice(node.start + 1, Math.max(node.start + 1, node.end - 1)), dynamic: false, literal: true };
    case 'ansi_c_string':
      return { text: unescapeAnsi(source.slice(node.start + 2, Math.max(node.start + 2, node.end - 1))), dynamic: false, literal: true };
    case 'string':
      return quotedText(node, source, 1);
    case 'translated_string':
      return quotedText(node, source, 2);
    case 'concatenation': {
      let text = '';
      let dynamic = false;
      let literal = false;
      for (const child of node.children) {
        const part = staticWord(child, source);
        text += part.text;
        dynamic ||= part.dynamic;
        literal ||= part.literal;
      }
      return { text, dynamic, literal };
    }
    default:
      if (DYNAMIC_TYPES.has(node.type)) return { text: '', dynamic: true, literal: false };
      return { text: source.slice(node.start, node.end), dynamic: false, literal: true };
  }
}

const EXEC_SUFFIX = /\.(?:exe|cmd|bat|com)$/;
const WINDOWS_PATH = /^(?:[a-z]:|\\\\|\.\.?\\)|\\.*\.(?:exe|cmd|bat|com|ps1)$/i;

/**
 * Normalizes a program token (as the Go Zero CLI does, so both classify a name alike): strips
 * `$(`/`)` and quoting, takes the basename (backslash semantics for Windows paths), lower-cases,
 * and drops one executable suffix.
 */
export function normalizeProgramToken(token: string): string {
  let value = token.trim();
  if (value.startsWith('$(')) value = value.slice(2);
  if (value.endsWith(')')) value = value.slice(0, -1);
  const unquoted = value.replace(/["'`]/g, '');
  if (WINDOWS_PATH.test(unquoted)) {
    const parts = unquoted.split(/[\\/]/);
    value = parts[parts.length - 1] ?? '';
  } else {
    value = value.replace(/["'`\\]/g, '');
    const slash = value.lastIndexOf('/');
    if (slash !== -1) value = value.slice(slash + 1);
  }
  // A drive-relative Windows path (`C:curl.exe`) names the program after the drive letter.
  value = value.toLowerCase().replace(/^[a-z]:/, '');
  return value.replace(EXEC_SUFFIX, '');
}
