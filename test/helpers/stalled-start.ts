// SPDX-License-Identifier: MIT
// Run as its own process under a low RLIMIT_NPROC (the test sets it with the shell's ulimit): one
// long run in flight, then the rest of the user's processes taken by plain sleepers of 3 s started
// outside any sandbox (another program's processes, as far as the runs know), then a short run,
// whose start the limit refuses. The long run does not end while the short one waits: the short
// one must start once the sleepers are gone, not when the long run ends (it is stopped once the
// short one is done). Prints one JSON line: how many sleepers started, how many starts waited to
// start again, the order the runs ended in and the short run's outcome.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { runAdmission } from '../../lib/sandbox/run-admission.js';

const [workspace] = process.argv.slice(2) as [string];
let retries = 0;
const retryAfterAnEnd = runAdmission.retryAfterAnEnd.bind(runAdmission);
runAdmission.retryAfterAnEnd = (...args) => {
  retries++;
  return retryAfterAnEnd(...args);
};
const ended: string[] = [];
const stop = new AbortController();
const started = join(workspace, 'started');
const long = runSandboxed(['/bin/sh', '-c', `touch ${started}; exec sleep 30`], { workspace, prewarm: false, signal: stop.signal }).then((r) => {
  ended.push('long');
  return r;
});
while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 20));

// Sleepers until the limit refuses one.
const sleepers: ChildProcess[] = [];
for (let i = 0; i < 500; i++) {
  const child = await new Promise<ChildProcess | undefined>((resolve) => {
    const c = spawn('/bin/sleep', ['3'], { stdio: 'ignore' });
    c.once('error', () => resolve(undefined));
    c.once('spawn', () => resolve(c));
  });
  if (child === undefined) break;
  sleepers.push(child);
}

let outcome: string;
try {
  const r = await runSandboxed(['/bin/true'], { workspace, prewarm: false });
  outcome = r.exitCode === 0 ? 'ok' : `exit ${String(r.exitCode)} ${r.stderr}`;
} catch (error) {
  const { code, message } = error as { code?: string; message?: string };
  outcome = `${String(code)}: ${String(message)}`;
}
ended.push('short');
stop.abort();
await long.catch(() => undefined);
process.stdout.write(`${JSON.stringify({ sleepers: sleepers.length, retries, ended, outcome })}\n`);
