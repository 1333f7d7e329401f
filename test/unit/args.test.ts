import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { UsageError, flagBool, flagList, flagString, parseArgs } from '../../lib/cli/args.js';

const flags = [
  { name: 'json', type: 'boolean' as const },
  { name: 'cwd', type: 'string' as const },
  { name: 'allow-write', type: 'list' as const },
  { name: 'command', short: 'c', type: 'string' as const },
];

test('parses booleans, strings, repeated lists, short flags and the rest after --', () => {
  const args = parseArgs(
    ['--json', '--cwd=src', '--allow-write', '/a', '--allow-write=/b', '-c', 'echo hi', '--', 'ls', '--json'],
    { flags, acceptsRest: true },
  );
  assert.ok(flagBool(args, 'json'));
  assert.is(flagString(args, 'cwd'), 'src');
  assert.equal(flagList(args, 'allow-write'), ['/a', '/b']);
  assert.is(flagString(args, 'command'), 'echo hi');
  assert.equal(args.rest, ['ls', '--json']);
});

test('unknown flags, missing values and extra positionals are usage errors', () => {
  assert.throws(() => parseArgs(['--nope'], { flags }), (e: unknown) => e instanceof UsageError && /--nope/.test((e as Error).message));
  assert.throws(() => parseArgs(['-x'], { flags }), /unknown flag -x/);
  assert.throws(() => parseArgs(['--cwd'], { flags }), /--cwd requires a value/);
  // The next flag is not taken as the value (it would be dropped unseen); inline values, numbers
  // and - are values.
  assert.throws(() => parseArgs(['--cwd', '--json'], { flags }), /--cwd requires a value: the next argument, --json, is a flag; write --cwd=--json/);
  assert.equal(parseArgs(['--cwd=--json'], { flags }).flags.cwd, '--json');
  assert.equal(parseArgs(['--cwd', '-1.5'], { flags }).flags.cwd, '-1.5');
  assert.equal(parseArgs(['--cwd', '-'], { flags }).flags.cwd, '-');
  assert.throws(() => parseArgs(['--json=yes'], { flags }), /takes no value/);
  assert.throws(() => parseArgs(['stray'], { flags }), /unexpected argument "stray"/);
  assert.throws(() => parseArgs(['--', 'x'], { flags }), /unexpected argument "--"/);
});

test('--help and -h are recognised anywhere', () => {
  assert.ok(parseArgs(['--json', '--help'], { flags }).help);
  assert.ok(parseArgs(['-h'], { flags }).help);
});

test.run();
