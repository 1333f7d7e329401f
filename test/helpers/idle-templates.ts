// SPDX-License-Identifier: MIT
// Run as its own process as root of a user namespace of the test's own: makes `count` policies in
// the workspace (each hiding a file of its own), runs each three times with prewarm off, so that
// the addon keeps a mount template (a mount namespace) for each, then sets the user's mount
// namespace count limit (user.max_mnt_namespaces) to `limit`, below what the idle templates hold,
// and runs a policy not seen before. Prints one JSON line: that run's outcome (exit code, or the
// error's code and message).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runSandboxed } from '../../lib/sandbox/run.js';

const [workspace, count, limit] = process.argv.slice(2) as [string, string, string];

async function outcome(denyRead: string): Promise<string> {
  try {
    const result = await runSandboxed(['/bin/true'], { workspace, denyRead: [denyRead], prewarm: false, timeoutMs: 20_000 });
    return result.exitCode === 0 ? 'ok' : `exit ${String(result.exitCode)} ${result.stderr}`;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    return `${String(code)}: ${String(message)}`;
  }
}

const warm: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const file = join(workspace, `secret-${i}`);
  writeFileSync(file, 's\n');
  for (let run = 0; run < 3; run++) warm.push(await outcome(file));
}
const fresh = join(workspace, 'secret-new');
writeFileSync(fresh, 's\n');
writeFileSync('/proc/sys/user/max_mnt_namespaces', `${limit}\n`);
const after = await outcome(fresh);
process.stdout.write(`${JSON.stringify({ warm: warm.filter((o) => o !== 'ok'), after })}\n`);
