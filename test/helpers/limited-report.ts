// SPDX-License-Identifier: MIT
// What a test of runs started under a low limit checks in the report of helpers/limited-runs.js
// (run in `exec` mode): the helper ended well, no run failed, the limit refused some starts (else
// the test tested nothing), and each command started once (a start made again never ran twice).
import type { SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';

export interface LimitedRunsReport {
  allowed: number;
  limit: number;
  processes: number;
  retries: number;
  outcomes: string[];
}

export function assertEveryRunStartedOnce(child: SpawnSyncReturns<string>, workspace: string, count: number): LimitedRunsReport {
  assert.is(child.status, 0, `helper exited ${String(child.status)}: ${child.stderr}`);
  const report = JSON.parse(child.stdout) as LimitedRunsReport;
  const failed = report.outcomes.filter((outcome) => outcome !== 'ok');
  assert.equal(failed, [], `${failed.length} of ${count} runs failed`);
  assert.ok(report.retries > 0, 'the limit refused some starts (else this tested nothing)');
  const log = readFileSync(join(workspace, 'log'), 'utf8');
  assert.is(log.split('\n').filter((line) => line === 's').length, count, 'each command started once');
  return report;
}
