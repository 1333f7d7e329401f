// SPDX-License-Identifier: MIT
// The escapes every backend must stop, run against the real sandbox of whatever OS runs this file
// (Linux namespaces + Landlock + seccomp, macOS seatbelt, Windows AppContainer): reading a denied
// file, writing outside the workspace, planting a git hook, reaching a host loopback listener
// under network deny, and reading a credential from the environment. The attacker is this node
// binary (it runs on every OS without a shell); each run first prints ALIVE, so an attack counts
// as stopped only when the command really ran and its attempt failed, and the host is checked
// afterwards. The fix on each OS: the backend's profile, ACL plan or mount plan denies it.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed, type RunResult } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { makeTree, type Tree } from '../helpers/sandbox.js';
import { platformSandboxTestsEnabled } from '../helpers/probe.js';

const SECRET = 'TOPSECRET-EVERY-OS-17';
const enabled = platformSandboxTestsEnabled();
const attack = (name: string, fn: () => Promise<void>): void => (enabled ? test(name, fn) : test.skip(name, fn));

// argv[1] is the attempt; the rest are its operands. Prints ALIVE, then one result line.
const ATTACKER = `
const fs = require('fs'); const net = require('net');
const [what, a, b] = process.argv.slice(1);
process.stdout.write('ALIVE\\n');
const done = (r) => process.stdout.write('RESULT ' + r + '\\n');
try {
  if (what === 'read') done('READ:' + fs.readFileSync(a, 'utf8'));
  else if (what === 'write') { fs.writeFileSync(a, b); done('WROTE'); }
  else if (what === 'env') done(JSON.stringify(process.env));
  else if (what === 'connect') {
    const s = net.connect({ host: '127.0.0.1', port: Number(a) }, () => { done('CONNECTED'); s.destroy(); });
    s.on('error', (e) => done('ERR:' + e.code));
    setTimeout(() => { done('TIMEOUT'); process.exit(0); }, 5000).unref();
  }
} catch (e) { done('ERR:' + e.code); }
`;

function run(tree: Tree, args: string[], options: RunOptions = {}): Promise<{ result: string; stdout: string; stderr: string; denials: RunResult['denials'] }> {
  return runSandboxed([process.execPath, '-e', ATTACKER, ...args], { workspace: tree.ws, timeoutMs: 60_000, ...options }).then((r) => {
    assert.match(r.stdout, /^ALIVE/, `the attacker did not run (exit ${r.exitCode}): ${r.stderr}`);
    const result = /RESULT (.*)/.exec(r.stdout)?.[1];
    assert.ok(result !== undefined, `no result line: ${r.stdout} ${r.stderr}`);
    return { result, stdout: r.stdout, stderr: r.stderr, denials: r.denials };
  });
}

attack('reading a --deny-read file gets none of it inside the sandbox and its content never reaches the output', async () => {
  const t = makeTree('zs-every-os-');
  try {
    const secret = join(t.outside, 'secret.txt');
    writeFileSync(secret, SECRET);
    const r = await run(t, ['read', secret], { denyRead: [secret] });
    if (process.platform === 'linux') {
      // Linux shows an empty file in its place and reports the open (the kernel saw it).
      assert.is(r.result, 'READ:');
      assert.ok(r.denials.some((d) => d.capability.kind === 'filesystem_read' && d.capability.scope === secret), JSON.stringify(r.denials));
    } else {
      assert.ok(r.result.startsWith('ERR:'), r.result);
    }
    assert.not.match(r.stdout + r.stderr, new RegExp(SECRET));
  } finally {
    t.cleanup();
  }
});

attack('writing a file outside the workspace fails and the host directory stays empty', async () => {
  const t = makeTree('zs-every-os-');
  try {
    const r = await run(t, ['write', join(t.outside, 'planted.txt'), 'evil']);
    assert.ok(r.result.startsWith('ERR:'), r.result);
    assert.equal(readdirSync(t.outside), []);
    // The control: the same write inside the workspace succeeds.
    const ok = await run(t, ['write', join(t.ws, 'made.txt'), 'fine']);
    assert.is(ok.result, 'WROTE');
    assert.is(readFileSync(join(t.ws, 'made.txt'), 'utf8'), 'fine');
  } finally {
    t.cleanup();
  }
});

attack('planting a git hook in the workspace .git/hooks fails and no hook is left on the host', async () => {
  const t = makeTree('zs-every-os-');
  try {
    mkdirSync(join(t.ws, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(t.ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const hook = join(t.ws, '.git', 'hooks', 'pre-commit');
    const r = await run(t, ['write', hook, 'echo pwned']);
    assert.ok(r.result.startsWith('ERR:') || !existsSync(hook), r.result);
    assert.not.ok(existsSync(hook), 'a hook was left in .git/hooks');
  } finally {
    t.cleanup();
  }
});

attack('connecting to a host loopback listener under network deny fails and the listener sees no connection', async () => {
  const t = makeTree('zs-every-os-');
  let hits = 0;
  const server = createServer((socket) => {
    hits++;
    socket.destroy();
  });
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const r = await run(t, ['connect', String(port)], { network: 'deny' });
    assert.is.not(r.result, 'CONNECTED');
    assert.is(hits, 0);
  } finally {
    server.close();
    t.cleanup();
  }
});

attack('a credential in the environment does not cross into the sandbox', async () => {
  const t = makeTree('zs-every-os-');
  try {
    const r = await run(t, ['env'], { env: { ...process.env, AWS_SECRET_ACCESS_KEY: SECRET, GITHUB_TOKEN: SECRET } });
    assert.ok(r.result.startsWith('{'), r.result);
    assert.not.match(r.result, new RegExp(SECRET));
  } finally {
    t.cleanup();
  }
});

test.run();
