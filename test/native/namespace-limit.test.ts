// SPDX-License-Identifier: MIT
// A caller whose user may hold only a few user or mount namespaces (user.max_*_namespaces, set for
// a user namespace of the test's own, as a container's limits would be) and starts many runs at
// once: the starts refused with ENOSPC wait for other runs to end and start again, so every run
// succeeds. Before, each was refused as "the sandbox cannot enforce the policy here" with the
// probe's guess at why, or failed as a mount. A limit of 0 (namespaces switched off) stays that
// refusal. Mount templates kept idle give their namespaces up to a run refused for the count.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { assertEveryRunStartedOnce } from '../helpers/limited-report.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const HELPER = fileURLToPath(new URL('../helpers/limited-runs.js', import.meta.url));
const IDLE_TEMPLATES = fileURLToPath(new URL('../helpers/idle-templates.js', import.meta.url));

/** Runs the helper in a user namespace of its own whose user.max_`kind`_namespaces is `limit`. */
function runsUnderLimit(limit: number, workspace: string, count: number, kind = 'user'): SpawnSyncReturns<string> {
  return spawnSync('unshare', ['--user', '--map-root-user', '/bin/sh', '-c', `echo ${limit} > /proc/sys/user/max_${kind}_namespaces && exec "$0" "$@"`, process.execPath, HELPER, workspace, String(count), '0.3', 'exec'], {
    encoding: 'utf8', timeout: 120_000,
  });
}

// User namespaces: the sandbox's clone is refused. Mount namespaces: the sandbox's detached copies
// of the workspace and cache trees (each one a mount namespace) are refused.
for (const [kind, limit] of [['user', 4], ['mnt', 16]] as const) {
  sandboxTest(`24 runs in one tick where the user may hold ${limit} ${kind} namespaces all succeed, those refused started again`, () => {
    const t = makeTree(`zs-${kind}ns-limit-`);
    try {
      const count = 24;
      assertEveryRunStartedOnce(runsUnderLimit(limit, t.ws, count, kind), t.ws, count);
    } finally {
      t.cleanup();
    }
  });
}

// The addon keeps a mount template (a mount namespace) for each of the last policies run; a run
// refused for the count frees the idle ones, so a limit reached by what is only kept for speed
// never refuses a run for good.
sandboxTest('a run refused because idle mount templates hold the mount namespace count succeeds once they are freed', () => {
  const t = makeTree('zs-mntns-idle-');
  try {
    const child = spawnSync('unshare', ['--user', '--map-root-user', process.execPath, IDLE_TEMPLATES, t.ws, '8', '5'], { encoding: 'utf8', timeout: 120_000 });
    assert.is(child.status, 0, `helper exited ${String(child.status)}: ${child.stderr}`);
    const report = JSON.parse(child.stdout) as { warm: string[]; after: string };
    assert.equal(report.warm, [], 'the runs before the limit');
    assert.is(report.after, 'ok');
  } finally {
    t.cleanup();
  }
});

sandboxTest('where the user may hold no user namespace, a run is refused as the missing layer, naming the limit', () => {
  const t = makeTree('zs-userns-zero-');
  try {
    const child = runsUnderLimit(0, t.ws, 1);
    assert.is(child.status, 0, `helper exited ${String(child.status)}: ${child.stderr}`);
    const report = JSON.parse(child.stdout) as { retries: number; outcomes: string[] };
    assert.is(report.outcomes.length, 1);
    assert.match(report.outcomes[0] as string, /^sandbox_unavailable: .*user\.max_user_namespaces=0/);
    assert.is(report.retries, 0, 'nothing to wait for');
  } finally {
    t.cleanup();
  }
});

test.run();
