// SPDX-License-Identifier: MIT
// A strict reader of git's config file syntax, and the list of keys that are safe for a sandboxed
// command to leave in a config it created. It follows git's own grammar (sections with quoted or
// dotted subsections, keys right after a header on the same line, quoted values, escapes,
// backslash-newline continuations, `#`/`;` comments): anything it does not fully understand is a
// parse failure, and the caller treats the file as unsafe. Input is a byte string (one char code
// per byte), so paths found in values come out as byte strings too.

/** One `section[.subsection].key` assignment; `value` is null for a bare boolean key. */
export interface ConfigEntry {
  section: string;
  subsection: string | undefined;
  key: string;
  value: string | null;
}

// git's own isspace: space, tab, CR, LF only.
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isAlpha = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isKeyChar = (c: string) => isAlpha(c) || (c >= '0' && c <= '9') || c === '-';
const EOF = '';

/** Parses a config file; undefined when git would reject it or it holds a byte git might read differently. */
export function parseGitConfig(text: string): ConfigEntry[] | undefined {
  if (text.includes('\0')) return undefined;
  let pos = text.startsWith('\xef\xbb\xbf') ? 3 : 0;
  // git reads CRLF as LF.
  const next = (): string => {
    if (pos >= text.length) return EOF;
    const c = text[pos++] as string;
    if (c === '\r' && text[pos] === '\n') {
      pos++;
      return '\n';
    }
    return c;
  };
  const out: ConfigEntry[] = [];
  let section: string | undefined;
  let subsection: string | undefined;
  let comment = false;
  for (;;) {
    const c = next();
    if (c === EOF) return out;
    if (c === '\n') {
      comment = false;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === '#' || c === ';') {
      comment = true;
      continue;
    }
    if (c === '[') {
      const header = readHeader(next);
      if (header === undefined) return undefined;
      [section, subsection] = header;
      continue;
    }
    if (!isAlpha(c) || section === undefined) return undefined;
    let key = c.toLowerCase();
    let d = next();
    while (d !== EOF && isKeyChar(d)) {
      key += d.toLowerCase();
      d = next();
    }
    while (d === ' ' || d === '\t') d = next();
    let value: string | null = null;
    if (d === '=') {
      const parsed = readValue(next);
      if (parsed === undefined) return undefined;
      value = parsed;
    } else if (d !== '\n' && d !== EOF) {
      return undefined;
    }
    out.push({ section, subsection, key, value });
  }
}

/** `[name]`, `[name "sub"]` or the old `[name.sub]`; the name is case-insensitive. */
function readHeader(next: () => string): [string, string | undefined] | undefined {
  let name = '';
  for (;;) {
    const c = next();
    if (c === EOF || c === '\n') return undefined;
    if (c === ']') break;
    if (isSpace(c)) return readQuotedSubsection(name, next);
    if (!isKeyChar(c) && c !== '.') return undefined;
    name += c.toLowerCase();
  }
  const dot = name.indexOf('.');
  if (name === '' || dot === 0) return undefined;
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
}

function readQuotedSubsection(name: string, next: () => string): [string, string] | undefined {
  let c: string;
  do {
    c = next();
    if (c === '\n' || c === EOF) return undefined;
  } while (isSpace(c));
  if (c !== '"' || name === '' || name.includes('.')) return undefined;
  let sub = '';
  for (;;) {
    c = next();
    if (c === '\n' || c === EOF) return undefined;
    if (c === '"') break;
    if (c === '\\') {
      c = next();
      if (c === '\n' || c === EOF) return undefined;
    }
    sub += c;
  }
  return next() === ']' ? [name, sub] : undefined;
}

/** A value up to the end of its (possibly continued) line: quotes, escapes, trailing comments. */
function readValue(next: () => string): string | undefined {
  let value = '';
  let quote = false;
  let comment = false;
  let spaces = 0;
  for (;;) {
    let c = next();
    if (c === '\n' || c === EOF) return quote ? undefined : value;
    if (comment) continue;
    if (isSpace(c) && !quote) {
      if (value.length > 0) spaces++;
      continue;
    }
    if (!quote && (c === ';' || c === '#')) {
      comment = true;
      continue;
    }
    value += ' '.repeat(spaces);
    spaces = 0;
    if (c === '\\') {
      c = next();
      if (c === '\n') continue;
      const escaped = ({ t: '\t', b: '\b', n: '\n', '"': '"', '\\': '\\' } as Record<string, string>)[c];
      if (escaped === undefined) return undefined;
      value += escaped;
      continue;
    }
    if (c === '"') {
      quote = !quote;
      continue;
    }
    value += c;
  }
}

/** Keys git reads without running anything, by section; `*` marks a section with any subsection. */
const SAFE_KEYS: Record<string, readonly string[]> = {
  core: [
    'repositoryformatversion', 'filemode', 'bare', 'logallrefupdates', 'ignorecase', 'precomposeunicode',
    'symlinks', 'worktree', 'sparsecheckout', 'sparsecheckoutcone', 'autocrlf', 'eol', 'safecrlf', 'quotepath',
    'untrackedcache', 'commitgraph', 'multipackindex', 'abbrev', 'compression', 'checkstat', 'trustctime',
  ],
  extensions: ['objectformat', 'worktreeconfig', 'refstorage', 'partialclone', 'preciousobjects', 'noop'],
  user: ['name', 'email'],
  init: ['defaultbranch'],
  index: ['version', 'sparse'],
  gc: ['auto', 'autodetach'],
  pull: ['rebase', 'ff'],
  fetch: ['prune'],
  push: ['default', 'autosetupremote'],
  receive: ['denycurrentbranch'],
  lfs: ['repositoryformatversion'],
  clone: ['defaultremotename'],
  feature: ['manyfiles'],
  submodule: ['active'],
  'remote*': ['url', 'pushurl', 'fetch', 'push', 'tagopt', 'mirror', 'prune', 'promisor', 'partialclonefilter'],
  'branch*': ['remote', 'merge', 'rebase', 'pushremote', 'description'],
  'submodule*': ['url', 'active', 'branch', 'ignore', 'fetchrecursesubmodules'],
};

/**
 * Whether git reads this entry as data only: it names no program, hook directory, include or
 * pager, so leaving it in a config cannot make host git run anything. Everything not listed
 * (core.fsmonitor, core.hooksPath, core.sshCommand, core.pager, core.editor, diff.external, filter
 * and merge drivers, include.path, includeIf, uploadpack.packObjectsHook, alias, ...) is unsafe.
 */
export function isSafeConfigEntry(entry: ConfigEntry): boolean {
  const keys = SAFE_KEYS[entry.subsection === undefined ? entry.section : `${entry.section}*`];
  return keys !== undefined && keys.includes(entry.key);
}

/** The entries of `text` that are not safe, or ['<unparseable>'] when it cannot be read strictly. */
export function unsafeConfigKeys(text: string): string[] {
  const entries = parseGitConfig(text);
  if (entries === undefined) return ['<unparseable>'];
  return entries.filter((e) => !isSafeConfigEntry(e)).map(configName);
}

export function configName(e: ConfigEntry): string {
  return e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
}

/**
 * What a change to an existing repository's config added that could make host git run anything:
 * the entries outside the safe list, plus core.worktree (it moves where hooks and relative paths
 * resolve), must be the same, in the same order, before and after. Returns the names of those
 * that differ (empty when the change is data only). A config that was or is unparseable: any
 * change counts.
 */
/**
 * The program-running entries (`name=value`) of config text `b` that `a` does not have; undefined
 * when either cannot be read strictly. For a check whose "before" is old (a killed run's), where
 * only what was added may be the command's.
 */
export function riskyEntriesAdded(a: string | undefined, b: string): string[] | undefined {
  const now = parseGitConfig(b);
  const was = a === undefined ? [] : parseGitConfig(a);
  if (now === undefined || was === undefined) return undefined;
  const risky = (entries: ConfigEntry[]) => entries.filter((e) => !isSafeConfigEntry(e) || configName(e) === 'core.worktree').map((e) => `${configName(e)}=${e.value ?? ''}`);
  const had = risky(was);
  return risky(now).filter((entry) => !had.includes(entry));
}

export function riskyConfigChange(before: string | undefined, after: string): string[] {
  if (before === after) return [];
  const now = parseGitConfig(after);
  if (now === undefined) return ['<unparseable>'];
  const was = before === undefined ? [] : parseGitConfig(before);
  if (was === undefined) return ['<a change to a config this check cannot read strictly>'];
  const risky = (entries: ConfigEntry[]) => entries.filter((e) => !isSafeConfigEntry(e) || configName(e) === 'core.worktree').map((e) => `${configName(e)}=${e.value ?? ''}`);
  const a = risky(was);
  const b = risky(now);
  if (a.length === b.length && a.every((entry, i) => entry === b[i])) return [];
  const changed = [...b.filter((entry) => !a.includes(entry)), ...a.filter((entry) => !b.includes(entry))].map((entry) => entry.replace(/=[^]*$/, ''));
  return changed.length > 0 ? [...new Set(changed)] : ['<program-running entries reordered>'];
}

