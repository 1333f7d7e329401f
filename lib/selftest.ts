// SPDX-License-Identifier: MIT
// Self-test ("prove the wall"): real canaries run inside a real sandbox — read a denied file,
// write outside the workspace, connect to a listener on the host's loopback, open a host Unix
// socket — and each layer is reported as enforced or not, with what was observed.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runSandboxed } from './sandbox/run.js';

export interface CanaryResult {
  name: 'read_denied_file' | 'write_outside_workspace' | 'connect_host_loopback' | 'open_host_unix_socket';
  /** The layer that must stop it. */
  layer: string;
  enforced: boolean;
  /** What the canary observed inside the sandbox, or why it could not run. */
  detail: string;
}

const CANARY_SCRIPT = `
const fs = require('fs'); const net = require('net');
const [secret, outside, port, sock] = process.argv.slice(1);
const out = {};
try { out.read = 'READ:' + fs.readFileSync(secret, 'utf8'); } catch (e) { out.read = e.code; }
try { fs.writeFileSync(outside, 'canary'); out.write = 'WROTE'; } catch (e) { out.write = e.code; }
function probe(opts) { return new Promise((resolve) => { const s = net.connect(opts); s.setTimeout(2000);
  s.on('connect', () => { s.destroy(); resolve('CONNECTED'); }); s.on('timeout', () => { s.destroy(); resolve('ETIMEDOUT'); });
  s.on('error', (e) => resolve(e.code)); }); }
(async () => { out.tcp = await probe({ host: '127.0.0.1', port: Number(port) }); out.unix = await probe({ path: sock });
  console.log(JSON.stringify(out)); })();
`;

function listen(server: Server, ...args: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...(args as [number, string]), () => resolve());
  });
}

/** Picks a base directory that stays visible inside the sandbox (Linux's private /tmp hides tmpdir). */
function canaryBase(platform: string): string {
  for (const candidate of platform === 'win32' ? [tmpdir()] : ['/var/tmp', tmpdir()]) {
    try {
      return mkdtempSync(join(candidate, 'zero-sandbox-selftest-'));
    } catch {
      // try the next
    }
  }
  throw new Error('no writable directory for the self-test');
}

/**
 * Where the host's local-socket listener listens: a Unix socket file beside the canaries, or on
 * Windows a named pipe (node:net cannot listen on a file path there). Exported for tests.
 */
export function hostSocketAddress(base: string, platform: string, nonce: string): string {
  return platform === 'win32' ? `\\\\.\\pipe\\zero-sandbox-selftest-${nonce}` : join(base, 'host.sock');
}

/** Runs every canary once inside a sandbox with the default policy (network deny). */
export async function runSelfTest(): Promise<CanaryResult[]> {
  // process.platform: the canaries use this OS's paths and its local socket kind (a named pipe on Windows).
  const platform = process.platform;
  const base = canaryBase(platform);
  const ws = join(base, 'ws');
  mkdirSync(ws);
  const secret = join(base, 'secret.txt');
  const outside = join(base, 'outside.txt');
  const sock = hostSocketAddress(base, platform, randomBytes(12).toString('hex'));
  writeFileSync(secret, 'canary-secret');
  writeFileSync(outside, 'untouched');
  let tcpHits = 0;
  let unixHits = 0;
  const tcp = createServer((s) => {
    tcpHits++;
    s.destroy();
  });
  const unix = createServer((s) => {
    unixHits++;
    s.destroy();
  });
  try {
    await listen(tcp, 0, '127.0.0.1');
    await listen(unix, sock);
    const port = (tcp.address() as { port: number }).port;
    const r = await runSandboxed([process.execPath, '-e', CANARY_SCRIPT, secret, outside, String(port), sock], {
      workspace: ws,
      denyRead: [secret],
      timeoutMs: 20_000,
    });
    let seen: Record<string, string> = {};
    try {
      seen = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>;
    } catch {
      seen = {};
    }
    const failed = (key: string) => seen[key] === undefined ? `no result (exit ${r.exitCode}, stderr: ${r.stderr.trim().slice(0, 200)})` : seen[key]!;
    const hostUntouched = readFileSync(outside, 'utf8') === 'untouched';
    return [
      // Refused, or (Linux) an empty file shown in its place: either way none of its content.
      { name: 'read_denied_file', layer: 'mountns', enforced: seen.read !== undefined && !seen.read.includes('canary-secret'), detail: seen.read === 'READ:' ? 'read as empty' : failed('read') },
      { name: 'write_outside_workspace', layer: 'landlock+mountns', enforced: seen.write !== undefined && seen.write !== 'WROTE' && hostUntouched, detail: failed('write') },
      { name: 'connect_host_loopback', layer: 'netns', enforced: seen.tcp !== undefined && seen.tcp !== 'CONNECTED' && tcpHits === 0, detail: failed('tcp') },
      { name: 'open_host_unix_socket', layer: 'seccomp', enforced: seen.unix !== undefined && seen.unix !== 'CONNECTED' && unixHits === 0, detail: failed('unix') },
    ];
  } finally {
    tcp.close();
    unix.close();
    rmSync(base, { recursive: true, force: true });
  }
}
