// Attack: a credential file that does not exist when the sandbox starts (the user runs
// `aws configure` or `gh auth login` 1 s into a long agent command), or that the host replaces
// or renames into place while it runs, is read by the command: masks only cover paths that
// existed when the plan was made, and a host-side rename detaches a mask. Fix: the directories on
// the way to every credential path get Landlock read grants entry by entry (existing entries
// only), so anything created, replaced or renamed into place there later is covered by no grant.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { createEngine } from '../../lib/policy/engine/create-engine.js';
import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const SECRET = 'APPEARED-LATER-SECRET-5521';

/** Starts a command that waits for `ready` (a file the test creates), then runs `script`. */
async function runAfterHostChange(ws: string, home: string, script: string, change: () => void): Promise<string> {
  const ready = join(ws, '..', 'ready');
  const child = spawnSandboxed(['/bin/sh', '-c', `while [ ! -e ${ready} ]; do sleep 0.1; done; ${script}`], {
    workspace: ws, env: { PATH: '/usr/bin:/bin', HOME: home }, timeoutMs: 60_000,
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  change();
  writeFileSync(ready, '');
  const exit = await child.exited;
  assert.not.ok(exit.timedOut);
  return out;
}

sandboxTest('credential files created 1 s into a run cannot be read: new store directories, new files in existing ones, new SSH keys', async () => {
  const t = makeTree();
  try {
    const home = join(t.base, 'home');
    mkdirSync(join(home, '.config', 'gh'), { recursive: true });
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'known_hosts'), 'known');
    writeFileSync(join(home, '.notes'), 'readable-before');
    const created = ['.aws/credentials', '.config/gh/hosts.yml', '.ssh/id_ed25519', '.git-credentials', '.kube/config', '.docker/config.json', '.bash_history', '.config/gcloud/credentials.db', '.newtool-token'];
    const out = await runAfterHostChange(t.ws, home, [
      ...created.map((rel) => `cat "$HOME/${rel}" 2>/dev/null && echo "LEAK ${rel}"`),
      'cat "$HOME/.notes"; cat "$HOME/.ssh/known_hosts"; echo; echo done',
    ].join('; '), () => {
      for (const rel of created) {
        mkdirSync(join(home, rel, '..'), { recursive: true });
        writeFileSync(join(home, rel), `${SECRET} ${rel}`);
      }
    });
    assert.match(out, /done/);
    assert.not.match(out, new RegExp(SECRET), out);
    assert.not.match(out, /LEAK/);
    assert.match(out, /readable-before/, 'what existed before stays readable');
    assert.match(out, /known/);
    for (const rel of created) assert.is(readFileSync(join(home, rel), 'utf8'), `${SECRET} ${rel}`, 'the host copy is untouched');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a config denyRead file missing when the run is authorized and created 1 s into it cannot be read, nor one created before the run', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.base, 'secrets'));
    writeFileSync(join(t.base, 'secrets', 'readme.txt'), 'readable-before');
    const denied = [join(t.base, 'secrets', 'prod.env'), join(t.base, 'later', 'deep', 'token')];
    // Missing when the engine reads the config, there before the run starts: masked as usual.
    const before = join(t.ws, 'made-before-the-run.env');
    const engine = await createEngine({ workspaceRoot: t.ws, policy: { denyRead: [...denied, before] }, grantsPath: join(t.base, 'grants.json'), env: { ...process.env, XDG_CONFIG_HOME: join(t.base, 'no-config') } });
    assert.ok(engine.pathLists().denyReadMissing?.includes(before), 'the engine read its lists while the file was missing');
    writeFileSync(before, `${SECRET} before`);
    const ready = join(t.base, 'ready');
    const script = `while [ ! -e ${ready} ]; do sleep 0.1; done; ${[...denied, before].map((path) => `cat ${path} 2>/dev/null; grep -q ${SECRET} ${path} 2>/dev/null && echo LEAK`).join('; ')}; cat ${join(t.base, 'secrets', 'readme.txt')}; echo; echo done`;
    const run = runSandboxed(['/bin/sh', '-c', script], { workspace: t.ws, engine, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const path of denied) {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, `${SECRET} ${path}`);
    }
    writeFileSync(ready, '');
    const r = await run;
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, new RegExp(SECRET), r.stdout);
    assert.not.match(r.stdout, /LEAK/);
    assert.match(r.stdout, /readable-before/, 'what existed before stays readable');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a masked credential file replaced on the host by a rename while the command runs stays unreadable', async () => {
  const t = makeTree();
  try {
    const home = join(t.base, 'home');
    mkdirSync(join(home, '.aws'), { recursive: true });
    writeFileSync(join(home, '.zsh_history'), 'old-history');
    writeFileSync(join(home, '.pgpass'), 'old-pgpass');
    const out = await runAfterHostChange(t.ws, home, 'cat "$HOME/.zsh_history" "$HOME/.pgpass" 2>&1; echo done', () => {
      // How zsh and editors save: write a new file, rename it over the old one.
      for (const name of ['.zsh_history', '.pgpass']) {
        writeFileSync(join(home, `${name}.new`), `${SECRET} ${name}`);
        renameSync(join(home, `${name}.new`), join(home, name));
      }
    });
    assert.match(out, /done/);
    assert.not.match(out, new RegExp(SECRET), out);
    assert.not.match(out, /old-history|old-pgpass/);
  } finally {
    t.cleanup();
  }
});

test.run();
