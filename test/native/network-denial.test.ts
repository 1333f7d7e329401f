// A refused network request is a structured denial, attributed by the sandbox and never read from
// the command's output: with the network denied, a connect, a datagram or a name lookup to an
// address outside the sandbox has no route out of its network namespace, the kernel counts it
// there, and the init reports how many after the command is gone. RunResult.denials then has an
// external_network denial (platform_sandbox, request_approval), stream-json's tool_result.meta the
// keys Go Zero CLI clients read, and `run` says which flag allows it. Loopback inside the sandbox, a run with the
// network allowed, and output that merely claims a refusal produce none.
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runCli } from '../helpers/cli.js';
import { makeTree, py, sandboxTest, sh } from '../helpers/sandbox.js';

const TRY = (family: 'AF_INET' | 'AF_INET6', address: string, kind: 'SOCK_STREAM' | 'SOCK_DGRAM') => [
  'import socket',
  `s = socket.socket(socket.${family}, socket.${kind})`,
  'try:',
  kind === 'SOCK_STREAM' ? `    s.connect(("${address}", 443))` : `    s.sendto(b"x", ("${address}", 53))`,
  '    print("SENT")',
  'except OSError as e:',
  '    print("REFUSED", e.errno)',
].join('\n');

sandboxTest('network deny: a connect and a datagram outside the sandbox are external_network denials from the sandbox', async () => {
  const t = makeTree();
  try {
    const tcp = await py(t, TRY('AF_INET', '192.0.2.1', 'SOCK_STREAM'));
    assert.is(tcp.stdout.trim(), 'REFUSED 101', tcp.stderr);
    const denial = tcp.denials.find((d) => d.capability.kind === 'external_network');
    assert.ok(denial !== undefined, JSON.stringify(tcp.denials));
    assert.is(denial!.source, 'platform_sandbox');
    assert.is(denial!.nextAction, 'request_approval');
    assert.is(denial!.recoverable, true);
    assert.match(denial!.reason, 'refused 1 network send ');
    assert.match(denial!.reason, "network: 'allow'");
    const udp6 = await py(t, TRY('AF_INET6', '2001:db8::1', 'SOCK_DGRAM'));
    assert.is(udp6.stdout.trim(), 'REFUSED 101', udp6.stderr);
    assert.ok(udp6.denials.some((d) => d.capability.kind === 'external_network'), JSON.stringify(udp6.denials));
    const several = await sh(t, `for i in 1 2 3; do python3 -c '${TRY('AF_INET', '198.51.100.7', 'SOCK_DGRAM').replace(/'/g, '"')}'; done`);
    assert.match(several.denials.find((d) => d.capability.kind === 'external_network')?.reason ?? '', 'refused 3 network sends ');
  } finally {
    t.cleanup();
  }
});

sandboxTest('no denial for loopback inside the sandbox, for an allowed network, or for output that only claims a refusal', async () => {
  const t = makeTree();
  try {
    const loopback = await py(t, TRY('AF_INET', '127.0.0.1', 'SOCK_STREAM'));
    assert.is(loopback.stdout.trim(), 'REFUSED 111', loopback.stderr);
    assert.equal(loopback.denials, []);
    const claim = await sh(t, 'echo "connect: Network is unreachable" >&2; echo "Could not resolve host: example.com"; exit 6');
    assert.equal(claim.denials, [], 'the output text decides nothing');
    const allowed = await py(t, TRY('AF_INET', '127.0.0.1', 'SOCK_DGRAM'), { network: 'allow' });
    assert.is(allowed.stdout.trim(), 'SENT');
    assert.equal(allowed.denials, []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('stream-json and run: the refused request carries the Go Zero CLI meta keys; run names --network allow', async () => {
  const t = makeTree();
  try {
    const env = { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
    const script = TRY('AF_INET', '192.0.2.1', 'SOCK_STREAM');
    // A CLI run on a loaded machine can take long: the default 60 s kill would read as a missing message.
    const json = await runCli(['run', '--output-format', 'stream-json', '--workspace', t.ws, '--', 'python3', '-c', script], { env, timeoutMs: 180_000 });
    assert.is(json.code, 0, json.stderr);
    const result = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; meta?: Record<string, string> }).find((e) => e.type === 'tool_result');
    assert.ok(result?.meta !== undefined, json.stdout + json.stderr);
    assert.is(result!.meta!.sandbox_likely_denied, 'true');
    assert.is(result!.meta!.sandbox_denial_kind, 'network');
    assert.is(result!.meta!.sandbox_denial_capability, 'external_network');
    assert.match(result!.meta!.sandbox_denial_reason!, 'refused 1 network send');
    assert.is(result!.meta!.sandbox_denial_scope, undefined, 'which host was asked is not known');
    const text = await runCli(['run', '--workspace', t.ws, '--', 'python3', '-c', script], { env, timeoutMs: 180_000 });
    assert.is(text.code, 0, text.stderr);
    assert.is(text.stdout.trim(), 'REFUSED 101', text.stderr);
    assert.match(text.stderr, 'zero-sandbox run: the sandbox refused 1 network send to addresses outside it (the network is denied); allow it with --network allow');
  } finally {
    t.cleanup();
  }
});

test.run();
