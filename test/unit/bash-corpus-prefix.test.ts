// SPDX-License-Identifier: MIT
// Interactive, known-safe and command-prefix vectors from the Go Zero CLI (test/fixtures/bash/*.json):
// a command both tools see must get the same answer.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { analyzeCommand } from '../../lib/bash/analyze.js';
import { detectInteractiveCommand } from '../../lib/bash/interactive.js';
import { isKnownSafeSegment, isMsysProneCommandName } from '../../lib/bash/known-safe.js';
import { isUnsafePrefix, matchCommandPrefix, normalizeLauncherName, proposeCommandPrefix, validateCommandPrefix } from '../../lib/bash/prefix.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { loadShellParser } from '../../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

type Any = Record<string, any>;
const load = (name: string): Any[] => JSON.parse(readFileSync(`${REPO_ROOT}/test/fixtures/bash/${name}`, 'utf8')) as Any[];
const platformOf = (value: unknown): NodeJS.Platform => (value === 'windows' ? 'win32' : 'linux');

for (const vector of load('interactive.json')) {
  const { expect } = vector;
  if (vector.check === 'detectInteractive') {
    test(`${vector.id}: ${JSON.stringify(vector.command)} on ${vector.goos}`, () => {
      const verdict = detectInteractiveCommand(vector.command, { platform: platformOf(vector.goos) });
      // Some vectors pin only the suggestion of a command known to be interactive.
      if (expect.interactive !== undefined) assert.is(verdict.interactive, expect.interactive, JSON.stringify(verdict));
      if (expect.command !== undefined) assert.is(verdict.command, expect.command);
      const suggestion = verdict.suggestion ?? '';
      if (expect.suggestionNonEmpty) assert.ok(suggestion.length > 0);
      for (const part of expect.suggestionContainsIgnoreCase ?? []) assert.ok(suggestion.toLowerCase().includes(part.toLowerCase()), suggestion);
      for (const part of expect.suggestionContains ?? []) assert.ok(suggestion.includes(part), suggestion);
      for (const part of expect.suggestionNotContains ?? []) assert.not.ok(suggestion.includes(part), suggestion);
    });
  } else if (vector.check === 'splitShellSegments') {
    // No quote-aware splitter exists here: the syntax tree answers the same question.
    test(`${vector.id}: ${JSON.stringify(vector.command)} (commands from the syntax tree)`, () => {
      const analysis = analyzeCommand(vector.command, { platform: 'linux' });
      const lines = analysis.commands.map((command) => command.argv.join(' '));
      if (expect.segmentCount !== undefined) assert.is(lines.length, expect.segmentCount, JSON.stringify(lines));
      if (expect.noEmptySegment) assert.ok(lines.every((line) => line.trim() !== ''), JSON.stringify(lines));
      if (expect.noSegmentStartsWith !== undefined) assert.not.ok(lines.some((line) => line.startsWith(expect.noSegmentStartsWith)), JSON.stringify(lines));
      for (const part of expect.segmentsInclude ?? []) assert.ok(lines.includes(part), JSON.stringify(lines));
    });
  } else if (vector.check === 'astCommandFields') {
    test(`${vector.id}: ${JSON.stringify(vector.command)} (a dynamic word is not a program or subcommand)`, () => {
      const verdict = detectInteractiveCommand(vector.command, { platform: 'linux' });
      assert.is(verdict.interactive, false, 'a word glued to an expansion must not make an interactive command');
      const program = expect.noCommandWithProgram;
      if (program !== undefined) {
        const commands = analyzeCommand(vector.command, { platform: 'linux' }).commands;
        assert.not.ok(commands.some((command) => command.program === program), JSON.stringify(commands.map((c) => c.argv)));
      }
    });
  }
}

for (const vector of load('safe_commands.json')) {
  const { expect } = vector;
  if (vector.check === 'knownSafeSegment') {
    test(`${vector.id}: known-safe ${JSON.stringify(vector.segment)} on ${vector.platform}`, () => {
      const platforms: NodeJS.Platform[] = vector.platform === 'any' ? ['linux', 'win32', 'darwin'] : [vector.platform === 'windows' ? 'win32' : 'linux'];
      for (const platform of platforms) assert.is(isKnownSafeSegment(vector.segment, platform), expect.knownSafe, platform);
    });
  } else if (vector.check === 'msysProneCommandName') {
    test(`${vector.id}: ${vector.name} is MSYS-prone`, () => {
      assert.is(isMsysProneCommandName(vector.name), expect.msysProne);
    });
  }
}

for (const vector of load('command_prefix.json')) {
  const { expect } = vector;
  const platform = vector.platform === 'windows' ? 'win32' : 'linux';
  test(`${vector.id} (${vector.check})`, () => {
    switch (vector.check) {
      case 'unsafePrefix':
        assert.is(isUnsafePrefix(vector.prefix), expect.unsafe, JSON.stringify(validateCommandPrefix(vector.prefix)));
        break;
      case 'normalizeLauncherName':
        assert.is(normalizeLauncherName(vector.input), expect.output);
        break;
      case 'sessionGrantThenLookup': {
        const granted = validateCommandPrefix(vector.grant).ok;
        const result = matchCommandPrefix(vector.command.join(' '), { session: [vector.grant] }, { platform });
        assert.is(granted && result.matched, expect.match);
        break;
      }
      case 'persistGrant':
        assert.is(validateCommandPrefix(vector.prefix).ok, expect.accepted);
        break;
      case 'persistedLookup':
        assert.is(matchCommandPrefix(vector.command.join(' '), { persistent: vector.grants }, { platform }).matched, expect.match);
        break;
      case 'proposePrefix':
        assert.equal(proposeCommandPrefix({ toolName: vector.toolName, args: vector.args, platform }), expect.prefix);
        break;
      case 'matchSegments': {
        const result = matchCommandPrefix(vector.args.command, { session: vector.sessionGrants }, { platform });
        assert.is(result.matched, expect.match);
        if (result.matched) {
          assert.is(result.session, expect.session);
          assert.equal(result.prefix, expect.matchedPrefix);
        }
        break;
      }
      default:
        assert.unreachable(`unknown check ${vector.check}`);
    }
  });
}

test.run();
