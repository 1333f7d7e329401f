// SPDX-License-Identifier: MIT
// The public entry point of zero-sandbox: exports only.
export { SandboxError, SANDBOX_ERROR_CODES, isSandboxErrorCode } from './errors.js';
export type { SandboxErrorCode, SandboxErrorDetails } from './errors.js';
export { probe, probeSync, buildProbeReport, LINUX_DEFAULT_LAYERS } from './probe.js';
export type { LayerName, LayerStatus, ProbeReport } from './probe.js';
export { runSandboxed } from './sandbox/run.js';
export type { RunResult } from './sandbox/run.js';
export { finishInterruptedRuns } from './sandbox/protected.js';
export type { InterruptedRunReport } from './sandbox/missed-checks.js';
export { DENIAL_CAPABILITIES, DENIAL_NEXT_ACTIONS, DENIAL_SOURCES } from './sandbox/denials.js';
export type { DenialCapabilityKind, DenialNextAction, DenialSource, SandboxDenial } from './sandbox/denials.js';
export { spawnSandboxed, SandboxedProcess } from './sandbox/process.js';
export type { KillOptions, SandboxExit, SandboxedProcessEvents } from './sandbox/process.js';
export type { EngineOptions, RunOptions, SandboxCommand, SandboxOptions, SpawnSandboxedOptions } from './sandbox/options.js';
export type { PermissionAnswer, PermissionEvent } from './sandbox/options-schema.js';
export type { ApprovalAnswer } from './policy/engine/constants.js';
export type { PermissionDecisionPayload, PermissionRequestPayload } from './policy/approval/approval.js';
export type { BackendInfo, NetworkMode, ResourceLimits, SandboxBackendName, SandboxPlan, WritableRoot } from './backend/types.js';
export { selectBackend } from './backend/select.js';
export { createEngine, DEFAULT_POLICY } from './policy/engine/create-engine.js';
export type { CreateEngineOptions, EngineWithConfig } from './policy/engine/create-engine.js';
export { Engine } from './policy/engine/engine.js';
export type { EvaluateOptions } from './policy/engine/engine.js';
export { resolveGrantsPath, GrantStore } from './policy/grants/grants-store.js';
export type { GrantInput } from './policy/grants/grants-store.js';
export { applyApproval, availableApprovalAnswers, buildPromptText, buildPermissionRequestEvent, buildPermissionDecisionEvent } from './policy/approval/approval.js';
export type { ApprovalOutcome } from './policy/approval/approval.js';
export { loadSandboxConfig, resolveConfigPaths } from './policy/config/config.js';
export { loadPolicySchemas } from './policy/load-schemas.js';
export type { ApprovedCommand, Block, CommandPrefixGrant, ConfigFile, Decision, Grant, GrantsFile, Policy, Request, RequestPermissionProfile, RiskInfo, SandboxConfig } from './policy/schema.js';
export { authorizeCommand, formatBlockError } from './policy/approval/authorize.js';
export type { Authorization, AuthorizeOptions, PermissionPrompt } from './policy/approval/authorize.js';
export { analyzeCommand, analyzeArgv, analyzeShellCommand, prepareShellParser } from './bash/analyze.js';
export { loadShellParser, parserStatus, preferBaselineWebAssembly } from './bash/parse.js';
export type { ParserStatus } from './bash/parse.js';
export { classifyCommand } from './bash/classify.js';
export type { CommandClassification } from './bash/classify.js';
export { classifyRisk, normalizeSideEffect, requestCommand } from './bash/risk.js';
export type { RiskContext } from './bash/risk.js';
export { detectInteractiveCommand } from './bash/interactive.js';
export type { InteractiveVerdict } from './bash/interactive.js';
export { isKnownSafeSegment, isMsysProneCommandName } from './bash/known-safe.js';
export {
  normalizeLauncherName,
  validateCommandPrefix,
  isUnsafePrefix,
  proposeCommandPrefix,
  matchCommandPrefix,
} from './bash/prefix.js';
export type { PrefixValidation, PrefixProposalInput, PrefixGrants, PrefixMatch } from './bash/prefix.js';
export type {
  SideEffect,
  RiskLevel,
  RiskCategory,
  Risk,
  PermissionMode,
  RiskRequest,
  SimpleCommand,
  CommandAnalysis,
  AnalysisReasons,
  AnalyzeOptions,
} from './bash/types.js';
export { loadStreamJsonSchemas } from './stream-json/load.js';
export { redactString, redactValue, isSecretKey } from './redact.js';
export { buildJsonRecord } from './stream-json/formats.js';
export type { JsonRecord, OutputFormat } from './stream-json/formats.js';
export type {
  InputEvent,
  MessageInputEvent,
  PromptInputEvent,
  OutputEvent,
  RunStartEvent,
  TextEvent,
  ToolCallEvent,
  PermissionRequestEvent,
  PermissionDecisionEvent,
  ToolResultEvent,
  ToolResultMeta,
  UsageEvent,
  FinalEvent,
  ErrorEvent,
  RunEndEvent,
  StreamBlock,
  StreamGrant,
  StreamRisk,
} from './stream-json/schema.js';
