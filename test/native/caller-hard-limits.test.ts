// SPDX-License-Identifier: MIT
// A caller whose own hard limits are below the sandbox's caps: an unprivileged user (uid 65534)
// with at most 1,200 processes and 2,048 open files. The sandbox cannot raise a hard limit, so
// each cap is lowered to the caller's (the default process cap of 4096 failed every start of such
// a caller with `setrlimit failed: Operation not permitted`); a cap below it stays as asked.
import { spawnSync } from 'node:child_process';
import { chownSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const NOBODY = 65534;

// Runs as the unprivileged user under the lowered limits; prints the runs' results as JSON.
const SCRIPT = `
const { runSandboxed } = await import(process.argv[1]);
const ws = process.argv[2];
const limits = async (options) => {
  const r = await runSandboxed(['/bin/bash', '-c', 'ulimit -Hu; ulimit -Su; ulimit -Hn; ulimit -Sn'], { workspace: ws, ...options });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr.slice(-400) };
};
const out = {
  defaults: await limits({}),
  above: await limits({ limits: { openFiles: 100000, processes: 8192 } }),
  below: await limits({ limits: { openFiles: 512, processes: 300 } }),
};
process.stdout.write(JSON.stringify(out));
`;

sandboxTest('an unprivileged caller whose hard limits are below the caps: the caps are lowered to them, and it runs', () => {
  const t = makeTree('zs-hard-limits-');
  try {
    for (const path of [t.base, t.ws, t.outside]) chownSync(path, NOBODY, NOBODY);
    const run = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'sandbox', 'run.js');
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', '-c', 'ulimit -u 1200 && ulimit -n 2048 && exec "$0" "$@"', process.execPath, '--input-type=module', '-e', SCRIPT, run, t.ws], {
      encoding: 'utf8', cwd: t.ws, env: { PATH: process.env.PATH, HOME: t.outside }, timeout: 120_000,
    });
    assert.is(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, { exitCode: number; stdout: string; stderr: string }>;
    assert.equal(out.defaults, { exitCode: 0, stdout: '1200\n1200\n2048\n2048\n', stderr: '' }, 'the default process cap (4096) lowered to 1,200; no default open-file cap');
    assert.equal(out.above, { exitCode: 0, stdout: '1200\n1200\n2048\n2048\n', stderr: '' }, 'caps above the caller\'s limits lowered to them');
    assert.equal(out.below, { exitCode: 0, stdout: '300\n300\n512\n512\n', stderr: '' }, 'caps below them kept');
  } finally {
    t.cleanup();
  }
});

test.run();
