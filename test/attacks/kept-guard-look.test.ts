// SPDX-License-Identifier: MIT
// Attack: runs of one policy with many nested write roots give the protected-path guard's look
// before the run (repositories, hooks, configs, pointer files, agent and editor configs) again
// from the run before while a watch set on every directory it looked in stays quiet, and check
// after the run only what a directory event does not show (guard-memo.ts, protected.ts). The
// command of a run answered so then changes what that rests on: in place, where no directory
// event is queued (a config appended to, a tool config overwritten), and by making entries (a
// repository, a hook, a tool config, `.zero` at the top of a root). Each must be caught and undone
// as on a cold run, and host git must run nothing. What the host changes between runs (a root made
// a repository, a root replaced by a link, a config edited in place) must be what the next run
// sees. A run killed while its command runs leaves its check in its notes, which the next run
// finds and runs. Each test runs real sandboxes and then looks at the host's files.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { REPO_ROOT } from '../helpers/cli.js';
import { hookScript, hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';
import { makeTree, rejection, sandboxTest, sh, until, waitFor, type Tree } from '../helpers/sandbox.js';
import { guardMemoCounts } from '../../lib/sandbox/guard-memo.js';
import { quietCheckCounts } from '../../lib/sandbox/protected.js';
import { runSandboxed } from '../../lib/sandbox/run.js';

const ROOTS = 200;
const settle = () => new Promise((resolve) => setTimeout(resolve, 2200));
const dist = (t: Tree, i: number) => join(t.ws, 'packages', `p${i}`, 'dist');

/**
 * A workspace that is a repository with a tool config below its top, ROOTS nested write roots,
 * left to settle (a file changed in the last two seconds is never kept), then runs until a run
 * gave the kept look again (Linux, where the watch sets are).
 */
async function warm(t: Tree): Promise<string[]> {
  hostRepo(t.ws);
  mkdirSync(join(t.ws, 'packages', 'app', '.vscode'), { recursive: true });
  writeFileSync(join(t.ws, 'packages', 'app', '.vscode', 'tasks.json'), '{"version":"2.0.0","tasks":[]}\n');
  const roots: string[] = [];
  for (let i = 0; i < ROOTS; i++) {
    mkdirSync(dist(t, i), { recursive: true });
    roots.push(dist(t, i));
  }
  await settle();
  for (let run = 0; run < 3; run++) {
    const r = await sh(t, 'true', { allowWrite: roots });
    assert.is(r.exitCode, 0, r.stderr);
  }
  if (process.platform === 'linux') await assertKept(t, roots);
  return roots;
}

/** A run of `true` gives the kept look again and finds its watch set quiet after the run. */
async function assertKept(t: Tree, roots: string[]): Promise<void> {
  const reused = guardMemoCounts.reused;
  const quiet = quietCheckCounts.quiet;
  const r = await sh(t, 'true', { allowWrite: roots });
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(guardMemoCounts.reused, reused + 1, 'the look before the run was the kept one');
  assert.is(quietCheckCounts.quiet, quiet + 1, 'the check after the run found its watch set quiet');
}

function violated(r: { protectedPathViolations: string[] }, path: string): void {
  assert.ok(r.protectedPathViolations.some((v) => v === path || v.startsWith(`${path}/`)), `${path} not in:\n${r.protectedPathViolations.join('\n')}`);
}

sandboxTest('attack: a config appended to in place and a tool config overwritten in place on a run of a kept look are put back; a hook is not written', async () => {
  const t = makeTree();
  try {
    const roots = await warm(t);
    const config = join(t.ws, '.git', 'config');
    const tasks = join(t.ws, 'packages', 'app', '.vscode', 'tasks.json');
    const before = readFileSync(config, 'utf8');
    const reused = guardMemoCounts.reused;
    const quiet = quietCheckCounts.quiet;
    const r = await sh(t, [
      `(printf '#!/bin/sh\\ntouch ${join(t.outside, 'pwned-hook')}\\n' > .git/hooks/pre-commit && echo hook-written || echo hook-refused)`,
      `printf '[core]\\n\\tfsmonitor = ${plant(t.outside, 'fsmonitor')}\\n\\thooksPath = ${t.outside}\\n' >> .git/config`,
      `printf '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch ${join(t.outside, 'pwned-task')}","runOptions":{"runOn":"folderOpen"}}]}' > packages/app/.vscode/tasks.json`,
      'echo done',
    ].join('; '), { allowWrite: roots });
    assert.match(r.stdout, /hook-refused/, r.stdout + r.stderr);
    assert.match(r.stdout, /done/);
    assert.is(r.exitCode, 1, 'a command that left something for host git to run fails');
    if (process.platform === 'linux') {
      assert.is(guardMemoCounts.reused, reused + 1, 'the look before the run was the kept one');
      assert.is(quietCheckCounts.quiet, quiet + 1, 'in-place writes queue no directory event: the check was the quiet one');
    }
    assert.is(readFileSync(config, 'utf8'), before, 'the config is as it was');
    assert.is(readFileSync(tasks, 'utf8'), '{"version":"2.0.0","tasks":[]}\n', 'the tool config is as it was');
    violated(r, config);
    violated(r, tasks);
    assert.not.ok(existsSync(join(t.ws, '.git', 'hooks', 'pre-commit')));
    hostGit(t.ws, ['status']);
    hostGit(t.ws, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository, a hook, a tool config and .zero made at the top of roots on a run of a kept look are removed', async () => {
  const t = makeTree();
  try {
    const roots = await warm(t);
    const r = await sh(t, [
      `git init -q packages/p10/dist && printf '[core]\\n\\tfsmonitor = ${plant(t.outside, 'new-repo')}\\n' >> packages/p10/dist/.git/config`,
      `mkdir -p packages/p11/dist/.git/hooks && printf ${hookScript(t.outside, 'hook')} > packages/p11/dist/.git/hooks/pre-commit && chmod +x packages/p11/dist/.git/hooks/pre-commit`,
      `mkdir packages/p12/dist/.vscode && printf '{"tasks":[{"command":"touch ${join(t.outside, 'pwned-task')}","runOptions":{"runOn":"folderOpen"}}]}' > packages/p12/dist/.vscode/tasks.json`,
      'mkdir packages/p13/dist/.zero && echo x > packages/p13/dist/.zero/config.json',
      'echo planted',
    ].join(' && '), { allowWrite: roots });
    assert.match(r.stdout, /planted/, r.stderr);
    assert.is(r.exitCode, 1);
    assert.not.ok(existsSync(join(dist(t, 10), '.git', 'config')) && /fsmonitor/.test(readFileSync(join(dist(t, 10), '.git', 'config'), 'utf8')), 'the new repository keeps no fsmonitor');
    assert.not.ok(existsSync(join(dist(t, 11), '.git', 'hooks', 'pre-commit')), 'the hook is removed');
    assert.not.ok(existsSync(join(dist(t, 12), '.vscode', 'tasks.json')), 'the tool config is removed');
    assert.not.ok(existsSync(join(dist(t, 13), '.zero')), '.zero is removed');
    violated(r, join(dist(t, 12), '.vscode', 'tasks.json'));
    violated(r, join(dist(t, 13), '.zero'));
    for (const i of [10, 11]) if (existsSync(join(dist(t, i), '.git'))) hostGit(dist(t, i), ['status']);
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
    // The next run looks afresh (the set saw the entries), then keeps that look again.
    for (let run = 0; run < 2; run++) assert.is((await sh(t, 'true', { allowWrite: roots })).exitCode, 0);
    if (process.platform === 'linux') await assertKept(t, roots);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: what the host changes between runs of a kept look is what the next run sees (a root made a repository, a root replaced by a link, a config edited in place)', async () => {
  const t = makeTree();
  try {
    const roots = await warm(t);
    // A root becomes a repository on the host: its hooks are read-only in the next run.
    hostRepo(dist(t, 20));
    // The workspace's config edited in place (no rename): the next run's "before" is the new one.
    appendFileSync(join(t.ws, '.git', 'config'), '[user]\n\tname = host\n');
    const edited = readFileSync(join(t.ws, '.git', 'config'), 'utf8');
    const r = await sh(t, [
      `(printf ${hookScript(t.outside, 'hook20')} > packages/p20/dist/.git/hooks/pre-commit && echo hook20-written || echo hook20-refused)`,
      `printf '[core]\\n\\tpager = ${plant(t.outside, 'pager')}\\n' >> .git/config`,
      'echo done',
    ].join('; '), { allowWrite: roots });
    assert.match(r.stdout, /hook20-refused/, r.stdout + r.stderr);
    assert.match(r.stdout, /done/);
    assert.not.ok(existsSync(join(dist(t, 20), '.git', 'hooks', 'pre-commit')));
    assert.is(readFileSync(join(t.ws, '.git', 'config'), 'utf8'), edited, "the config is the host's edit, without the command's");
    hostGit(dist(t, 20), ['commit', '-q', '--allow-empty', '-m', 'x']);
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
    // A root replaced by a link to a repository outside the workspace: refused, as on a cold run.
    const elsewhere = hostRepo(join(t.outside, 'elsewhere'));
    renameSync(dist(t, 21), join(t.base, 'old-dist'));
    symlinkSync(elsewhere, dist(t, 21));
    const refused = await rejection(sh(t, `printf ${hookScript(t.outside, 'hook21')} > packages/p21/dist/.git/hooks/pre-commit`, { allowWrite: roots }));
    assert.match(refused.message, /through a symlink/);
    assert.not.ok(existsSync(join(elsewhere, '.git', 'hooks', 'pre-commit')));
    hostGit(elsewhere, ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
  } finally {
    t.cleanup();
  }
});

const RUN_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'run.js')).href;
const MEMO_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'guard-memo.js')).href;

sandboxTest('attack: a run of a kept look whose runSandboxed process is killed leaves its check to the next run, which undoes what its command planted', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const roots: string[] = [];
    for (let i = 0; i < ROOTS; i++) {
      mkdirSync(dist(t, i), { recursive: true });
      roots.push(dist(t, i));
    }
    await settle();
    const config = join(t.ws, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    // Three runs warm the kept look in that process; the fourth, given it again, plants and waits.
    const script = join(t.base, 'child.mjs');
    writeFileSync(script, `import { runSandboxed } from ${JSON.stringify(RUN_JS)};
import { guardMemoCounts } from ${JSON.stringify(MEMO_JS)};
import { writeFileSync } from 'node:fs';
const [ws, command, report, rootsJson] = process.argv.slice(2);
const allowWrite = JSON.parse(rootsJson);
for (let run = 0; run < 3; run++) await runSandboxed(['/bin/true'], { workspace: ws, allowWrite });
const reused = guardMemoCounts.reused;
writeFileSync(report, JSON.stringify({ reused }));
await runSandboxed(['/bin/sh', '-c', command], { workspace: ws, allowWrite, timeoutMs: 600000 });
`);
    const command = [
      `printf '[core]\\n\\tfsmonitor = ${plant(t.outside, 'fsmonitor')}\\n' >> .git/config`,
      'git init -q packages/p30/dist',
      `printf ${hookScript(t.outside, 'hook')} > packages/p30/dist/.git/hooks/pre-commit && chmod +x packages/p30/dist/.git/hooks/pre-commit`,
      waitFor('planted', 'never'),
    ].join(' && ');
    const report = join(t.base, 'report.json');
    const child = spawn(process.execPath, [script, t.ws, command, report, JSON.stringify(roots)], { stdio: ['ignore', 'ignore', 'ignore'] });
    const gone = new Promise<void>((resolve) => child.on('close', () => resolve()));
    await until(join(t.ws, 'planted'));
    child.kill('SIGKILL');
    await gone;
    if (process.platform === 'linux') assert.ok((JSON.parse(readFileSync(report, 'utf8')) as { reused: number }).reused >= 1, 'the killed process gave a kept look before its last run');
    assert.match(readFileSync(config, 'utf8'), /fsmonitor/, 'the planted key is there after the kill');
    const next = await runSandboxed(['/bin/true'], { workspace: t.ws, allowWrite: roots });
    assert.is(next.exitCode, 0, next.stderr);
    const repairs = (next.interruptedRunRepairs ?? []).map((r) => r.path);
    assert.ok(repairs.includes(config), JSON.stringify(repairs));
    assert.ok(repairs.some((path) => path.startsWith(join(dist(t, 30), '.git'))), JSON.stringify(repairs));
    assert.is(readFileSync(config, 'utf8'), before, 'the config is as it was before the killed run');
    assert.not.ok(existsSync(join(dist(t, 30), '.git', 'hooks', 'pre-commit')), 'the hook is removed');
    hostGit(t.ws, ['status']);
    if (existsSync(join(dist(t, 30), '.git'))) hostGit(dist(t, 30), ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
  } finally {
    t.cleanup();
  }
});

test.run();
