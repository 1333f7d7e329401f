// SPDX-License-Identifier: MIT
// Windows command-line quoting, checked against an independent reader of the MSVC/CommandLineToArgvW
// splitting rules: every argv must come back unchanged.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { buildBatchCommandLine, buildWindowsArgument, buildWindowsCommandLine } from '../../lib/backend/windows/command-line.js';

/** Splits a command line the way the MSVC runtime does (documented rules, post-2008 behaviour). */
function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  // argv[0]: up to the next quote when it starts quoted, else up to whitespace; no escapes.
  let program = '';
  if (line[0] === '"') {
    const end = line.indexOf('"', 1);
    program = line.slice(1, end === -1 ? line.length : end);
    i = end === -1 ? line.length : end + 1;
  } else {
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') program += line[i++];
  }
  out.push(program);
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    while (i < line.length) {
      const ch = line[i]!;
      if (!quoted && (ch === ' ' || ch === '\t')) break;
      if (ch === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n++;
          i++;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) {
            arg += '"';
            i++;
          }
        } else {
          arg += '\\'.repeat(n);
        }
        continue;
      }
      if (ch === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
          continue;
        }
        quoted = !quoted;
        i++;
        continue;
      }
      arg += ch;
      i++;
    }
    out.push(arg);
  }
  return out;
}

const TABLE: Array<[string, string]> = [
  ['plain', 'plain'],
  ['', '""'],
  ['two words', '"two words"'],
  ['tab\there', '"tab\there"'],
  ['say "hi"', '"say \\"hi\\""'],
  ['C:\\Program Files\\', '"C:\\Program Files\\\\"'],
  ['C:\\dir\\', 'C:\\dir\\'],
  ['a\\\\"b', '"a\\\\\\\\\\"b"'],
  ['back\\slash', 'back\\slash'],
  ['new\nline', '"new\nline"'],
];

test('buildWindowsArgument: quoting table', () => {
  for (const [input, expected] of TABLE) assert.is(buildWindowsArgument(input), expected, JSON.stringify(input));
});

test('round trip: every argv is split back unchanged', () => {
  const argvs: string[][] = [
    ['C:\\Windows\\System32\\cmd.exe', '/d', '/c', 'echo hi'],
    ['C:\\Program Files\\nodejs\\node.exe', '-e', 'console.log("a b")', ''],
    ['pwsh.exe', '-NoProfile', '-Command', 'Write-Output "x\\"y"; exit 3'],
    ['tool', 'trailing\\', 'trailing space\\', '\\\\server\\share\\', '"', '\\"', 'a"b"c', '  '],
  ];
  for (const argv of argvs) assert.equal(splitCommandLine(buildWindowsCommandLine(argv)), argv);
  // Generated cases over the characters that matter.
  const alphabet = ['a', ' ', '\\', '"', '\t'];
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  for (let n = 0; n < 500; n++) {
    const args = Array.from({ length: 1 + (next() % 4) }, () =>
      Array.from({ length: next() % 7 }, () => alphabet[next() % alphabet.length]!).join(''));
    const argv = ['prog.exe', ...args];
    assert.equal(splitCommandLine(buildWindowsCommandLine(argv)), argv, JSON.stringify(argv));
  }
});

test('argv[0] with spaces is quoted; with a quote or empty it is refused', () => {
  assert.is(buildWindowsCommandLine(['C:\\Program Files\\x.exe', 'a']), '"C:\\Program Files\\x.exe" a');
  for (const argv of [['a"b.exe'], [''], []]) {
    try {
      buildWindowsCommandLine(argv);
      assert.unreachable(JSON.stringify(argv));
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, /argv\[0\]/);
    }
  }
  assert.throws(() => buildWindowsArgument('a\0b'), /NUL/);
});

const CMD = 'C:\\Windows\\System32\\cmd.exe';
const NPM = 'C:\\Program Files\\nodejs\\npm.cmd';

/** What cmd.exe /s /c runs: the text between the first and the last double quote after /c. */
function cmdPayload(line: string): string {
  const rest = line.slice(line.indexOf(' /d /s /c ') + ' /d /s /c '.length);
  assert.ok(rest.startsWith('"') && rest.endsWith('"'), rest);
  return rest.slice(1, -1);
}

/** cmd.exe's operators that start another command or redirect, outside double quotes. */
function unquotedOperators(text: string): string[] {
  const found: string[] = [];
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && '&|<>^()'.includes(ch)) found.push(ch);
  }
  return found;
}

test('batch files (.cmd, .bat) run through cmd.exe /d /s /c with every operator quoted', () => {
  const line = buildBatchCommandLine(CMD, [NPM, 'install', 'a&calc', 'x|y', 'p>q', 'two words', '(x)', '^', '']);
  assert.ok(line.startsWith(`${CMD} /d /s /c ""${NPM}" install `), line);
  const payload = cmdPayload(line);
  assert.equal(unquotedOperators(payload), [], payload);
  assert.ok(payload.includes('"a&calc"') && payload.includes('"two words"') && payload.endsWith(' ""'), payload);
  // The checker is not vacuous.
  assert.equal(unquotedOperators('"npm" a&calc'), ['&']);
});

test('attack: batch-file arguments cmd.exe would interpret even inside quotes are refused, not run', () => {
  for (const arg of ['"&calc', 'a"&calc"', '%PATH%', '!x!', 'a\r\ncalc', 'x\ncalc']) {
    try {
      buildBatchCommandLine(CMD, [NPM, 'run', arg]);
      assert.unreachable(`accepted ${JSON.stringify(arg)}`);
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, /argument 2 .* of batch file .*npm\.cmd holds a character cmd\.exe would interpret/);
    }
  }
  assert.throws(() => buildBatchCommandLine(CMD, ['C:\\x\\100%.bat']), /batch file path/);
});

test.run();
