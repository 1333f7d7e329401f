// SPDX-License-Identifier: MIT
// Hostile input: the analyzer and classifier never throw, answer right, and never blow up (no
// quadratic or exponential walk). The bound is a hang guard in CPU time (a loaded machine's
// descheduling does not count), far above the normal cost; speed itself is measured by the bench.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { analyzeCommand } from '../../lib/bash/analyze.js';
import { detectInteractiveCommand } from '../../lib/bash/interactive.js';
import { proposeCommandPrefix } from '../../lib/bash/prefix.js';
import { classifyRisk } from '../../lib/bash/risk.js';
import { loadShellParser } from '../../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

/** CPU milliseconds a hostile input may cost before it counts as a blow-up. */
const HANG_GUARD_CPU_MS = 5000;

function timed<T>(run: () => T): { value: T; ms: number } {
  const started = process.cpuUsage();
  const value = run();
  const used = process.cpuUsage(started);
  return { value, ms: (used.user + used.system) / 1000 };
}

const risk = (command: string) => classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command } });

const CASES: { name: string; text: string; categories: string[]; notCategories?: string[] }[] = [
  { name: '1 MB string of commands', text: 'echo hello world && ls -la; '.repeat(40_000), categories: ['shell', 'unparseable_command'] },
  { name: '1 MB string ending in curl (fails closed)', text: `${'echo hi; '.repeat(110_000)}curl https://x.test`, categories: ['network', 'unparseable_command'] },
  { name: '50,000 nested parentheses around curl', text: `${'('.repeat(50_000)}curl x${')'.repeat(50_000)}`, categories: ['network', 'unparseable_command'] },
  { name: '20,000 nested command substitutions', text: `${'$('.repeat(20_000)}echo${')'.repeat(20_000)}`, categories: ['unparseable_command'] },
  { name: '5,000-stage pipeline', text: Array.from({ length: 5000 }, () => 'cat').join(' | '), categories: ['shell'], notCategories: ['network'] },
  { name: '5,000-stage pipeline of curl', text: Array.from({ length: 5000 }, () => 'curl x').join(' | '), categories: ['network'] },
  { name: 'lone surrogates', text: 'echo \uD800 \uDC00x; curl x', categories: ['network'] },
  { name: 'NUL bytes', text: 'echo a\u0000b; curl x', categories: ['network'] },
  { name: '100,001 double quotes', text: '"'.repeat(100_001), categories: ['unparseable_command'] },
  { name: '5,000 nested if statements', text: `${'if true; then '.repeat(5000)}echo${'; fi'.repeat(5000)}`, categories: ['unparseable_command'] },
  { name: '350,000 rm words', text: 'rm '.repeat(350_000), categories: ['unparseable_command'] },
  { name: '70,000 chmod words', text: 'chmod chmod -R '.repeat(70_000), categories: ['unparseable_command'] },
  { name: '150,000 curl pipes', text: 'curl | '.repeat(150_000), categories: ['network'] },
  { name: '200,000 dollar signs', text: '$'.repeat(200_000), categories: ['shell'] },
  { name: 'a million backslashes', text: '\\'.repeat(1_000_001), categories: ['shell'] },
  { name: 'launchers nested 12 deep', text: Array.from({ length: 12 }).reduce<string>((acc) => `bash -c ${JSON.stringify(acc)}`, 'curl x'), categories: ['network'] },
];

for (const { name, text, categories, notCategories } of CASES) {
  test(`hostile: ${name}`, () => {
    const classified = timed(() => risk(text));
    assert.ok(classified.ms < HANG_GUARD_CPU_MS, `classifyRisk took ${classified.ms.toFixed(0)} ms of CPU`);
    for (const category of categories) assert.ok(classified.value.categories.includes(category as never), `${category} missing: ${classified.value.reason}`);
    for (const category of notCategories ?? []) assert.not.ok(classified.value.categories.includes(category as never), classified.value.reason);
    const interactive = timed(() => detectInteractiveCommand(text, { platform: 'linux' }));
    assert.ok(interactive.ms < HANG_GUARD_CPU_MS, `detectInteractiveCommand took ${interactive.ms.toFixed(0)} ms of CPU`);
    assert.type(interactive.value.interactive, 'boolean');
    const proposal = timed(() => proposeCommandPrefix({ toolName: 'bash', args: { command: text }, platform: 'linux' }));
    assert.ok(proposal.ms < HANG_GUARD_CPU_MS, `proposeCommandPrefix took ${proposal.ms.toFixed(0)} ms of CPU`);
  });
}

test('an oversized command is too complex with a reason naming the limit', () => {
  const analysis = analyzeCommand('x'.repeat(300_000));
  assert.is(analysis.tooComplex, true);
  assert.match(analysis.reasons.tooComplex ?? '', /longer than/);
});

test('non-string input does not throw', () => {
  assert.type(analyzeCommand(42 as unknown as string).tooComplex, 'boolean');
  assert.type(classifyRisk({ toolName: 'bash', sideEffect: 'shell', args: { command: { nested: ['curl x'] } } }).level, 'string');
  assert.is(classifyRisk(undefined as never).level, 'critical');
});

test.run();
