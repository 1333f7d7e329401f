// SPDX-License-Identifier: MIT
// No process of a run outlives the after-run check: a process that left the command's process
// group (a new session, as setsid() makes) and waits until the run is over, then plants a
// core.fsmonitor command in .git/config (writable during the run, compared after it), must never
// get to write it, so the host's real `git status` afterwards runs nothing. Linux: the sandbox's
// pid namespace ends with its init. macOS: the process group is killed, then every process still
// under the run's profile (found by the run's mark, run-members.ts) until none is left.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree } from '../helpers/sandbox.js';
import { platformSandboxTestsEnabled } from '../helpers/probe.js';
import { hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';
import { alive } from '../helpers/alive.js';

// POSIX sandboxes only (Windows' job object has no sessions to leave); host git is needed.
const enabled = platformSandboxTestsEnabled() && process.platform !== 'win32' && spawnSync('git', ['--version']).status === 0;
const attack = (name: string, fn: () => Promise<void>): void => (enabled ? test(name, fn) : test.skip(name, fn));

/** How long the survivor waits before it writes: well past the run's end and its check. */
const SURVIVOR_DELAY_MS = 1500;

// The command: starts a survivor in a new session (node's detached spawn calls setsid), waits
// until it runs, and exits 0. The survivor notes its pid, waits, then writes the config.
const COMMAND = `
const fs = require('fs'); const { spawn } = require('child_process');
const [ws, line] = process.argv.slice(1);
const late = \`
const fs = require('fs');
const [ws, line] = process.argv.slice(1);
fs.writeFileSync(ws + '/survivor-started', String(process.pid));
setTimeout(() => {
  try { fs.appendFileSync(ws + '/.git/config', line); fs.writeFileSync(ws + '/survivor-wrote', 'x'); } catch (e) { fs.writeFileSync(ws + '/survivor-failed', String(e.code)); }
}, ${SURVIVOR_DELAY_MS});
\`;
spawn(process.execPath, ['-e', late, ws, line], { detached: true, stdio: 'ignore' }).unref();
const until = Date.now() + 20000;
while (!fs.existsSync(ws + '/survivor-started') && Date.now() < until) {}
process.stdout.write(fs.existsSync(ws + '/survivor-started') ? 'STARTED\\n' : 'NOT-STARTED\\n');
`;

attack('a process that left the group cannot plant core.fsmonitor after the run: host git status runs nothing', async () => {
  const t = makeTree('zs-survivors-');
  try {
    hostRepo(t.ws);
    // Quoted: ; would start a comment in a git config value.
    const line = `[core]\n\tfsmonitor = "${plant(t.outside, 'fsmonitor')}"\n`;
    const r = await runSandboxed([process.execPath, '-e', COMMAND, t.ws, line], { workspace: t.ws, timeoutMs: 60_000 });
    // The survivor really ran inside the sandbox (not a vacuous pass).
    assert.match(r.stdout, /^STARTED/, `exit ${r.exitCode}: ${r.stderr}`);
    assert.is(r.exitCode, 0, r.stderr);
    if (process.platform === 'darwin') {
      // A host pid on macOS (a pid of the sandbox's own namespace on Linux): it is gone already.
      const pid = Number(readFileSync(join(t.ws, 'survivor-started'), 'utf8'));
      const survived = alive(pid);
      if (survived) process.kill(pid, 'SIGKILL');
      assert.not.ok(survived, 'the survivor outlived the run');
    }
    // Past the survivor's delay: had it lived, it would have written by now.
    await new Promise((resolve) => setTimeout(resolve, SURVIVOR_DELAY_MS * 2));
    assert.not.ok(existsSync(join(t.ws, 'survivor-wrote')), 'the survivor wrote after the run');
    assert.not.ok(existsSync(join(t.ws, 'survivor-failed')), 'the survivor was alive after the run');
    assert.not.ok(readFileSync(join(t.ws, '.git', 'config'), 'utf8').includes('fsmonitor'));
    const status = hostGit(t.ws, ['status', '--porcelain']);
    assert.is(status.status, 0, status.stderr);
    assert.equal(markers(t.outside), []);
    // The control: the same line, written by the host, does run on git status (the attack is real).
    appendFileSync(join(t.ws, '.git', 'config'), line);
    hostGit(t.ws, ['status', '--porcelain']);
    assert.equal(markers(t.outside), ['pwned-fsmonitor']);
  } finally {
    t.cleanup();
  }
});

test.run();
