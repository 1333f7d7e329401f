// SPDX-License-Identifier: MIT
// The public entry point of zero-sandbox: exports only.
export { SandboxError, SANDBOX_ERROR_CODES, isSandboxErrorCode } from './errors.js';
export type { SandboxErrorCode, SandboxErrorDetails } from './errors.js';
export { probe, probeSync, buildProbeReport, LINUX_DEFAULT_LAYERS } from './probe.js';
export type { BackendName, LayerName, LayerStatus, ProbeReport } from './probe.js';
