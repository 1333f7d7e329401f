// SPDX-License-Identifier: MIT
// Run as its own process under a low RLIMIT_NOFILE or RLIMIT_NPROC (the test sets it with the
// shell's ulimit): makes `count` runSandboxed calls in one tick, each appending "s" to a log in the
// workspace, sleeping `seconds` and appending "e" (with `exec`, the shell becomes sleep instead,
// forking nothing the process limit could refuse), and prints one JSON line: how many runs the
// admission allows at once, the limits it read, how many starts ran out of a resource and waited
// to start again, and every run's outcome (exit code, or the error's code and message).
import { join } from 'node:path';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { runAdmission } from '../../lib/sandbox/run-admission.js';
import { processLimits } from '../../lib/process-limits.js';

const [workspace, count, seconds, mode] = process.argv.slice(2) as [string, string, string, string | undefined];
let retries = 0;
const retryAfterAnEnd = runAdmission.retryAfterAnEnd.bind(runAdmission);
runAdmission.retryAfterAnEnd = (...args) => {
  retries++;
  return retryAfterAnEnd(...args);
};
const log = join(workspace, 'log');
const script = mode === 'exec' ? `echo s >> ${log}; exec sleep ${seconds}` : `echo s >> ${log}; sleep ${seconds}; echo e >> ${log}`;
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
const limits = processLimits();
const limit = limits.get('Max open files')?.soft;
const processes = limits.get('Max processes')?.soft;
process.stdout.write(`${JSON.stringify({ allowed: runAdmission.allowed, limit, processes, retries, outcomes })}\n`);
