// SPDX-License-Identifier: MIT
// The public entry point of zero-sandbox: exports only.
export { SandboxError, SANDBOX_ERROR_CODES, isSandboxErrorCode } from './errors.js';
export type { SandboxErrorCode, SandboxErrorDetails } from './errors.js';
export { probe, probeSync, buildProbeReport, LINUX_DEFAULT_LAYERS } from './probe.js';
export type { BackendName, LayerName, LayerStatus, ProbeReport } from './probe.js';
export { runSandboxed } from './sandbox/run.js';
export type { RunResult } from './sandbox/run.js';
export { spawnSandboxed, SandboxedProcess } from './sandbox/process.js';
export type { SandboxExit, SpawnSandboxedOptions } from './sandbox/process.js';
export type { RunOptions, SandboxCommand, SandboxOptions } from './sandbox/options.js';
export type { BackendInfo, NetworkMode, ResourceLimits, SandboxBackendName, SandboxPlan, WritableRoot } from './backend/types.js';
export { selectBackend } from './backend/select.js';
