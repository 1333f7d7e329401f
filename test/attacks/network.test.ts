// Network deny means no contact with anything outside the sandbox: no TCP or UDP to the host's
// loopback or its other addresses, no host Unix sockets (pathname or abstract). Loopback inside the
// sandbox works. --network allow reaches the host. Servers here bind to 127.0.0.1 only.
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, py, sandboxTest } from '../helpers/sandbox.js';

function listen(server: Server, ...args: unknown[]): Promise<void> {
  return new Promise((resolve) => server.listen(...(args as [number, string]), () => resolve()));
}

function tcpServer(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((socket) => {
    hits++;
    socket.end('hello-from-host\n');
  });
  return listen(server, 0, '127.0.0.1').then(() => ({
    server,
    port: (server.address() as { port: number }).port,
    hits: () => hits,
  }));
}

const CONNECT = (target: string) => [
  'import socket, errno',
  'try:',
  `    s = socket.create_connection(${target}, timeout=3); print("CONNECTED", s.recv(100))`,
  'except OSError as e:',
  '    print("BLOCKED", errno.errorcode.get(e.errno, e.errno) if e.errno else type(e).__name__)',
].join('\n');

sandboxTest("network deny: no TCP to the host's loopback", async () => {
  const t = makeTree();
  const host = await tcpServer();
  try {
    const r = await py(t, CONNECT(`("127.0.0.1", ${host.port})`));
    assert.match(r.stdout, /BLOCKED/, r.stdout + r.stderr);
    assert.is(host.hits(), 0);
  } finally {
    host.server.close();
    t.cleanup();
  }
});

sandboxTest("network deny: the host's other addresses are unreachable", async () => {
  const t = makeTree();
  try {
    const addresses = Object.values(networkInterfaces()).flat().filter((a) => a !== undefined && !a.internal && a.family === 'IPv4').map((a) => a!.address);
    const target = addresses[0] ?? '192.0.2.1';
    const r = await py(t, CONNECT(`("${target}", 22)`));
    assert.match(r.stdout, /BLOCKED (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timeout)/, r.stdout + r.stderr);
  } finally {
    t.cleanup();
  }
});

sandboxTest("network deny: no UDP datagram reaches the host's loopback", async () => {
  const t = makeTree();
  const socket = createSocket('udp4');
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  try {
    const r = await py(t, [
      'import socket',
      's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
      'for _ in range(5):',
      '    try:',
      `        s.sendto(b"x", ("127.0.0.1", ${port}))`,
      '    except OSError as e:',
      '        print("ERR", e)',
      'print("sent")',
    ].join('\n'));
    assert.match(r.stdout, /sent/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(received, 0);
  } finally {
    socket.close();
    t.cleanup();
  }
});

sandboxTest('network deny: host Unix sockets, pathname and abstract, cannot be reached', async () => {
  const t = makeTree();
  const path = join(t.outside, 'host.sock');
  const abstract = `\0zs-abstract-${process.pid}-${Date.now()}`;
  let hits = 0;
  const onConnection = (socket: import('node:net').Socket) => {
    hits++;
    socket.end('hello\n');
  };
  const a = createServer(onConnection);
  const b = createServer(onConnection);
  await listen(a, path);
  await listen(b, abstract);
  try {
    const r = await py(t, [
      'import socket, errno',
      `for name, target in (("pathname", ${JSON.stringify(path)}), ("abstract", "\\0" + ${JSON.stringify(abstract.slice(1))})):`,
      '    try:',
      '        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(3); s.connect(target); print(name, "CONNECTED")',
      '    except OSError as e:',
      '        print(name, "BLOCKED", errno.errorcode.get(e.errno, e.errno))',
    ].join('\n'));
    assert.match(r.stdout, /pathname BLOCKED/, r.stdout + r.stderr);
    assert.match(r.stdout, /abstract BLOCKED/, r.stdout + r.stderr);
    assert.is(hits, 0);
  } finally {
    a.close();
    b.close();
    t.cleanup();
  }
});

sandboxTest('network deny: a server the command starts on 127.0.0.1 inside works', async () => {
  const t = makeTree();
  try {
    const r = await py(t, [
      'import socket, threading',
      'srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)',
      'port = srv.getsockname()[1]',
      'def serve():',
      '    c, _ = srv.accept(); c.sendall(b"inside-ok"); c.close()',
      'threading.Thread(target=serve).start()',
      'cl = socket.create_connection(("127.0.0.1", port), timeout=3)',
      'print(cl.recv(100).decode())',
    ].join('\n'));
    assert.is(r.stdout.trim(), 'inside-ok', r.stderr);
  } finally {
    t.cleanup();
  }
});

sandboxTest('--network allow reaches a listener on the host', async () => {
  const t = makeTree();
  const host = await tcpServer();
  try {
    const r = await py(t, CONNECT(`("127.0.0.1", ${host.port})`), { network: 'allow' });
    assert.match(r.stdout, /CONNECTED b'hello-from-host\\n'/, r.stdout + r.stderr);
    assert.is(host.hits(), 1);
    assert.is(r.network, 'allow');
  } finally {
    host.server.close();
    t.cleanup();
  }
});

test.run();
