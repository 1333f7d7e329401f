// SPDX-License-Identifier: MIT
// `node dist/bench/main.js policy`: what a policy of 100 or 1,000 entries adds to a cold run once
// the policy is known (prewarm off; each policy's first runs, which resolve its plan, build its
// mount template and record the guard's look, are made before the count). Many more pairs than the
// scaling bench's nine, so that a change of a millisecond or two shows above the machine's noise:
// 40 runs of a plain policy and 40 with the entries, alternated run by run, in a workspace in the
// temporary directory (under Linux's private /tmp, as the scaling bench's), the median of each.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RunOptions } from '../lib/sandbox/options.js';
import { added, makePackages, once } from './scaling.js';
import type { BenchLine } from './sandbox.js';

/** Runs of each policy before the count: plan, template and guard memo all made by then. */
const WARM_RUNS = 3;

export async function benchPolicyPairs(pairs = 40, onLine: (line: BenchLine) => void = () => {}): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-policy-')));
  try {
    onLine({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
    const { dirs, files } = await makePackages(workspace);
    for (const n of [100, 1000]) {
      const policies: Array<[string, RunOptions]> = [
        [`${n} allowWrite dirs`, { allowWrite: dirs.slice(0, n) }],
        [`${n} denyRead files`, { denyRead: files.slice(0, n) }],
        [`${n} denyWrite files`, { denyWrite: files.slice(0, n) }],
        // The target's own words: n write roots plus n deny entries, of either kind.
        [`${n} allowWrite + ${n} denyRead`, { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n) }],
        [`${n} allowWrite + ${n} denyWrite`, { allowWrite: dirs.slice(0, n), denyWrite: files.slice(0, n) }],
        [`${n} allowWrite + ${n} denyRead + ${n} denyWrite`, { allowWrite: dirs.slice(0, n), denyRead: files.slice(0, n), denyWrite: files.slice(0, n) }],
      ];
      for (const [name, policy] of policies) {
        for (let i = 0; i < WARM_RUNS; i++) {
          await once(workspace, {});
          await once(workspace, policy);
        }
        const m = await added(workspace, policy, pairs);
        const value = m.with - m.base;
        const limit = n === 100 ? 1 : 5;
        onLine({ name: `${name} vs none, known policy, ${pairs} pairs`, value, unit: `ms added per run (${(m.with / m.base).toFixed(2)}x a plain run of ${m.base.toFixed(1)} ms)`, target: `<= ${limit}`, ok: value <= limit });
      }
    }
    onLine({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
