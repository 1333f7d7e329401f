// SPDX-License-Identifier: MIT
// A caller serving several agents alternates between their policies, one workspace each. Runs made
// over the policies in turn, against runs of the same policies each made right after one of its
// own, alternated round by round in this process: 8 workspaces of a plain policy, 24 of them (more
// than the 16 policies kept: those beyond rest), and 5 policies of up to 1,000 entries of each kind
// in one workspace (none, denyRead, denyWrite, allowWrite, all three). Prewarm off: the runs' own
// preparation, not a prewarmed sandbox, is what is measured; and the 8 workspaces again with the
// default options, as a caller has them (the prewarm pools keep 4 policies).
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RunOptions } from '../lib/sandbox/options.js';
import { median } from './median.js';
import { makePackages, once } from './scaling.js';
import type { BenchLine } from './sandbox.js';

const WORKSPACES = 8;
/** More workspaces than the memos and the addon's templates keep policies (kept-bounds.ts). */
const MANY_WORKSPACES = 24;
const ROUNDS = 15;
/** Runs in turn against runs of each policy back to back, within this ratio. */
const TARGET = 1.1;

/**
 * Median of runs made over `policies` in turn, and of runs each made right after a run of the same
 * policy (the same mix, back to back), alternated round by round.
 */
async function inTurn(policies: Array<[string, RunOptions]>): Promise<{ turn: number; one: number }> {
  const turn: number[] = [];
  const one: number[] = [];
  for (let round = 0; round < 3; round++) for (const [workspace, options] of policies) await once(workspace, options);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [workspace, options] of policies) turn.push(await once(workspace, options));
    for (const [workspace, options] of policies) {
      await once(workspace, options);
      one.push(await once(workspace, options));
    }
  }
  return { turn: median(turn), one: median(one) };
}

export async function benchPoliciesInTurn(onLine: (line: BenchLine) => void = () => {}): Promise<void> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-bench-turn-')));
  try {
    onLine({ name: 'load average (1 min) at the start', value: loadavg()[0] ?? Number.NaN, unit: '' });
    const plain: Array<[string, RunOptions]> = [];
    for (let i = 0; i < MANY_WORKSPACES; i++) {
      const workspace = join(base, `ws${i}`);
      mkdirSync(join(workspace, 'src'), { recursive: true });
      plain.push([workspace, { prewarm: false }]);
    }
    const big = join(base, 'big');
    mkdirSync(big);
    // makePackages waits until the trees' stamps are settled (the memos keep only those).
    const { dirs, files } = await makePackages(big);
    const row = (name: string, m: { turn: number; one: number }) => {
      const ratio = m.turn / m.one;
      onLine({ name, value: ratio, unit: `x (${m.turn.toFixed(1)} / ${m.one.toFixed(1)} ms per run)`, target: `<= ${TARGET}`, ok: ratio <= TARGET });
    };
    row(`${WORKSPACES} workspaces in turn / each back to back, plain policy`, await inTurn(plain.slice(0, WORKSPACES)));
    row(`${MANY_WORKSPACES} workspaces in turn / each back to back, plain policy`, await inTurn(plain));
    // As a caller with the default options has it: the prewarm pools keep 4 policies.
    const prewarmed = plain.slice(0, WORKSPACES).map(([workspace]): [string, RunOptions] => [workspace, { prewarm: true }]);
    row(`${WORKSPACES} workspaces in turn / each back to back, plain policy, default options (prewarm on)`, await inTurn(prewarmed));
    const policies: RunOptions[] = [{}, { denyRead: files }, { denyWrite: files }, { allowWrite: dirs }, { allowWrite: dirs, denyRead: files, denyWrite: files }];
    const each = await inTurn(policies.map((options): [string, RunOptions] => [big, { prewarm: false, ...options }]));
    row('5 policies of up to 1,000 entries in turn / each back to back', each);
    onLine({ name: 'load average (1 min) at the end', value: loadavg()[0] ?? Number.NaN, unit: '' });
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
