// SPDX-License-Identifier: MIT
// Attack: with many write roots and deny entries, a policy's mount set-up is built once in a mount
// template and each run's mount namespace is a copy of it. The template took its paths when it
// was built; when one of them is replaced afterwards by a rename (on the host, or by a sandbox of
// another policy that may write there), a copy would still mask the old file and show the new one.
// Fix: a template is built under a watch set of every path its steps name (made before the build)
// and copied only while that set is quiet; a copy made while an event was queued is refused by the
// sandbox's first process before the command runs, and the run sets its mounts up afresh. Runs
// without prewarming, several times with the same policy (the second run builds the template, the
// next ones copy it), then the path is replaced and the next runs must not read the new content.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { renameOnHost, replacedLockedStaysReadOnly, replacedSecretStaysHidden, type ReplacedPathCase } from '../helpers/replaced-paths.js';
import { sandboxTest } from '../helpers/sandbox.js';

/** Four runs of one policy without prewarming: the second builds its template, the next copy it. */
const templated: ReplacedPathCase = {
  options: { prewarm: false },
  runs: 3,
  async warmUp(script: string, options: RunOptions) {
    for (let i = 0; i < 4; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', script], options);
      assert.is(r.stdout, 'done\n', r.stderr);
    }
  },
};

sandboxTest('a denied file replaced by rename on the host stays hidden from the next templated runs', () =>
  replacedSecretStaysHidden(templated, async (_ws, secret) => renameOnHost(secret, 'NEW-SECRET\n')));

sandboxTest('a denied file replaced by a sandbox of another policy stays hidden from the next templated runs', () =>
  replacedSecretStaysHidden(templated, async (ws) => {
    // Another policy of the same workspace, without the deny entry, swaps the file.
    const swap = await runSandboxed(['/bin/sh', '-c', 'echo NEW-SECRET > secret.new && mv secret.new secret.env && echo swapped'], { workspace: ws, prewarm: false });
    assert.is(swap.stdout, 'swapped\n', swap.stderr);
  }));

sandboxTest('a write-protected file replaced by rename on the host stays read-only in templated runs', () => replacedLockedStaysReadOnly(templated));

test.run();
