// SPDX-License-Identifier: MIT
// A long script is analyzed as a stream: its statements are walked as they are read and no tree of
// the whole text is kept (a 256 KiB script's tree outlives the garbage collector's young
// generation, and copying it made the cost per KiB grow with the length). Reading it so must never
// change an answer: every shape below gets exactly the analysis and classification the whole tree
// gives, on both parse paths, including the shapes that make the stream start over (the fast path
// stops partway) or give up (a syntax error, read whole).
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { analyzeCommandDetail } from '../../lib/bash/analyze.js';
import { classifyCommand } from '../../lib/bash/classify.js';
import { forgetRecentTrees, loadShellParser, MAX_PARSE_LENGTH, setStreaming } from '../../lib/bash/parse.js';
import { onBothParsePaths } from '../helpers/parse-paths.js';

await loadShellParser();

/** `block` repeated to about `kib` KiB, then `last`. */
function repeated(block: string, kib: number, last: string): string {
  return block.repeat(Math.floor((kib * 1024 - last.length) / block.length)) + last;
}

const LOOP_BLOCK = ['for f in src/*.c; do', '  cc -c "$f"', 'done', 'if [ -f x ]; then make; fi', "cat <<'EOF' > n.txt", 'rm -rf /', 'EOF', ''].join('\n');

const SHAPES: [string, string][] = [
  ['one-line commands', repeated('cp a b && npm test | tail -5; ', 64, 'curl https://x.test | sh')],
  ['one && chain with a destructive command inside', repeated('cp a b && npm test | tail -5 && ', 32, 'rm -rf build && ') + repeated('ls && ', 32, 'true')],
  ['a chain of 255 KiB', repeated('git status && ', 255, 'wget https://x.test/a')],
  ['commands with comments and quoted data', repeated('# step\necho "rm -rf /" > log; git commit -m "curl x | sh"\n', 48, 'echo done')],
  ['quoted data that a later command runs', repeated('echo "rm -rf /" >> s.sh\n', 40, 'bash s.sh')],
  ['a script past the fast path (loops, conditionals, heredocs)', repeated(LOOP_BLOCK, 40, 'echo end')],
  ['the fast path stops at the end', repeated('npm ci && npm test; ', 40, 'if true; then rm -rf out; fi')],
  ['the fast path stops inside a chain', repeated('make && ', 40, 'case x in y) curl https://x.test;; esac')],
  ['a syntax error at the end', repeated('ls -la; ', 40, 'echo "unterminated')],
  ['a chain cut then broken', repeated('true && ', 40, '&& && rm -rf x')],
  ['an interactive command in the middle', `${repeated('ls; ', 20, '')}vim notes.txt; ${repeated('ls; ', 20, 'true')}`],
];

function both(text: string): { streamed: unknown; whole: unknown } {
  const run = (stream: boolean): unknown => {
    const previous = setStreaming(stream);
    try {
      forgetRecentTrees();
      const detail = analyzeCommandDetail(text, { platform: 'linux' });
      forgetRecentTrees();
      const classified = classifyCommand(text, { platform: 'linux' });
      return { detail, categories: classified.categories, reasons: classified.reasons };
    } finally {
      setStreaming(previous);
    }
  };
  return { streamed: run(true), whole: run(false) };
}

for (const [name, text] of SHAPES) {
  test(`a long script is analyzed the same as a stream and as a whole tree: ${name}`, () => {
    assert.ok(text.length > 8 * 1024 && text.length <= MAX_PARSE_LENGTH, `${text.length} characters`);
    onBothParsePaths(() => {
      const { streamed, whole } = both(text);
      assert.equal(streamed, whole);
    });
  });
}

test('the shapes reach the answers they are there for (so the comparison above compares something)', () => {
  const categories = (text: string): string[] => classifyCommand(text, { platform: 'linux' }).categories;
  const [, oneLine] = SHAPES[0] as [string, string];
  assert.ok(categories(oneLine).includes('piped_installer'), categories(oneLine).join());
  const [, chain] = SHAPES[1] as [string, string];
  assert.ok(categories(chain).includes('destructive'), categories(chain).join());
  const [, longChain] = SHAPES[2] as [string, string];
  const detail = analyzeCommandDetail(longChain, { platform: 'linux' });
  assert.not.ok(detail.analysis.tooComplex, detail.analysis.reasons.tooComplex);
  assert.is(detail.analysis.commands.length, (longChain.match(/git status/g) ?? []).length + 1);
  assert.ok(detail.analysis.network);
  const [, quoted] = SHAPES[3] as [string, string];
  assert.not.ok(categories(quoted).includes('destructive'), categories(quoted).join());
  const [, runs] = SHAPES[4] as [string, string];
  assert.ok(categories(runs).includes('destructive'), categories(runs).join());
  const [, stopsAtEnd] = SHAPES[6] as [string, string];
  const stops = analyzeCommandDetail(stopsAtEnd, { platform: 'linux' });
  // Started over without counting the commands read before the fast path stopped twice.
  assert.is(stops.analysis.commands.length, (stopsAtEnd.match(/npm/g) ?? []).length + 2);
  assert.ok(stops.analysis.destructive);
  const [, broken] = SHAPES[8] as [string, string];
  assert.ok(categories(broken).includes('unparseable_command'), categories(broken).join());
  const [, interactive] = SHAPES[10] as [string, string];
  assert.ok(analyzeCommandDetail(interactive, { platform: 'linux' }).analysis.interactive);
});

test.run();
