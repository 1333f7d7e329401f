// SPDX-License-Identifier: MIT
// `zero-sandbox check`: the Go Zero CLI's JSON and text shapes, config errors and bad input.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { makeCliPlace } from '../fixtures/policy/cli-env.js';

const noStack = (text: string) => assert.not.match(text, /\n\s+at /, `no stack trace in: ${text}`);

test('check write_file outside the workspace prompts with a recoverable block (the Go Zero CLI example)', async () => {
  const p = makeCliPlace();
  try {
    const r = await runCli(['check', 'write_file', '--side-effect', 'write', '--path', '/elsewhere/outside.txt', '--json'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    const reason = 'Writing to /elsewhere/outside.txt requires access outside the workspace. Allow writes there with --allow-write or --add-dir (CLI) or allowWrite (API), or approve the prompt.';
    assert.equal(Object.keys(report), ['tool', 'plan', 'decision', 'grant']);
    assert.is(report.tool, 'write_file');
    assert.equal(report.plan.policy, { mode: 'enforce', network: 'deny', enforceWorkspace: true, effectiveMode: 'enforce' });
    assert.is(report.plan.workspaceRoot, p.ws);
    assert.ok(report.plan.restrictions.includes('filesystem writes must stay inside workspace'));
    assert.equal(report.decision, {
      action: 'prompt',
      reason,
      risk: { level: 'critical', categories: ['absolute_path', 'out_of_workspace', 'write'], reason: 'critical risk: absolute_path, out_of_workspace, write' },
      grantMatched: false,
      block: { code: 'outside_workspace', toolName: 'write_file', action: 'prompt', path: '/elsewhere/outside.txt', reason, recoverable: true },
    });
    assert.equal(report.grant, { toolName: 'write_file', matched: false });
  } finally {
    p.cleanup();
  }
});

test('check prints the Go Zero CLI text; a shell network command prompts; a matching grant is shown', async () => {
  const p = makeCliPlace();
  try {
    const opts = { env: p.env, cwd: p.ws };
    let r = await runCli(['check', 'bash', '--side-effect', 'shell', '--command', 'curl https://example.com'], opts);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Sandbox check: bash\ndecision: prompt\nreason: network access requires approval\nrisk: critical \[[^\]]*network[^\]]*\]\n/);
    assert.match(r.stdout, 'grant: no grant matched this action\npolicy: mode=enforce network=deny enforceWorkspace=true\nbackend: ');
    p.write(join(p.ws, 'notes.txt'), 'x');
    r = await runCli(['grants', 'deny', 'read_file', '--path', 'notes.txt'], opts);
    assert.is(r.code, 0, r.stderr);
    r = await runCli(['check', 'read_file', '--path', 'notes.txt', '--json'], opts);
    const report = JSON.parse(r.stdout);
    assert.is(report.decision.action, 'deny');
    assert.is(report.decision.block.code, 'persistent_deny');
    assert.is(report.grant.matched, true);
    assert.is(report.grant.grant.decision, 'deny');
  } finally {
    p.cleanup();
  }
});

test('bad input: usage errors exit 2 with a clear message and no stack trace', async () => {
  const p = makeCliPlace();
  try {
    const cases: Array<[string[], RegExp]> = [
      [['check'], /tool name is required: zero-sandbox check <tool> \[flags\]/],
      [['check', 'bash', '--side-effect', 'fly'], /invalid --side-effect "fly": must be one of read, write, shell, network, none/],
      [['check', 'bash', '--frobnicate'], /unknown flag --frobnicate/],
      [['check', 'bash', '--path'], /--path requires a value/],
      [['check', 'bash', 'extra'], /unexpected argument "extra"/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { env: p.env, cwd: p.ws });
      assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      noStack(r.stderr);
    }
  } finally {
    p.cleanup();
  }
});

test('malformed config is an error naming the file and the JSON path (exit 3)', async () => {
  const p = makeCliPlace();
  try {
    const user = join(p.config, 'zero', 'config.json');
    const project = join(p.ws, '.zero', 'config.json');
    const cases: Array<[string, string, RegExp]> = [
      [user, '{"sandbox": {"network": "allow",', /not valid JSON/],
      [user, '{"sandbox": {"netwrok": "deny"}}', /sandbox\.netwrok: unknown key/],
      [user, '{"sandbox": {"network": 5}}', /sandbox\.network: /],
      [project, '{"sandbox": {"env": {"pass": ["NOT-A-NAME"]}}}', /sandbox\.env\.pass\[0\]: /],
      [project, '[1, 2]', /: /],
    ];
    for (const [file, text, message] of cases) {
      p.write(file, text);
      const r = await runCli(['check', 'read_file'], { env: p.env, cwd: p.ws });
      assert.is(r.code, 3, `${text}: ${r.stderr}`);
      assert.match(r.stderr, file);
      assert.match(r.stderr, message);
      noStack(r.stderr);
      p.write(file, '{}');
    }
    // A write root the config names that does not exist is refused as --allow-write would be.
    p.write(user, '{"sandbox": {"additionalWriteRoots": ["/no/such/dir"]}}');
    const r = await runCli(['check', 'read_file'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `${user}: sandbox.additionalWriteRoots[0]: additional write root /no/such/dir does not exist [invalid_argument]`);
    noStack(r.stderr);
  } finally {
    p.cleanup();
  }
});

test('a broken grants file makes check fail closed: prompt with the error in the reason', async () => {
  const p = makeCliPlace();
  try {
    p.write(p.grants, '{"schemaVersion":3,');
    const r = await runCli(['check', 'write_file', '--side-effect', 'write', '--path', 'a.txt', '--json'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.is(report.decision.action, 'prompt');
    assert.match(report.decision.reason, `invalid sandbox grants file at ${p.grants}`);
    assert.match(report.grant.error, 'not valid JSON');
  } finally {
    p.cleanup();
  }
});

test('every engine subcommand has --help (exit 0) and is listed in the main help', async () => {
  const p = makeCliPlace();
  try {
    for (const args of [['check', '--help'], ['policy', '--help'], ['grants', '--help'], ['grants', 'allow', '--help']]) {
      const r = await runCli(args, { env: p.env, cwd: p.ws });
      assert.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: zero-sandbox /);
    }
    const main = await runCli(['--help'], { env: p.env, cwd: p.ws });
    for (const name of ['check', 'policy', 'grants']) assert.match(main.stdout, new RegExp(`\\n  ${name} `));
  } finally {
    p.cleanup();
  }
});

test.run();
