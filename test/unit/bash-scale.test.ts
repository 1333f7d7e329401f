// SPDX-License-Identifier: MIT
// Long scripts are analyzed, not declared too complex: a script is cut at its top-level statement
// ends and read piece by piece, so scripts up to the 256 KiB maximum get the same answer as their
// statements one by one. The cuts never fall inside quotes, heredocs, comments, substitutions or
// compound commands; a cut that would be wrong is caught (the piece has a syntax error) and the
// text is then parsed whole. (Correctness only: time per KiB is measured by `npm run bench`.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { analyzeCommandDetail } from '../../lib/bash/analyze.js';
import { classifyCommand } from '../../lib/bash/classify.js';
import { forgetRecentTrees, loadShellParser, MAX_PARSE_LENGTH, parseShell, setFastPath, type ShNode } from '../../lib/bash/parse.js';
import { statementCuts } from '../../lib/bash/split.js';
import { onBothParsePaths } from '../helpers/parse-paths.js';

await loadShellParser();

/** A block of ordinary script: loops, conditionals, case, heredoc data, a function, subshells, continuations. */
const BLOCK = [
  '# build step',
  'set -e',
  'for f in src/*.c; do',
  '  cc -c "$f" -o "${f%.c}.o"',
  'done',
  'if [ -f Makefile ]; then cmake --build build; else echo "no makefile; rm -rf /"; fi',
  'case "$1" in',
  '  test) npm test ;;',
  '  (lint) npm run lint;;',
  'esac',
  "cat <<'EOF' > notes.txt",
  'rm -rf /',
  'curl https://data.test | sh',
  'EOF',
  'build() { echo "building $1"; }',
  'build x && ls *.o | wc -l',
  '(cd dist && tar czf ../out.tgz .)',
  'x=$(git rev-parse HEAD); echo "$x" \\',
  '  done',
  "printf '%s\\n' 'a;b' \"c",
  'd"',
  'wait',
  '',
].join('\n');

/** The programs of the block's commands, in order, as the analysis reports them. */
const BLOCK_PROGRAMS = ['set', 'cc', 'cmake', 'echo', 'npm', 'npm', 'cat', 'echo', 'build', 'ls', 'wc', 'cd', 'tar', 'git', 'echo', 'printf', 'wait'];

function scriptOf(kib: number, middle: string, last: string): { text: string; blocks: number } {
  const blocks = Math.max(2, Math.floor((kib * 1024 - middle.length - last.length - 2) / BLOCK.length));
  const half = Math.floor(blocks / 2);
  return { text: BLOCK.repeat(half) + `${middle}\n` + BLOCK.repeat(blocks - half) + last, blocks };
}

test('the block alone is read as the listed commands, with its heredoc and quoted text as data', () => {
  const detail = analyzeCommandDetail(BLOCK, { platform: 'linux' });
  assert.not.ok(detail.analysis.tooComplex, detail.analysis.reasons.tooComplex);
  assert.equal(detail.analysis.commands.map((command) => command.program), BLOCK_PROGRAMS);
  assert.not.ok(detail.analysis.network, detail.analysis.reasons.network);
  assert.not.ok(detail.analysis.destructive, detail.analysis.reasons.destructive);
});

for (const kib of [1, 16, 64, 255]) {
  test(`a ${kib} KiB script is analyzed completely: every command in order, the destructive one in the middle, curl at the end`, () => {
    const { text, blocks } = scriptOf(kib, 'rm -rf build', 'curl https://x.test/done\n');
    assert.ok(text.length <= MAX_PARSE_LENGTH);
    onBothParsePaths(() => {
      const detail = analyzeCommandDetail(text, { platform: 'linux' });
      assert.not.ok(detail.analysis.tooComplex, detail.analysis.reasons.tooComplex);
      const programs = detail.analysis.commands.map((command) => command.program);
      const half = Math.floor(blocks / 2);
      const expected = [
        ...Array.from({ length: half }, () => BLOCK_PROGRAMS).flat(),
        'rm',
        ...Array.from({ length: blocks - half }, () => BLOCK_PROGRAMS).flat(),
        'curl',
      ];
      assert.equal(programs, expected);
      assert.match(detail.analysis.reasons.destructive ?? '', /rm/);
      assert.match(detail.analysis.reasons.network ?? '', /curl/);
      const categories = classifyCommand(text, { platform: 'linux' }).categories;
      assert.ok(categories.includes('network') && categories.includes('destructive'), categories.join());
      assert.not.ok(categories.includes('unparseable_command'), categories.join());
    });
  });
}

test('long scripts are cut, and every cut ends a statement the parser reads without error', () => {
  const { text } = scriptOf(64, 'rm -rf build', 'true\n');
  const cuts = statementCuts(text, 4096);
  assert.ok(cuts.length >= 10, `${cuts.length} cuts`);
  setFastPath(false);
  try {
    let start = 0;
    for (const end of [...cuts, text.length]) {
      // A syntax error is the answer that matters; a time limit met on a loaded machine is no
      // answer at all, so that piece is parsed again (a few times at most).
      let piece = parseShell(text.slice(start, end));
      for (let retry = 0; retry < 5 && !piece.ok && piece.unread === true; retry++) {
        forgetRecentTrees();
        piece = parseShell(text.slice(start, end));
      }
      assert.ok(piece.ok, `piece ${start}-${end}: ${piece.ok ? '' : piece.reason}`);
      start = end;
    }
  } finally {
    setFastPath(true);
  }
});

/** Texts in which no statement ends before the marked `@` (the cut may only come after it). */
const NO_CUT_INSIDE = [
  ['double quotes', 'echo "a\nrm -rf /\nb@"\n'],
  ['single quotes', "echo 'a\nrm -rf /;\n@'\n"],
  ['ANSI-C quotes', "echo $'a\\'\nrm -rf /;\n@'\n"],
  ['a heredoc', 'cat <<EOF\nrm -rf /\nEOF@\n'],
  ['a quoted heredoc delimiter', "cat <<'E F'\nrm -rf /\nE F@\n"],
  ['a tab-stripped heredoc', 'cat <<-EOF\n\trm -rf /\n\tEOF@\n'],
  ['two heredocs on one line', 'cat <<A <<B\nx\nA\nrm -rf /\nB@\n'],
  ['a substitution', 'x=$(\necho a;\nrm -rf /\n@)\n'],
  ['backquotes', 'x=`\necho a;\nrm -rf /\n@`\n'],
  ['a subshell', '(\ncd a;\nrm -rf /\n@)\n'],
  ['a brace group', '{\ncd a;\nrm -rf /\n@}\n'],
  ['an if', 'if true; then\nrm -rf /;\nfi@\n'],
  ['a while loop', 'while read x; do\nrm -rf "$x";\ndone@ < list\n'],
  ['a case', 'case $x in\na) rm -rf /;;\n(b) true;;\nesac@\n'],
  ['a pipeline continued on the next line', 'cat x |\nsh@\n'],
  ['an and-list continued on the next line', 'true &&\nrm -rf /@\n'],
  ['a line continuation', 'rm \\\n-rf /@\n'],
  ['a comment with a quote', "# it's here\n@echo a\n"],
  ['a parameter expansion', 'echo ${x:-a\n;b}@\n'],
] as const;

for (const [name, marked] of NO_CUT_INSIDE) {
  test(`no cut inside ${name}`, () => {
    const limit = marked.indexOf('@');
    const text = marked.replace('@', '');
    // Repeated so that it is long enough to be cut at all; each copy must be cut only at its end.
    const long = text.repeat(Math.ceil(20_000 / text.length));
    for (const at of statementCuts(long, 1)) {
      const offset = at % text.length;
      assert.ok(offset === 0 || offset >= limit, `cut at ${offset} of ${JSON.stringify(text)}`);
    }
  });
}

test('an unterminated quote, heredoc or block means no cut at all', () => {
  for (const tail of ['echo "a', "echo 'a", 'cat <<EOF\na', 'if true; then', 'x=$(a', 'echo `a', 'esac', ')', 'done']) {
    const text = `${'echo a\n'.repeat(3000)}${tail}\n${'echo b\n'.repeat(100)}`;
    assert.equal(statementCuts(text, 1024), [], tail);
  }
});

test('a syntax error in a long script is reported on the whole text, not hidden by cutting', () => {
  // The cutter does not check the grammar: the piece with `&& &&` has the error.
  const text = `${'echo a\n'.repeat(3000)}true && && false\n${'curl x\n'.repeat(100)}`;
  assert.ok(statementCuts(text, 4096).length > 0);
  forgetRecentTrees();
  const parsed = parseShell(text);
  assert.not.ok(parsed.ok);
  const categories = classifyCommand(text).categories;
  assert.ok(categories.includes('network'), categories.join());
  assert.ok(categories.includes('unparseable_command'), categories.join());
});

test('the offsets of a cut script point into the whole text', () => {
  const text = `${'echo a\n'.repeat(3000)}curl https://x.test/end\n`;
  forgetRecentTrees();
  const parsed = parseShell(text);
  assert.ok(parsed.ok);
  const last = parsed.root.children[parsed.root.children.length - 1] as ShNode;
  assert.is(text.slice(last.start, last.end), 'curl https://x.test/end');
});

test('deep nesting past the limit still fails closed in a long script', () => {
  const text = `${'echo a\n'.repeat(3000)}${'( '.repeat(500)}rm -rf build${' )'.repeat(500)}\n`;
  const categories = classifyCommand(text).categories;
  assert.ok(categories.includes('unparseable_command'), categories.join());
  assert.ok(categories.includes('destructive'), categories.join());
});

test.run();
