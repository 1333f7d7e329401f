// Network-deny sandboxes reuse network namespaces (native/linux/net_holders.h), one sandbox at a
// time. The attacks: leave a listener behind for the next sandbox to find, or reach a sandbox that
// runs at the same time through a shared namespace. Both must fail.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { makeTree, py, sandboxTest } from '../helpers/sandbox.js';

const PORT = 47311;

const LISTEN_AND_WAIT = [
  'import socket, time',
  's = socket.socket()',
  `s.bind(("127.0.0.1", ${PORT}))`,
  's.listen()',
  'print("LISTENING", flush=True)',
  'time.sleep(60)',
].join('\n');

const PROBE = [
  'import socket, errno, os',
  'print(os.readlink("/proc/self/ns/net"))',
  'try:',
  `    socket.create_connection(("127.0.0.1", ${PORT}), timeout=2); print("CONNECTED")`,
  'except OSError as e:',
  '    print("REFUSED", errno.errorcode.get(e.errno, e.errno))',
].join('\n');

sandboxTest('attack: a listener left behind by one sandbox is not reachable from the next (namespace reuse)', async () => {
  const t = makeTree();
  // Cold starts: each takes the holder the last one gave back, so the next run lands in the first
  // one's namespace whatever the load (prewarmed sandboxes take theirs while earlier runs still
  // hold theirs, and under load may never be handed the first one's).
  const cold = { prewarm: false };
  try {
    // The listener is a background process: the sandbox's end kills it.
    const first = await py(t, `import os, subprocess, sys, time\nprint(os.readlink("/proc/self/ns/net"))\nsubprocess.Popen([sys.executable, "-c", ${JSON.stringify(LISTEN_AND_WAIT)}])\ntime.sleep(0.5)\nprint("LEFT")`, cold);
    assert.match(first.stdout, /LISTENING\nLEFT\n$/, first.stderr);
    const firstNs = first.stdout.split('\n')[0];
    let reused = 0;
    // Several runs, so that some of them land in the namespace the first one used.
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const next = await py(t, PROBE, cold);
      const [ns, verdict] = next.stdout.trim().split('\n');
      if (ns === firstNs) reused++;
      assert.is(verdict, 'REFUSED ECONNREFUSED', `run ${i}: ${next.stdout}${next.stderr}`);
      // The port is free for a server of its own.
      const own = await py(t, `import socket\ns = socket.socket()\ns.bind(("127.0.0.1", ${PORT}))\ns.listen()\nprint("BOUND")`, cold);
      assert.is(own.stdout.trim(), 'BOUND', own.stderr);
    }
    assert.ok(reused > 0, 'the first sandbox\'s network namespace was handed to a later one (the premise of this test)');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: two sandboxes running at once cannot reach each other over loopback', async () => {
  const t = makeTree();
  const server = spawnSandboxed(['python3', '-c', LISTEN_AND_WAIT], { workspace: t.ws });
  try {
    const listening = await new Promise<string>((resolve) => {
      let text = '';
      server.stdout?.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('LISTENING')) resolve(text);
      });
      server.exited.then(() => resolve(text));
    });
    assert.match(listening, /LISTENING/);
    const probe = await py(t, PROBE);
    assert.is(probe.stdout.trim().split('\n')[1], 'REFUSED ECONNREFUSED', probe.stdout + probe.stderr);
    // And the same port is free in the other sandbox's own namespace.
    const second = await py(t, `import socket\ns = socket.socket()\ns.bind(("127.0.0.1", ${PORT}))\nprint("BOUND")`);
    assert.is(second.stdout.trim(), 'BOUND', second.stderr);
  } finally {
    server.kill();
    await server.exited;
    t.cleanup();
  }
});

test.run();
