// SPDX-License-Identifier: MIT
// Memoised capability checks that decide whether a real-sandbox test can run. With
// ZERO_SANDBOX_MUST_WORK=1 (CI) a missing capability makes the tests run and fail, never skip.
import { probeSync, type ProbeReport } from '../../lib/probe.js';

let report: ProbeReport | undefined;

export function probeReport(): ProbeReport {
  report ??= probeSync();
  return report;
}

export const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1';

/** True when the Linux sandbox can run here, or when CI demands that it must. */
export function linuxSandboxTestsEnabled(): boolean {
  if (process.platform !== 'linux') return false;
  if (MUST_WORK) return true;
  return probeReport().canEnforceDefaultPolicy;
}

/**
 * True when this OS's own sandbox (Linux namespaces, macOS seatbelt, Windows AppContainer) can run
 * here, or when CI demands that it must: the tests that apply on every OS then run for real.
 */
export function platformSandboxTestsEnabled(): boolean {
  if (!['linux', 'darwin', 'win32'].includes(process.platform)) return false;
  if (MUST_WORK) return true;
  return probeReport().canEnforceDefaultPolicy;
}
