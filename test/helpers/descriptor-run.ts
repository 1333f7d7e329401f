// SPDX-License-Identifier: MIT
// Run as its own process under a low RLIMIT_NOFILE (the test sets it with the shell's ulimit):
// makes `count` runSandboxed calls in one tick, each appending "s" to a log in the workspace,
// sleeping `seconds` and appending "e", and prints one JSON line: how many runs the admission
// allows at once, the limit it read, and every run's outcome (exit code, or the error's code and
// message).
import { join } from 'node:path';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { runAdmission } from '../../lib/sandbox/run-admission.js';
import { processLimits } from '../../lib/process-limits.js';

const [workspace, count, seconds] = process.argv.slice(2) as [string, string, string];
const script = `echo s >> ${join(workspace, 'log')}; sleep ${seconds}; echo e >> ${join(workspace, 'log')}`;
const outcomes = await Promise.all(
  Array.from({ length: Number(count) }, async () => {
    try {
      const result = await runSandboxed(['/bin/sh', '-c', script], { workspace });
      return result.exitCode === 0 ? 'ok' : `exit ${String(result.exitCode)} ${result.stderr}`;
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      return `${String(code)}: ${String(message)}`;
    }
  }),
);
const limit = processLimits().get('Max open files')?.soft;
process.stdout.write(`${JSON.stringify({ allowed: runAdmission.allowed, limit, outcomes })}\n`);
