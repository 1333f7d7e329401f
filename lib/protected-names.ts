// SPDX-License-Identifier: MIT
// The workspace metadata a sandboxed command may never create or change: agent configuration
// (.zero, .agents) that the host reads and acts on later. One list for the plan, the engine, the
// reports and the probes. (.git has its own finer rules: git-guard.ts, git-check.ts.)

/** Directories in every write root that stay read-only (or are removed when created). */
export const PROTECTED_METADATA_NAMES: readonly string[] = ['.zero', '.agents'];
