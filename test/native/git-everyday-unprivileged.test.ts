// Everyday git inside the sandbox keeps working for an unprivileged caller (uid 65534, no
// capabilities: the read-only git files are bind mounts in its own user namespace, the after-run
// check walks as that user): init then commits, commit, checkout -b, stash, worktree add inside
// the workspace, submodule update against a local path, clone into the workspace. Each run ends
// with exit 0 and no violation, and the host's git (as the same user) sees the result.
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const NOBODY = 65534;

function chownTree(path: string): void {
  chownSync(path, NOBODY, NOBODY);
  if (!statSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) chownTree(join(path, name));
}

// Runs as the unprivileged user: host git prepares, the sandbox does the everyday work, host git
// reads the outcome. Prints one JSON object.
const SCRIPT = `
const { runSandboxed } = await import(process.argv[1]);
const { execFileSync } = await import('node:child_process');
const { mkdirSync } = await import('node:fs');
const base = process.argv[2];
const C = ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'protocol.file.allow=always'];
const G = 'git ' + C.join(' ');
const host = (cwd, ...args) => execFileSync('git', [...C, ...args], { cwd, encoding: 'utf8' });
const repo = (dir) => { mkdirSync(dir, { recursive: true }); host(dir, 'init', '-q', '-b', 'main'); host(dir, 'commit', '-q', '--allow-empty', '-m', 'first'); return dir; };
const out = { runs: {}, host: {} };
const run = async (name, ws, script) => {
  const r = await runSandboxed(['/bin/sh', '-c', script], { workspace: ws });
  out.runs[name] = { exitCode: r.exitCode, violations: r.protectedPathViolations, stderr: r.stderr.slice(-400) };
};
const fresh = base + '/fresh'; mkdirSync(fresh);
await run('init', fresh, G + ' init -q . && echo a > a && ' + G + ' add a && ' + G + ' commit -qm one && echo b > b && ' + G + ' add b && ' + G + ' commit -qm two');
out.host.init = host(fresh, 'log', '--format=%s');
const existing = repo(base + '/existing');
await run('everyday', existing, [
  'echo a > a && ' + G + ' add a && ' + G + ' commit -qm one',
  G + ' checkout -q -b feature && echo b > b && ' + G + ' add b && ' + G + ' commit -qm two',
  'echo change >> a && ' + G + ' stash -q && ' + G + ' stash pop -q && ' + G + ' commit -qam three',
  G + ' worktree add -q wt && ' + G + ' -C wt commit -q --allow-empty -m in-worktree',
].join(' && '));
out.host.everyday = host(existing, 'log', '--format=%s', 'feature');
out.host.worktree = host(existing + '/wt', 'log', '--format=%s', '-1');
const up = repo(base + '/up');
const sup = repo(base + '/super');
host(sup, 'submodule', 'add', '-q', up, 'sub'); host(sup, 'commit', '-qm', 'sub');
host(base, 'clone', '-q', sup, base + '/withsub'); host(base + '/withsub', 'submodule', 'init');
await run('submodule', base + '/withsub', G + ' submodule update');
out.host.submodule = host(base + '/withsub/sub', 'log', '--format=%s');
const cloned = base + '/cloned'; mkdirSync(cloned);
await run('clone', cloned, G + ' clone -q ' + up + ' . && ' + G + ' commit -q --allow-empty -m mine');
out.host.clone = host(cloned, 'log', '--format=%s');
process.stdout.write(JSON.stringify(out));
`;

sandboxTest('everyday git as an unprivileged user (uid 65534): init, commit, checkout -b, stash, worktree add, submodule update, clone', () => {
  const t = makeTree();
  try {
    const base = join(t.base, 'nobody');
    mkdirSync(base);
    chownTree(t.base);
    const run = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'sandbox', 'run.js');
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'node', '--input-type=module', '-e', SCRIPT, run, base], {
      encoding: 'utf8', cwd: base, env: { PATH: process.env.PATH, HOME: t.outside }, timeout: 240_000,
    });
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { runs: Record<string, { exitCode: number; violations: string[]; stderr: string }>; host: Record<string, string> };
    for (const [name, res] of Object.entries(out.runs)) {
      assert.is(res.exitCode, 0, `${name}: ${res.stderr}`);
      assert.equal(res.violations, [], name);
    }
    assert.equal(Object.keys(out.runs), ['init', 'everyday', 'submodule', 'clone']);
    assert.is(out.host.init, 'two\none\n');
    assert.match(out.host.everyday ?? '', /^three\ntwo\none\nfirst\n$/);
    assert.is(out.host.worktree, 'in-worktree\n');
    assert.is(out.host.submodule, 'first\n');
    assert.is(out.host.clone, 'mine\nfirst\n');
  } finally {
    t.cleanup();
  }
});

test.run();
