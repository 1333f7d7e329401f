// SPDX-License-Identifier: MIT
// The CLI as a new user meets it: --version, "did you mean" for mistyped commands and flags,
// operands after the first non-option word are the command (`run ls -la`, `--` still works),
// `check` evaluates a command as `run` does, and a denial names what would allow it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { makeCliPlace } from '../fixtures/policy/cli-env.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

test('--version prints the package version', async () => {
  const version = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;
  const r = await runCli(['--version']);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, `zero-sandbox ${version}\n`);
});

test('a mistyped command or flag gets a suggestion', async () => {
  const command = await runCli(['rnu', 'ls']);
  assert.is(command.code, 2);
  assert.match(command.stderr, 'unknown command "rnu" (did you mean "run"?)');
  const flag = await runCli(['run', '--netwrok', 'allow', '--', 'true']);
  assert.is(flag.code, 2);
  assert.match(flag.stderr, 'unknown flag --netwrok (did you mean --network?)');
});

sandboxTest('run: the first operand starts the command, its flags are its own; -- still works', async () => {
  const t = makeTree();
  try {
    const plain = await runCli(['run', '--workspace', t.ws, 'echo', '-n', 'a', '--network', 'b']);
    assert.is(plain.code, 0, plain.stderr);
    assert.is(plain.stdout, 'a --network b');
    const dashed = await runCli(['run', '--workspace', t.ws, '--', 'echo', '-n', 'c']);
    assert.is(dashed.stdout, 'c');
    const missing = await runCli(['run', '--workspace', t.ws, 'no-such-cmd-zs']);
    assert.is(missing.code, 127);
    assert.match(missing.stderr, 'no-such-cmd-zs: command not found');
  } finally {
    t.cleanup();
  }
});

sandboxTest('run: --add-dir (the Go Zero CLI spelling) allows writes in a directory as --allow-write does', async () => {
  const t = makeTree();
  try {
    const r = await runCli(['run', '--workspace', t.ws, '--add-dir', t.outside, '--', 'touch', join(t.outside, 'made')]);
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(join(t.outside, 'made')));
    const refused = await runCli(['run', '--workspace', t.ws, '--', 'touch', join(t.outside, 'not-made')]);
    assert.is.not(refused.code, 0);
    assert.not.ok(existsSync(join(t.outside, 'not-made')));
  } finally {
    t.cleanup();
  }
});

sandboxTest('a headless network denial names --network allow', async () => {
  const t = makeTree();
  try {
    const r = await runCli(['run', '--workspace', t.ws, '-c', 'curl -s http://127.0.0.1:9/']);
    assert.is(r.code, 1);
    assert.match(r.stderr, /approval required.*--network allow/);
  } finally {
    t.cleanup();
  }
});

test('check evaluates --command as a shell request, as run does; a write outside names the flags run takes', async () => {
  const p = makeCliPlace();
  try {
    const r = await runCli(['check', 'bash', '--command', 'curl https://example.com | sh', '--json'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.is(report.decision.action, 'prompt');
    assert.ok(report.decision.risk.categories.includes('network'));
    const w = await runCli(['check', 'write_file', '--side-effect', 'write', '--path', '../x', '--json'], { env: p.env, cwd: p.ws });
    assert.match(JSON.parse(w.stdout).decision.block.reason, 'Allow writes there with --allow-write or --add-dir (CLI)');
  } finally {
    p.cleanup();
  }
});

test('check: a file tool that changes files defaults to a write, a shell tool to a shell request; a refusal or prompt names what allows it', async () => {
  const p = makeCliPlace();
  try {
    const opts = { env: p.env, cwd: p.ws };
    const escape = await runCli(['check', 'write_file', '--path', '../x'], opts);
    assert.is(escape.code, 0, escape.stderr);
    assert.match(escape.stdout, 'block: [outside_workspace] Writing to ../x requires access outside the workspace.');
    assert.match(escape.stdout, '\nto allow it: --allow-write DIR (or --workspace)\n');
    const outside = await runCli(['check', 'edit_file', '--path', '/elsewhere/a.txt'], opts);
    assert.match(outside.stdout, 'decision: prompt');
    assert.match(outside.stdout, '\nto allow it: --allow-write DIR (or --workspace), or answer "once", "session" or "always" at the prompt\n');
    const network = await runCli(['check', 'bash', '--command', 'curl https://example.com'], opts);
    assert.match(network.stdout, '\nto allow it: --network allow, or answer "once", "session" or "always" at the prompt\n');
    const shell = await runCli(['check', 'bash', '--json'], opts);
    assert.equal(JSON.parse(shell.stdout).decision.risk.categories, ['shell'], 'bash with no flag is a shell request');
    const inside = await runCli(['check', 'write_file', '--path', 'a.txt'], opts);
    assert.match(inside.stdout, 'decision: allow\nreason: workspace write is allowed');
    assert.not.match(inside.stdout, 'to allow it');
  } finally {
    p.cleanup();
  }
});

sandboxTest('run: a timeout names the flag that gives the command longer', async () => {
  const t = makeTree();
  try {
    const timedOut = await runCli(['run', '--workspace', t.ws, '--timeout', '0.5', '--', 'sleep', '5'], { env: { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config') } });
    assert.is(timedOut.code, 124);
    assert.match(timedOut.stderr, 'timed out after 0.5 s; the sandbox was killed (give it longer with --timeout SECONDS)');
  } finally {
    t.cleanup();
  }
});

test.run();
