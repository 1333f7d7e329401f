// Attack: a root caller's sandbox runs as uid 0 mapped to the host's root; with every capability
// dropped it still passes the owner permission bits, so it could read /etc/shadow, /etc/gshadow,
// sudo rules, SSH host private keys and /root. Fix: for a root caller those are masked like the
// credential stores (/root only when it is not the caller's home and holds no write root).
import { readFileSync, statSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildRootOnlyCandidates } from '../../lib/credentials.js';
import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

test('root-only candidates: shadow files, sudo rules, SSH host private keys, and /root unless it is home or holds a write root', () => {
  const list = (dir: string) => (dir === '/etc/ssh' ? ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'ssh_host_rsa_key', 'sshd_config'] : undefined);
  const paths = buildRootOnlyCandidates('/home/u', ['/work/ws'], list);
  for (const path of ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/sudoers.d', '/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_rsa_key', '/root']) {
    assert.ok(paths.includes(path), path);
  }
  assert.not.ok(paths.includes('/etc/ssh/ssh_host_ed25519_key.pub'));
  assert.not.ok(paths.includes('/etc/ssh/sshd_config'));
  assert.not.ok(buildRootOnlyCandidates('/root', ['/work/ws'], list).includes('/root'), "the caller's own home stays");
  assert.not.ok(buildRootOnlyCandidates('/home/u', ['/root/ws'], list).includes('/root'), 'a write root inside /root stays reachable');
});

sandboxTest('a root caller cannot read /etc/shadow, /etc/gshadow or another /root; the host files are unchanged', async () => {
  if (process.getuid?.() !== 0) return; // only root can read these on the host in the first place
  const t = makeTree();
  const savedHome = process.env.HOME;
  const before = { shadow: readFileSync('/etc/shadow', 'utf8'), mtime: statSync('/etc/shadow').mtimeMs };
  try {
    process.env.HOME = t.outside; // /root is then not the caller's home
    const r = await sh(t, 'cat /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow- 2>&1; ls -a /root 2>&1; cat /root/.bashrc /root/.profile 2>&1; echo done', { env: { PATH: '/usr/bin:/bin', HOME: t.outside } });
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /^root:/m, 'no password hash line');
    assert.not.ok(r.stdout.includes(before.shadow.split('\n')[0] as string));
    assert.not.match(r.stdout, /\.bashrc\n/, '/root is not listable');
    assert.is(readFileSync('/etc/shadow', 'utf8'), before.shadow);
    assert.is(statSync('/etc/shadow').mtimeMs, before.mtime);
  } finally {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    t.cleanup();
  }
});

test.run();
