// Plain command strings are analyzed as argv without tree-sitter; the answer must be exactly what
// the parser gives. Every case is compared field by field against the tree-sitter path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { analyzeArgvDetail, analyzeCommandDetail, plainWords } from '../../lib/bash/analyze.js';
import { loadShellParser } from '../../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

const PLAIN = [
  '/bin/true', 'ls -la', 'curl https://example.com/x', 'npm install', 'npm --version', 'git status',
  'git -C dir push', 'sudo -u root vim file', 'timeout 30s curl x', 'env FOO=1 wget x', 'FOO=bar make -j4',
  'rm -rf ./build', 'rm -- -rf', 'python3 -m http.server 8000', 'bash -c true', 'npx vite', 'go test ./...',
  'C:/tools/curl.exe x', 'npm.cmd install', 'nc -l 8080', 'xargs -n 1 curl', 'find . -type f -delete', 'dd if=/dev/zero of=x',
  'node-gyp build', 'pip install requests', 'gh release download v1.0.0', 'sh', 'a b c d e f g', 'vim main.go', 'top',
];
const NOT_PLAIN = ['echo "x"', "echo 'x'", 'a; b', 'a && b', 'a | b', 'echo $HOME', 'ls *', 'cat < f', 'echo `id`', 'if true', 'for x', 'ls ~', '# c', 'a\nb', 'echo \\x', '(a)', 'time ls', ''];

test('plain strings split into words; anything with shell syntax does not', () => {
  assert.equal(plainWords('  ls   -la  '), ['ls', '-la']);
  for (const text of PLAIN) assert.ok(plainWords(text) !== undefined, text);
  for (const text of NOT_PLAIN) assert.is(plainWords(text), undefined, JSON.stringify(text));
});

test('the argv fast path gives exactly the tree-sitter analysis for plain strings', () => {
  for (const text of PLAIN) {
    const fast = analyzeArgvDetail(plainWords(text)!);
    // A trailing newline is not plain (so this goes through tree-sitter) and changes nothing for bash.
    const parsed = analyzeCommandDetail(`${text}\n`);
    assert.not.ok(parsed.analysis.tooComplex, `tree-sitter parses ${text}`);
    assert.equal(fast.analysis, parsed.analysis, text);
  }
});

test.run();
