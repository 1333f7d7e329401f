// SPDX-License-Identifier: MIT
// Attack: sandboxes of one workspace run from separate processes at once (two `zero-sandbox run`
// invocations, two programs calling runSandboxed). The first changes the repository's config (a
// program-running key) and waits; the others start meanwhile, in processes of their own, so what
// they find as the config "before" their run is already the first command's work. Had each process
// only its own notes, a later run's check would put the planted key back after the first check
// undid it, and host git would run it. Fix: every run publishes its notes, before its sandbox
// starts, in a directory of the user's that no sandbox can reach (run-notes.ts); a run takes those
// of other processes' runs of overlapping write roots that were in flight while it noted. Checked
// with one planting process and three started during it (one ends before it, two after), then
// host git on the host. The same for an agent config (Claude Code settings with a hook) planted
// while a run of another process notes. Also: the notes of a run whose process was killed are never taken, so they
// cannot put back a config the user changed since.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { REPO_ROOT } from '../helpers/cli.js';
import { makeTree, sandboxTest, until, waitFor, type Tree } from '../helpers/sandbox.js';
import { hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';
import { runNotesDir } from '../../lib/sandbox/run-notes.js';

const RUN_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'run.js')).href;

interface ChildRun {
  pid: number;
  result: Promise<{ exitCode: number | null; violations: string[]; stderr: string }>;
  kill(): void;
}

/** One runSandboxed call in a Node process of its own. */
function runInChild(t: Tree, script: string, options: { workspace?: string; allowWrite?: string[] } = {}): ChildRun {
  const file = join(t.base, 'child.mjs');
  if (!existsSync(file)) {
    writeFileSync(file, `import { runSandboxed } from ${JSON.stringify(RUN_JS)};
const [ws, script, options] = JSON.parse(process.argv[2]);
const r = await runSandboxed(['/bin/sh', '-c', script], { workspace: ws, timeoutMs: 120000, ...options });
process.stdout.write(JSON.stringify({ exitCode: r.exitCode, violations: r.protectedPathViolations, stderr: r.stderr }));
`);
  }
  const child = spawn(process.execPath, [file, JSON.stringify([options.workspace ?? t.ws, script, { allowWrite: options.allowWrite ?? [] }])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const result = new Promise<{ exitCode: number | null; violations: string[]; stderr: string }>((resolve, reject) => {
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`child exited ${code}: ${err}`));
    });
  });
  return { pid: child.pid as number, result, kill: () => child.kill('SIGKILL') };
}

sandboxTest('attack: runs started by other processes while one changes the config do not put its planted key back', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const config = join(t.ws, '.git', 'config');
    const before = readFileSync(config);
    const planter = runInChild(t, `git config core.fsmonitor "${plant(t.outside, 'fsmonitor')}" && ${waitFor('planted', 'go-planter')}`);
    await until(join(t.ws, 'planted'));
    assert.not.equal(readFileSync(config), before, 'the command planted the key');
    // Three processes start runs while the planted key is there: one ends before the planter, two after.
    const early = runInChild(t, waitFor('early-started', 'go-early'));
    const late = [runInChild(t, waitFor('late1-started', 'go-late')), runInChild(t, waitFor('late2-started', 'go-late'))];
    for (const name of ['early-started', 'late1-started', 'late2-started']) await until(join(t.ws, name));
    writeFileSync(join(t.ws, 'go-early'), '');
    const earlyResult = await early.result;
    // The early run's check compares with the config as it was before the planter ran.
    assert.equal(earlyResult.violations, [config], earlyResult.stderr);
    assert.equal(readFileSync(config), before, 'the first check put the config back');
    writeFileSync(join(t.ws, 'go-planter'), '');
    const planted = await planter.result;
    assert.is(planted.exitCode, 0, planted.stderr);
    assert.equal(readFileSync(config), before);
    writeFileSync(join(t.ws, 'go-late'), '');
    for (const r of await Promise.all(late.map((run) => run.result))) assert.equal(r.violations, [], r.stderr);
    assert.equal(readFileSync(config), before, 'no later run put the planted key back');
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a run started by another process while one plants an agent config does not put the planted config back', async () => {
  const t = makeTree();
  try {
    // The planter writes Claude Code settings with a hook; a run of another process notes while it is there.
    const settings = join(t.ws, '.claude', 'settings.json');
    const hook = JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${join(t.outside, 'ran')}` }] }] } });
    const planter = runInChild(t, `mkdir -p .claude && printf '%s' '${hook}' > .claude/settings.json && ${waitFor('planted', 'go-planter')}`);
    await until(join(t.ws, 'planted'));
    assert.ok(existsSync(settings), 'the command planted the settings');
    const late = runInChild(t, waitFor('late-started', 'go-late'));
    await until(join(t.ws, 'late-started'));
    writeFileSync(join(t.ws, 'go-planter'), '');
    const planted = await planter.result;
    assert.equal(planted.violations, [settings], planted.stderr);
    assert.not.ok(existsSync(settings), 'the planter\'s check removed the settings');
    writeFileSync(join(t.ws, 'go-late'), '');
    const r = await late.result;
    assert.equal(r.violations, [], r.stderr);
    assert.not.ok(existsSync(settings), 'the later run did not put the planted settings back');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a run of another process started while one plants a config at the top of a nested write root does not put it back', async () => {
  const t = makeTree();
  try {
    const dist = join(t.ws, 'packages', 'p', 'dist');
    mkdirSync(dist, { recursive: true });
    // Settled (last changed over 2 s ago): the planter's guard does not note its top name by name.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const settings = join(dist, '.claude', 'settings.json');
    const hook = JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${join(t.outside, 'ran')}` }] }] } });
    const planter = runInChild(t, `mkdir -p ${dist}/.claude && printf '%s' '${hook}' > ${settings} && ${waitFor('planted', 'go-planter')}`, { allowWrite: [dist] });
    await until(join(t.ws, 'planted'));
    const late = runInChild(t, `touch late-started; while [ ! -e go-late ]; do sleep 0.05; done`, { workspace: dist });
    await until(join(dist, 'late-started'));
    writeFileSync(join(t.ws, 'go-planter'), '');
    const planted = await planter.result;
    assert.equal(planted.violations, [settings], planted.stderr);
    writeFileSync(join(dist, 'go-late'), '');
    const r = await late.result;
    assert.equal(r.violations, [], r.stderr);
    assert.not.ok(existsSync(settings), 'the later run did not put the planted settings back');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: the notes of a run whose process was killed never put back a config the user changed since', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const config = join(t.ws, '.git', 'config');
    // The config as the killed run notes it holds a program the user removes afterwards.
    hostGit(t.ws, ['config', 'core.fsmonitor', plant(t.outside, 'old-config')]);
    const crashed = runInChild(t, waitFor('crashed-started', 'never'));
    await until(join(t.ws, 'crashed-started'));
    const published = () => readdirSync(runNotesDir()).filter((name) => name.startsWith(`r.${crashed.pid}-`));
    assert.is(published().length, 1, 'the run in flight published its notes');
    crashed.kill();
    await crashed.result.catch(() => undefined);
    // The user changes the config on the host once that process is gone.
    hostGit(t.ws, ['config', '--unset', 'core.fsmonitor']);
    const changed = readFileSync(config);
    const next = await runInChild(t, 'true').result;
    assert.equal(next.violations, [], next.stderr);
    assert.equal(readFileSync(config), changed, 'the config is the one the user left');
    assert.equal(published(), [], 'the stale notes were removed');
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), []);
  } finally {
    t.cleanup();
  }
});

test.run();
