// SPDX-License-Identifier: MIT
// A long `&&`/`||` chain has no statement end to cut at: it is cut between its commands (at
// top-level operators only, never inside quotes, heredocs, substitutions, groups, tests or
// arithmetic), the pieces are parsed one by one and their lists joined into the one flat list a
// parse of the whole text gives. So chains of any length up to the 256 KiB maximum are analyzed,
// not declared too complex; a cut that cannot be joined makes the text parse whole, and a text too
// long for that stays unparseable (fail closed). (Correctness only: `npm run bench` measures time.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { analyzeCommandDetail } from '../../lib/bash/analyze.js';
import { classifyCommand } from '../../lib/bash/classify.js';
import { fastParse } from '../../lib/bash/fast-parse.js';
import { forgetRecentTrees, loadShellParser, MAX_PARSE_LENGTH, parseShell } from '../../lib/bash/parse.js';
import { scriptCuts } from '../../lib/bash/split.js';
import { onBothParsePaths } from '../helpers/parse-paths.js';

await loadShellParser();

/** `count` commands joined by `ops` in turn, `rm -rf build` in the middle and curl last, with the programs the analysis must report. */
function chain(count: number, ops: readonly string[]): { text: string; programs: string[] } {
  const items: string[] = [];
  const programs: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i === Math.floor(count / 2)) {
      items.push('rm -rf build');
      programs.push('rm');
    }
    if (i % 3 === 0) items.push(`cp a${i} b > log${i}`);
    else if (i % 3 === 1) items.push(`npm test | tail -${i}`);
    else items.push(`echo "x && ${i} || y; z" '&&'`);
    programs.push(...(i % 3 === 0 ? ['cp'] : i % 3 === 1 ? ['npm', 'tail'] : ['echo']));
  }
  items.push('curl https://x.test/done');
  programs.push('curl');
  return { text: items.map((item, i) => (i === 0 ? item : `${ops[i % ops.length] as string}${item}`)).join(''), programs };
}

const OPS = [
  ['&&', [' && ']],
  ['||', [' || ']],
  ['mixed && and ||', [' && ', ' || ', '&&', '||']],
  ['&& across lines', [' &&\n  ', ' ||\n']],
] as const;

for (const [name, ops] of OPS) {
  for (const count of [3_000, 8_000]) {
    test(`a chain of ${count} commands (${name}) is analyzed completely, on both parse paths`, () => {
      const { text, programs } = chain(count, ops);
      assert.ok(text.length <= MAX_PARSE_LENGTH, `${text.length}`);
      assert.ok(scriptCuts(text, 4096).some((cut) => cut.operator !== undefined), 'cut between commands');
      onBothParsePaths(() => {
        const detail = analyzeCommandDetail(text, { platform: 'linux' });
        assert.not.ok(detail.analysis.tooComplex, detail.analysis.reasons.tooComplex);
        assert.equal(detail.analysis.commands.map((command) => command.program), programs);
        assert.match(detail.analysis.reasons.destructive ?? '', /rm/);
        assert.match(detail.analysis.reasons.network ?? '', /curl/);
        assert.equal(classifyCommand(text, { platform: 'linux' }).categories, ['destructive', 'network']);
      });
    });
  }
}

test('the joined tree of a cut chain is the tree of the whole chain read in one go', () => {
  // 1,200 commands: few enough for the fast parser to read the whole text at once as well. (On the
  // tree-sitter path the shapes differ where tree-sitter-bash wraps `a && b > f` as a redirected
  // list; the analysis of both paths is compared above.)
  const { text } = chain(1_200, [' && ', ' || ']);
  assert.ok(text.length > 3 * 4096, `${text.length}`);
  const whole = fastParse(text);
  assert.ok(whole !== undefined);
  forgetRecentTrees();
  const cut = parseShell(text);
  assert.ok(cut.ok, cut.ok ? '' : cut.reason);
  assert.ok(scriptCuts(text, 4096).filter((c) => c.operator !== undefined).length >= 3);
  assert.equal(cut.root, whole);
});

/** Texts in which no operator is cut before the marked `@` (only a later top-level `&&` may be). */
const NO_CUT_INSIDE = [
  ['double quotes', 'echo "a && rm -rf / || b@" && '],
  ['single quotes', "echo 'a && rm -rf / || b@' && "],
  ['a heredoc started on the line', 'cat <<EOF && true\nrm -rf / && x\nEOF\n@true && '],
  ['a substitution', 'x=$(a && rm -rf / || b@) && '],
  ['backquotes', 'x=`a && rm -rf / || b@` && '],
  ['a subshell', '(a && rm -rf / || b@) && '],
  ['a brace group', '{ a && rm -rf / || b; @} && '],
  ['an if', 'if a && b; then c && rm -rf /; fi@ && '],
  ['a test', '[[ -f a && -f b || -d c ]]@ && '],
  ['arithmetic', '(( a && b || c ))@ && '],
  ['a comment', '# a && rm -rf /\n@true && '],
] as const;

for (const [name, marked] of NO_CUT_INSIDE) {
  test(`no operator cut inside ${name}`, () => {
    const limit = marked.indexOf('@');
    const text = marked.replace('@', '');
    const long = `${text.repeat(Math.ceil(30_000 / text.length))}true`;
    const cuts = scriptCuts(long, 1);
    assert.ok(cuts.some((cut) => cut.operator !== undefined), 'the chain itself is cut');
    for (const cut of cuts) {
      const offset = cut.end % text.length;
      assert.ok(offset === 0 || offset >= limit, `cut at ${offset} of ${JSON.stringify(text)}`);
    }
  });
}

test("bash's old $[...] arithmetic is not followed: no cut at all", () => {
  assert.equal(scriptCuts(`${'echo $[1 && 0] && '.repeat(2000)}true`, 1), []);
});

test('a chain whose pieces cannot be joined is read whole; too long for that, it stays unparseable and still names rm', () => {
  // A comment after an operator: the next piece starts with it, so the pieces are not joined.
  const text = `${'echo a && # note\n'.repeat(4000)}rm -rf build`;
  assert.ok(scriptCuts(text, 4096).some((cut) => cut.operator !== undefined));
  forgetRecentTrees();
  // Read whole within the time limit (a fast machine) the analysis is complete and exact;
  // otherwise it is unparseable, and rm is still named from the program names.
  const detail = analyzeCommandDetail(text, { platform: 'linux' });
  const categories = classifyCommand(text, { platform: 'linux' }).categories;
  if (detail.analysis.tooComplex) {
    assert.equal(categories, ['destructive', 'unparseable_command']);
  } else {
    assert.equal(detail.analysis.commands.map((command) => command.program), [...Array.from({ length: 4000 }, () => 'echo'), 'rm']);
    assert.equal(categories, ['destructive']);
  }
});

test('a long pipeline (not cut) beyond what can be read stays unparseable, with rm named', () => {
  const text = `${'cat a | '.repeat(20_000)}rm -rf build`;
  forgetRecentTrees();
  const categories = classifyCommand(text, { platform: 'linux' }).categories;
  assert.equal(categories, ['destructive', 'unparseable_command']);
});

test.run();
