// SPDX-License-Identifier: MIT
// The fast parser (lib/bash/fast-parse.ts) builds trees for the common subset of bash without
// tree-sitter. Its answers must be exactly tree-sitter's: every command of the corpus and thousands
// of generated ones are analyzed, classified, checked for interactivity and split into prefix
// segments with the fast path on and off, and the results compared field by field.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { analyzeCommand, analyzeCommandDetail } from '../../lib/bash/analyze.js';
import { classifyCommand } from '../../lib/bash/classify.js';
import { fastParse } from '../../lib/bash/fast-parse.js';
import { detectInteractiveCommand } from '../../lib/bash/interactive.js';
import { loadShellParser, setFastPath, treeSitterParses } from '../../lib/bash/parse.js';
import { classifyRisk } from '../../lib/bash/risk.js';
import { splitSafeSegments } from '../../lib/bash/prefix.js';
import { REPO_ROOT } from '../helpers/cli.js';

await loadShellParser();

function everything(text: string): unknown {
  const detail = analyzeCommandDetail(text, { platform: 'linux' });
  return {
    analysis: detail.analysis,
    pipedInstaller: detail.pipedInstaller,
    recovered: detail.recovered,
    interactive: detail.interactive,
    codeText: detail.codeText,
    classification: classifyCommand(text, { platform: 'linux' }).categories,
    interactiveVerdict: detectInteractiveCommand(text, { platform: 'linux' }),
    segments: splitSafeSegments(text),
  };
}

function compare(texts: Iterable<string>): { accepted: number; total: number } {
  let accepted = 0;
  let total = 0;
  for (const text of texts) {
    total++;
    if (fastParse(text) === undefined) continue;
    accepted++;
    setFastPath(true);
    const fast = everything(text);
    setFastPath(false);
    let slow: unknown;
    try {
      slow = everything(text);
    } finally {
      setFastPath(true);
    }
    assert.equal(fast, slow, JSON.stringify(text));
  }
  return { accepted, total };
}

function corpusCommands(): string[] {
  const out: string[] = [];
  for (const name of ['classify.json', 'command_prefix.json', 'interactive.json', 'safe_commands.json']) {
    const cases = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'bash', name), 'utf8')) as { command?: unknown }[];
    for (const entry of cases) if (typeof entry.command === 'string') out.push(entry.command);
  }
  return out;
}

const HANDWRITTEN = [
  'git status', 'npm run build && npm test', 'cat package.json | grep version', 'cd src && go test ./... 2>&1 | tail -50',
  'git add -A && git commit -m "Fix the parser: handle rm -rf in quotes"', 'mkdir -p build && cmake -S . -B build && cmake --build build -j 8',
  'cat a | grep b | sort -u >> out && true', 'echo "rm -rf /"', "echo 'curl x | sh'", 'FOO=bar BAZ="a b" make -j4 test',
  'echo "$HOME/x" ${USER} $PATH', 'x 2>&1 | tail -5', 'cmd > /dev/tcp/h/80', 'a || b; c && d | e', 'curl -fsSL x | sh',
  'sudo rm -rf /', 'bash -c "curl x"', "sh -c 'rm -rf build'", 'a >out 2>&1', 'a 2>err <in', 'env -S "curl x"', 'eval "rm -rf /"',
  'find . -name x -exec rm -rf {} +', 'xargs curl', 'timeout 5 ssh host', 'git clone /src', 'git clone ../src', 'git clone "$SRC"',
  'chmod 777 /usr/local', 'chmod -R 000 /', "'C:curl.exe' https://example.com", 'vim a', 'tail -f log | grep x', 'less x',
  'echo a"b"c\'d\'$E', 'echo ""', "echo ''", 'a; ', 'a ;b', 'a&&b', 'a||b', 'a|b', 'ls -la ~/x', 'echo ~', 'echo a=b c=d',
  'A=1', 'A=1 B=2', 'A= cmd', '"if" x', 'export A=1', 'unset A', 'local x', '10>x cmd', 'cmd 10>x', 'cmd >&2', 'cmd 2>&1 >x',
  'cmd >x y', '> x cmd', 'cmd >', 'cmd |', '| cmd', 'cmd &&', 'a ; ; b', 'a;;', 'x=$(id)', 'echo "a\\"b"', 'echo "${x:-y}"',
  'echo "$1"', 'echo $@', 'git commit -m "$(cat msg)"', 'npm test -- --grep "a b"', 'python3 -m pytest -q tests/test_api.py',
  'echo "$(date) build done" >> build.log', 'ls -la | grep "\\.ts" | wc -l; echo done', 'echo "a\\$b" "c\\\\d" "e\\qf"',
  'x=$(pwd) y', 'echo $(a; b\nc)', 'echo "a$(b "c")d"$(e)f', 'echo $(($x+1))', 'echo $(', 'echo $()', 'a # c\nb', 'a; # c', 'a;# c',
  '# only a comment', '# c\n', 'a\n\nb\n', 'a &&\nb', 'a |\n b', 'a\n&& b', 'a\n;b', 'echo a#b', 'echo "a"#b', 'a # c\r\nb',
  'for f in src/*.ts; do echo "$f"; wc -l "$f"; done', 'for x in a b\ndo\n  c\ndone', 'for x; do a; done', 'for x in a; do done',
  'for x in a; do curl x; done > out', 'for x in a do; do b; done', 'for x in $(ls); do for y in a; do rm -rf $y; done; done && echo ok',
  'for x in a; do b; done | sh', 'ls *.c a?b [ab] $? $*', 'echo "$(for x in a; do curl $x; done)"', 'for in a; do b; done',
  '$(curl x | sh)', 'echo "$(rm -rf /)"', 'cat <(curl x)', 'echo "a\\\nb"', 'x=1 $(id)', 'echo )', '(a)', 'echo $(a))',
];

test('the fast path reads the corpus and the hand-written cases exactly as tree-sitter does', () => {
  const { accepted, total } = compare([...corpusCommands(), ...HANDWRITTEN]);
  // The comparison only means something if the fast path takes a good part of the input.
  assert.ok(accepted > total / 4, `fast path took ${accepted} of ${total}`);
});

const WORDS = [
  'git', 'status', 'rm', '-rf', '-r', '-f', 'curl', 'https://x.test/a', 'npm', 'install', 'test', 'run', 'dev', 'sh', 'bash', '-c',
  'echo', 'cat', 'grep', 'sudo', 'env', 'timeout', '30', 'xargs', 'ssh', 'vim', 'less', 'tail', '-f', 'chmod', '777', '000', '-R', '/',
  '/usr/local', '/etc', 'clone', '../src', 'file:///r', 'dd', 'if=/dev/zero', 'of=/dev/sda', 'find', '-delete', '-exec', '{}', 'mkfs',
  '"a b"', '"rm -rf /"', "'curl x | sh'", '"$HOME"', '$HOME', '${USER}', '"x$Y"', 'FOO=bar', 'A="1 2"', '--opt=v', '~/x', 'C:curl.exe',
  "'C:curl.exe'", 'python3', '-m', 'http.server', 'pip', 'go', 'get', 'docker', 'pull', 'gh', 'pr', 'apt-get', 'node', 'a.js', 'x"y"z',
  'eval', 'watch', 'su', 'nohup', 'command', '-v', 'exec', 'time', 'if', 'for', 'export', '5', '-5', 'top', 'yes', 'base64', '-d',
  '$(pwd)', '"$(id -u)"', '$(curl x)', '"$(rm -rf /)"', 'x=$(pwd)', '"a\\"b"', '"c\\\\d"', '$(a && b | c)', '"x$(y)z"', '#', '*.ts', 'src/*', 'a?b', 'for', 'do', 'done', 'in', 'for x in a; do rm -rf /; done',
];
const OPERATORS = [' && ', ' || ', '; ', ' | ', ' ', ' ', ' ', ' ', ' 2>&1 ', ' > out ', ' >> /dev/tcp/h/1 ', ' < in ', ' >&2 ', '\n', ' # note\n', ' &&\n ', ';\n\n'];

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('the fast path reads 4,000 generated commands exactly as tree-sitter does', () => {
  const next = random(20261201);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const texts: string[] = [];
  for (let i = 0; i < 4000; i++) {
    let text = pick(WORDS);
    const length = 1 + Math.floor(next() * 12);
    for (let j = 0; j < length; j++) text += pick(OPERATORS) + pick(WORDS);
    texts.push(text);
  }
  const { accepted, total } = compare(texts);
  // Most generated texts contain something only tree-sitter reads (a glob, `{}`, a keyword).
  assert.ok(accepted >= 250, `fast path took ${accepted} of ${total}`);
});

test('long chains and pipelines stay flat and are analyzed, not declared too complex', () => {
  const chain = Array.from({ length: 2_400 }, (_, i) => `echo ${i}`).join(' && ');
  const root = fastParse(chain);
  assert.ok(root !== undefined);
  assert.is(root.children.length, 1);
  assert.is(root.children[0]?.children.length, 4_799);
  const detail = analyzeCommandDetail(`${chain} && curl x`);
  assert.not.ok(detail.analysis.tooComplex, detail.analysis.reasons.tooComplex);
  assert.ok(detail.analysis.network);
  assert.is(detail.analysis.commands.length, 2_401);
});

test('tree-sitter chains (here with glob classes, which only it reads) are flattened too: 500 links (past the old 400-level limit), then curl', () => {
  for (const op of ['&&', '||', ';']) {
    const chain = `${Array.from({ length: 500 }, (_, i) => `ls x[0-9].${i}`).join(` ${op} `)} ${op} curl x`;
    assert.is(fastParse(chain), undefined);
    const detail = analyzeCommandDetail(chain);
    assert.not.ok(detail.analysis.tooComplex, `${op}: ${detail.analysis.reasons.tooComplex ?? ''}`);
    assert.ok(detail.analysis.network, op);
    assert.is(detail.analysis.commands.length, 501, op);
  }
});

test('nesting deeper than the documented limit still fails closed', () => {
  const deep = `${'( '.repeat(500)}rm -rf build${' )'.repeat(500)}`;
  const classified = classifyCommand(deep);
  assert.ok(classified.categories.includes('unparseable_command'), classified.categories.join());
  assert.ok(classified.categories.includes('destructive'), classified.categories.join());
});

test('analysis, risk, interactivity and prefix segments share one parse of a command', () => {
  const command = 'while read f; do wc -l "$f"; done < list && curl https://x.test/$(date +%s)';
  assert.is(fastParse(command), undefined);
  const before = treeSitterParses();
  analyzeCommand(command);
  const risk = classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command } });
  detectInteractiveCommand(command);
  splitSafeSegments(command);
  assert.ok(risk.categories.includes('network'));
  assert.is(treeSitterParses() - before, 1);
  // The fast path parses nothing with tree-sitter at all.
  const simple = 'cat a | grep b | sort -u >> out && true';
  const start = treeSitterParses();
  analyzeCommand(simple);
  classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command: simple } });
  assert.is(treeSitterParses(), start);
});

test.run();
