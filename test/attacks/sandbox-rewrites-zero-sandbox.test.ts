// Attack: zero-sandbox is installed in the workspace (`ws/node_modules/zero-sandbox`, the
// `npx zero-sandbox` case), so the workspace write root holds the CLI bundle, its V8 code cache,
// the addon and the init helper. The command rewrites them, or moves the package (or its parent
// node_modules) aside and puts its own in place, and the next invocation runs that code on the
// host, unsandboxed.
// Fix: zero-sandbox's own files inside a write root are bound read-only inside the sandbox, and
// every directory between the write root and them is pinned (a mount point cannot be renamed or
// removed), so neither the files nor the path to them can change; the rest of node_modules stays
// writable. The same holds for the packages it loads (hoisted next to it). The test runs the copied package's own CLI, then checks every file of it on the host
// and that the next invocation runs the original.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { installNpmStyle } from '../helpers/own-install.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

/** Every file of the package with its content hash and mode. */
function fingerprint(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = join(dir, rel, name);
    const st = statSync(path);
    if (st.isDirectory()) {
      if (name !== 'node_modules') out.push(...fingerprint(dir, join(rel, name)));
    } else out.push(`${join(rel, name)} ${st.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
  }
  return out;
}

const ATTACK = [
  'echo "console.log(\\"PWNED\\")" >> node_modules/zero-sandbox/dist/cli/cli.js && echo wrote-cli',
  'echo PWNED > node_modules/zero-sandbox/dist/cli/main.js && echo wrote-main',
  'echo PWNED > node_modules/zero-sandbox/dist/cli/cli.cache && echo wrote-cache',
  'echo "console.log(\\"PWNED\\")" >> node_modules/zero-sandbox/dist/cli/run.js && echo wrote-run',
  'echo PWNED > node_modules/zero-sandbox/dist/cli/run.cache && echo wrote-run-cache',
  'for f in $(find node_modules/zero-sandbox/ -name zero_sandbox_init); do cp /bin/true "$f" && echo wrote-init; done',
  'for f in $(find node_modules/zero-sandbox/ -name "*.node"); do rm -f "$f" && echo removed-addon; done',
  'touch node_modules/zero-sandbox/dist/cli/new.js && echo created-file',
  'echo PWNED >> node_modules/node-gyp-build/index.js && echo wrote-dependency',
  'mv node_modules/node-gyp-build node_modules/ngb-old && echo moved-dependency',
  'mv node_modules/zero-sandbox node_modules/zs-old && echo moved-package',
  'rm -rf node_modules/zero-sandbox && echo removed-package',
  'mv node_modules nm-old && echo moved-node-modules',
  'mv node_modules/zero-sandbox/dist node_modules/zero-sandbox/dist-old && echo moved-dist',
  // What npm install does next to it keeps working.
  'mkdir -p node_modules/left-pad && echo "module.exports = 1" > node_modules/left-pad/index.js && echo installed-sibling',
].join('; ');

sandboxTest('a command cannot rewrite, move or replace the zero-sandbox installed in its workspace; the next invocation runs the original', async () => {
  const t = makeTree('zs-self-rewrite-');
  try {
    const pkg = installNpmStyle(t.ws);
    const dependency = join(t.ws, 'node_modules', 'node-gyp-build');
    const before = [...fingerprint(pkg), ...fingerprint(dependency)];
    const cli = join(t.ws, 'node_modules', '.bin', 'zero-sandbox');
    const env = { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
    // A script the engine cannot see into (as a build script would be): only the sandbox stands
    // between its commands and the package.
    writeFileSync(join(t.ws, 'build.sh'), `${ATTACK}\n`);
    const attack = execFileSync(process.execPath, [cli, 'run', '--workspace', t.ws, '--', '/bin/sh', 'build.sh'], { cwd: t.ws, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.is(attack.trim(), 'installed-sibling', 'only the write next to the package succeeded');
    assert.ok(existsSync(join(t.ws, 'node_modules', 'left-pad', 'index.js')));
    assert.not.ok(existsSync(join(t.ws, 'nm-old')));
    assert.not.ok(existsSync(join(t.ws, 'node_modules', 'zs-old')));
    assert.equal([...fingerprint(pkg), ...fingerprint(dependency)], before, 'every file of the package and its dependency is unchanged on the host');
    const next = execFileSync(process.execPath, [cli, 'run', '--workspace', t.ws, '--', 'echo', 'still-sandboxed'], { cwd: t.ws, env, encoding: 'utf8' });
    assert.is(next, 'still-sandboxed\n', 'the next invocation runs the original CLI');
  } finally {
    t.cleanup();
  }
});

test.run();
