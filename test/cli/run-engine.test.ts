// `zero-sandbox run` puts the engine in front with the user's config and grants: without a
// terminal a prompt is denied (exit 1, reason on stderr, nothing ran); --network allow answers
// the network prompt; a persistent deny grant stops the command; a broken config exits 3.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

function envFor(base: string): NodeJS.ProcessEnv {
  return { ...process.env, XDG_CONFIG_HOME: join(base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(base, 'grants.json') };
}

sandboxTest('a network command without a terminal is denied with the reason, and did not run', async () => {
  const t = makeTree();
  try {
    const r = await runCli(['run', '--workspace', t.ws, '-c', 'curl -s http://127.0.0.1:9/; touch ran'], { env: envFor(t.base) });
    assert.is(r.code, 1);
    assert.match(r.stderr, /network access requires approval \(to allow it: --network allow, or run it from a terminal to be asked\) \[approval_required\]/);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
    const allowed = await runCli(['run', '--workspace', t.ws, '--network', 'allow', '-c', 'echo "$ZERO_SANDBOX_NETWORK"; touch ran'], { env: envFor(t.base) });
    assert.is(allowed.code, 0, allowed.stderr);
    assert.is(allowed.stdout, 'allow\n');
    assert.ok(existsSync(join(t.ws, 'ran')));
  } finally {
    t.cleanup();
  }
});

sandboxTest('a persistent deny grant stops the command; a broken config exits 3 naming the file', async () => {
  const t = makeTree();
  try {
    const env = envFor(t.base);
    const grant = await runCli(['grants', 'deny', 'bash', '--json'], { env });
    assert.is(grant.code, 0, grant.stderr);
    const denied = await runCli(['run', '--workspace', t.ws, '--', 'touch', 'ran'], { env });
    assert.is(denied.code, 1);
    assert.match(denied.stderr, /persistent_deny/);
    assert.not.ok(existsSync(join(t.ws, 'ran')));
    mkdirSync(join(t.base, 'config', 'zero'), { recursive: true });
    writeFileSync(join(t.base, 'config', 'zero', 'config.json'), '{"sandbox": {"netwrok": "allow"}}');
    const broken = await runCli(['run', '--workspace', t.ws, '--', 'true'], { env: { ...env, ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'other.json') } });
    assert.is(broken.code, 3);
    assert.match(broken.stderr, /config\.json/);
    assert.match(broken.stderr, /netwrok/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a protected path the command changed is reported with what was found and done, not as a creation', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.ws, '.env'), 'PORT=3000\n');
    const r = await runCli(['run', '--workspace', t.ws, '-c', 'echo "NODE_OPTIONS=--require ./x.js" >> .env'], { env: envFor(t.base) });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, `zero-sandbox run: ${join(t.ws, '.env')}: set NODE_OPTIONS`);
    assert.match(r.stderr, 'it is as it was before the run');
    assert.not.match(r.stderr, 'blocked creation');
    assert.is(readFileSync(join(t.ws, '.env'), 'utf8'), 'PORT=3000\n');
    // A protected name the command creates is still reported as the creation it was.
    const made = await runCli(['run', '--workspace', t.ws, '-c', 'mkdir .zero'], { env: envFor(t.base) });
    assert.is(made.code, 1, made.stderr);
    assert.match(made.stderr, `zero-sandbox run: ${join(t.ws, '.zero')}: `);
    assert.not.ok(existsSync(join(t.ws, '.zero')));
  } finally {
    t.cleanup();
  }
});

test.run();
