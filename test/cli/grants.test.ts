// SPDX-License-Identifier: MIT
// `zero-sandbox grants`: round trips, JSON shapes, bad input, fail-closed files and concurrent writers.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { GrantStore } from '../../lib/policy/grants/grants-store.js';
import { runCli } from '../helpers/cli.js';
import { makeCliPlace } from '../fixtures/policy/cli-env.js';

const noStack = (text: string) => assert.not.match(text, /\n\s+at /, `no stack trace in: ${text}`);

test('allow, list, revoke and clear round trip with the Go Zero CLI text and JSON shapes', async () => {
  const p = makeCliPlace();
  try {
    const opts = { env: p.env, cwd: p.ws };
    p.write(join(p.ws, 'src', 'main.go'), 'x');
    let r = await runCli(['grants', 'list'], opts);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, 'No persistent sandbox grants.\n');
    r = await runCli(['grants', 'allow', 'write_file', '--path', 'src/main.go', '--reason', 'ok', '--json'], opts);
    assert.is(r.code, 0, r.stderr);
    const saved = JSON.parse(r.stdout);
    assert.equal(Object.keys(saved), ['grant']);
    assert.is(saved.grant.toolName, 'write_file');
    assert.is(saved.grant.scope, join(p.ws, 'src', 'main.go'));
    assert.is(saved.grant.scopeKind, 'file');
    assert.is(saved.grant.decision, 'allow');
    assert.match(saved.grant.approvedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    r = await runCli(['grants', 'deny', 'bash'], opts);
    assert.is(r.stdout, 'Sandbox grant saved: bash [deny]\n');
    r = await runCli(['grants', 'list'], opts);
    assert.match(r.stdout, /^Sandbox Grants:\n  bash \(\*\) \[deny\] approved \S+\n  write_file \(\S+main\.go\) \[allow\] approved \S+ - ok\n$/);
    r = await runCli(['grants', 'list', '--json'], opts);
    assert.equal(JSON.parse(r.stdout).grants.map((g: { toolName: string }) => g.toolName), ['bash', 'write_file']);
    r = await runCli(['grants', 'revoke', 'write_file', '--path', 'src/main.go', '--json'], opts);
    assert.equal(JSON.parse(r.stdout), { revoked: 1 });
    r = await runCli(['grants', 'clear', '--confirm'], opts);
    assert.is(r.stdout, 'Sandbox grants cleared: 1\n');
    const file = JSON.parse(readFileSync(p.grants, 'utf8'));
    assert.equal(file, { schemaVersion: 3, policyVersion: 2, grants: {} });
  } finally {
    p.cleanup();
  }
});

test('a path that does not exist (yet, or any more) is a file scope: granted, revoked by its path, the tool-wide grant kept', async () => {
  const p = makeCliPlace();
  try {
    const opts = { env: p.env, cwd: p.ws };
    const gone = join(p.ws, 'src', 'gone.txt');
    p.write(gone, 'x');
    let r = await runCli(['grants', 'allow', 'write_file', '--path', 'src/gone.txt', '--json'], opts);
    assert.is(r.code, 0, r.stderr);
    rmSync(gone);
    r = await runCli(['grants', 'allow', 'write_file', '--path', 'missing/new.txt', '--json'], opts);
    assert.is(r.code, 0, r.stderr);
    const { grant } = JSON.parse(r.stdout);
    assert.equal([grant.scope, grant.scopeKind], [join(p.ws, 'missing', 'new.txt'), 'file']);
    r = await runCli(['grants', 'allow', 'write_file'], opts);
    assert.is(r.code, 0, r.stderr);
    for (const path of ['src/gone.txt', 'missing/new.txt']) {
      r = await runCli(['grants', 'revoke', 'write_file', '--path', path, '--json'], opts);
      assert.is(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout), { revoked: 1 }, path);
    }
    r = await runCli(['grants', 'list', '--json'], opts);
    assert.equal(JSON.parse(r.stdout).grants.map((g: { scope?: string }) => g.scope ?? ''), ['']);
  } finally {
    p.cleanup();
  }
});

test('the text list gives a command prefix its reason, as it does a grant', async () => {
  const p = makeCliPlace();
  try {
    const store = new GrantStore(p.grants);
    store.grantCommandPrefix('bash', ['git', 'status'], 'status checks');
    const r = await runCli(['grants', 'list'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}bash \(`git status`\) \[command-prefix\] approved \S+ - status checks$/m);
  } finally {
    p.cleanup();
  }
});

test('bad input: clear errors with exit 2 and no stack trace', async () => {
  const p = makeCliPlace();
  try {
    const opts = { env: p.env, cwd: p.ws };
    const cases: Array<[string[], RegExp]> = [
      [['grants', 'allow', 'write_file', '--path', ''], /--path requires a non-empty file path/],
      [['grants', 'allow', 'write_file', '--bogus'], /unknown flag --bogus/],
      [['grants', 'allow'], /exactly one tool name/],
      [['grants', 'allow', 'a', 'b'], /unexpected argument "b"/],
      [['grants', 'allow', 'bad tool!'], /invalid tool name/],
      [['grants', 'clear'], /zero-sandbox grants clear requires --confirm/],
      [['grants', 'frob'], /unknown grants subcommand "frob"/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, opts);
      assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      noStack(r.stderr);
    }
  } finally {
    p.cleanup();
  }
});

for (const [name, text, message] of [
  ['garbage', 'not json {', /not valid JSON/],
  ['truncated', '{"schemaVersion":3,"policyVersion":2,"grants":{"bash":[{"decision":"deny","appr', /not valid JSON/],
  ['from the future', '{"schemaVersion":7,"policyVersion":9,"grants":{}}', /unsupported schemaVersion 7 \(written by a newer version/],
] as const) {
  test(`a ${name} grants file is reported, exit 1, and left byte-identical`, async () => {
    const p = makeCliPlace();
    try {
      p.write(p.grants, text);
      for (const args of [['grants', 'list'], ['grants', 'deny', 'bash'], ['grants', 'clear', '--confirm']]) {
        const r = await runCli(args, { env: p.env, cwd: p.ws });
        assert.is(r.code, 1, r.stderr);
        assert.match(r.stderr, `invalid sandbox grants file at ${p.grants}`);
        assert.match(r.stderr, message);
        noStack(r.stderr);
      }
      assert.is(readFileSync(p.grants, 'utf8'), text);
    } finally {
      p.cleanup();
    }
  });
}

test('a v1 grants file is migrated on first use and the notice is printed once', async () => {
  const p = makeCliPlace();
  try {
    const v1 = '{"schemaVersion":1,"grants":{"write_file":{"toolName":"write_file","decision":"allow","approvedAt":"2026-06-05T14:30:00Z","reason":"legacy"}}}';
    p.write(p.grants, v1);
    let r = await runCli(['grants', 'list'], { env: p.env, cwd: p.ws });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, `sandbox grants updated for policy v2: migrated 1, invalidated 0; backup: ${p.grants}.v1.backup`);
    assert.match(r.stdout, 'write_file (*) [allow] approved 2026-06-05T14:30:00Z - legacy');
    assert.is(readFileSync(`${p.grants}.v1.backup`, 'utf8'), v1);
    r = await runCli(['grants', 'list'], { env: p.env, cwd: p.ws });
    assert.is(r.stderr, '');
  } finally {
    p.cleanup();
  }
});

test('8 processes each adding 50 grants concurrently end with all 400 present', async () => {
  const p = makeCliPlace();
  try {
    for (let w = 0; w < 8; w++) for (let i = 0; i < 50; i++) writeFileSync(join(p.ws, `f-${w}-${i}.txt`), '');
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 50; i++) {
          const r = await runCli(['grants', 'allow', 'write_file', '--path', `f-${w}-${i}.txt`], { env: p.env, cwd: p.ws });
          if (r.code !== 0) failures.push(r.stderr);
        }
      }),
    );
    assert.equal(failures, []);
    const file = JSON.parse(readFileSync(p.grants, 'utf8'));
    const scopes = new Set(file.grants.write_file.map((g: { scope: string }) => g.scope));
    assert.is(scopes.size, 400);
  } finally {
    p.cleanup();
  }
});

test.run();
