// SPDX-License-Identifier: MIT
// Attack: the command plants something host git runs (a new repository with core.fsmonitor, a
// program-running key in the existing repository's config) and its supervisor is killed while it
// waits (SIGKILL of the process calling runSandboxed or running `zero-sandbox run`): that
// process's after-run check never runs, so the planted program would run at the user's next
// `git status`. Fix: the run's whole check is published with its notes; the next run of an
// overlapping workspace, in any process, runs it once the killed run's sandbox is gone, and names
// what it removed or put back (interruptedRunRepairs, a CLI line). A worker thread terminated
// while its command waits is such a supervisor too, though its process lives on. Checked on the
// host with host git and a marker file outside every write root.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { CLI_PATH, REPO_ROOT } from '../helpers/cli.js';
import { makeTree, sandboxTest, until, waitFor, type Tree } from '../helpers/sandbox.js';
import { hostGit, hostRepo, markers, plant } from '../helpers/git-host.js';
import { runNotesDir } from '../../lib/sandbox/run-notes.js';
import { runSandboxed } from '../../lib/sandbox/run.js';

const RUN_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'lib', 'sandbox', 'run.js')).href;

/** A supervisor in a process of its own: `node child.mjs` calling runSandboxed, or the CLI. */
function supervisor(args: string[]): { pid: number; killed: Promise<void>; kill(): void } {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'ignore'] });
  const killed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return { pid: child.pid as number, killed, kill: () => child.kill('SIGKILL') };
}

/** A process calling runSandboxed with `command` in the workspace of `t`. */
function apiSupervisor(t: Tree, command: string): ReturnType<typeof supervisor> {
  const script = join(t.base, 'child.mjs');
  writeFileSync(script, `import { runSandboxed } from ${JSON.stringify(RUN_JS)};
await runSandboxed(['/bin/sh', '-c', process.argv[3]], { workspace: process.argv[2], timeoutMs: 600000 });
`);
  return supervisor([script, t.ws, command]);
}

/** The CLI with `args`: its exit code and what it printed on `stream`. */
function cli(args: string[], stream: 'stdout' | 'stderr'): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child[stream].setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    child.on('close', (code) => resolve({ code, text }));
  });
}

/** The notes entries this process id left in the shared directory. */
function notesOf(pid: number): string[] {
  return readdirSync(runNotesDir()).filter((name) => name.includes(`.${pid}-`));
}

sandboxTest('attack: a repository planted by a command whose runSandboxed process was killed is checked by the next run', async () => {
  const t = makeTree();
  try {
    const command = `git init -q && git config core.fsmonitor "${plant(t.outside, 'fsmonitor')}" && ${waitFor('planted', 'never')}`;
    const killed = apiSupervisor(t, command);
    await until(join(t.ws, 'planted'));
    assert.ok(notesOf(killed.pid).some((name) => name.startsWith('r.')), 'the run in flight published its notes');
    assert.ok(notesOf(killed.pid).some((name) => name.startsWith('s.')), 'and its sandbox');
    killed.kill();
    await killed.killed;
    assert.match(readFileSync(join(t.ws, '.git', 'config'), 'utf8'), /fsmonitor/, 'the planted key is there after the kill');
    const next = await runSandboxed(['/bin/true'], { workspace: t.ws });
    assert.is(next.exitCode, 0, 'this command planted nothing');
    assert.equal(next.protectedPathViolations, []);
    const repairs = next.interruptedRunRepairs ?? [];
    assert.equal(repairs.map((r) => r.path), [join(t.ws, '.git', 'config')], JSON.stringify(repairs));
    assert.match(repairs[0]?.reason ?? '', /core\.fsmonitor/);
    assert.equal(repairs[0]?.interruptedRun, [t.ws]);
    assert.equal(notesOf(killed.pid).filter((name) => !name.startsWith('e.')), [], 'the stale notes were taken');
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
    const again = await runSandboxed(['/bin/true'], { workspace: t.ws });
    assert.is(again.interruptedRunRepairs, undefined, 'the check runs once');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a repository planted by a command whose worker thread was terminated is checked by the next run of the same process', async () => {
  const t = makeTree();
  const worker = new Worker(new URL('../helpers/run-worker.js', import.meta.url), {
    workerData: { workspace: t.ws, command: `git init -q && git config core.fsmonitor "${plant(t.outside, 'worker')}" && ${waitFor('planted', 'never')}` },
  });
  try {
    await until(join(t.ws, 'planted'));
    // Termination skips the worker's after-run check; the process lives on.
    await worker.terminate();
    assert.match(readFileSync(join(t.ws, '.git', 'config'), 'utf8'), /fsmonitor/, 'the planted key is there after the termination');
    const next = await runSandboxed(['/bin/true'], { workspace: t.ws });
    assert.is(next.exitCode, 0);
    const repairs = next.interruptedRunRepairs ?? [];
    assert.equal(repairs.map((r) => r.path), [join(t.ws, '.git', 'config')], JSON.stringify(repairs));
    assert.match(repairs[0]?.reason ?? '', /core\.fsmonitor/);
    hostGit(t.ws, ['status']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
    const again = await runSandboxed(['/bin/true'], { workspace: t.ws });
    assert.is(again.interruptedRunRepairs, undefined, 'the check runs once');
  } finally {
    await worker.terminate();
    t.cleanup();
  }
});

sandboxTest('attack: a config key planted under a killed `zero-sandbox run` is put back by the next `zero-sandbox run`, which names it', async () => {
  const t = makeTree();
  try {
    hostRepo(t.ws);
    const config = join(t.ws, '.git', 'config');
    const before = readFileSync(config);
    const command = `git config core.pager "${plant(t.outside, 'pager')}" && git config core.fsmonitor "${plant(t.outside, 'cli')}" && ${waitFor('planted', 'never')}`;
    const killed = supervisor([CLI_PATH, 'run', '--workspace', t.ws, '--', '/bin/sh', '-c', command]);
    await until(join(t.ws, 'planted'));
    killed.kill();
    await killed.killed;
    assert.not.equal(readFileSync(config), before, 'the planted keys are there after the kill');
    const next = await cli(['run', '--workspace', t.ws, '--', '/bin/true'], 'stderr');
    assert.is(next.code, 0, next.text);
    assert.match(next.text, `killed before its after-run check; that check ran now: ${config}`);
    assert.equal(readFileSync(config), before, 'the config is as it was before the killed run');
    hostGit(t.ws, ['status']);
    hostGit(t.ws, ['log', '-1']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a hook planted under a killed supervisor is removed by `zero-sandbox recover`, without starting a command', async () => {
  const t = makeTree();
  try {
    // A new repository with a hook: host git runs it at the user's first commit there.
    const hook = join(t.ws, 'sub', '.git', 'hooks', 'pre-commit');
    const command = `mkdir sub && cd sub && git init -q && printf '#!/bin/sh\\ntouch ${join(t.outside, 'pwned-hook')}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && cd .. && ${waitFor('planted', 'never')}`;
    const killed = apiSupervisor(t, command);
    await until(join(t.ws, 'planted'));
    killed.kill();
    await killed.killed;
    const recovered = await cli(['recover', '--json'], 'stdout');
    assert.is(recovered.code, 0);
    const repairs = (JSON.parse(recovered.text) as Array<{ path: string; interruptedRun: string[] }>).filter((r) => r.interruptedRun.includes(t.ws));
    assert.equal(repairs.map((r) => r.path), [hook], recovered.text);
    hostGit(join(t.ws, 'sub'), ['commit', '-q', '--allow-empty', '-m', 'x']);
    assert.equal(markers(t.outside), [], 'host git ran nothing planted');
  } finally {
    t.cleanup();
  }
});

test.run();
