// SPDX-License-Identifier: MIT
// The request enumerations the engine, the risk classifier and the run options share, and the one
// normalizer of each: every input path reads a value the same way. Free of zod, so the hot path
// stays cheap.

/** Tool side effects. Unknown values normalize to `out_of_workspace`. */
export const SIDE_EFFECTS = [
  'read',
  'write',
  'shell',
  'network',
  'local_control',
  'local_browser',
  'local_desktop',
  'local_terminal',
  'out_of_workspace',
  'none',
] as const;
/** One tool side effect. */
export type SideEffectName = (typeof SIDE_EFFECTS)[number];

const SIDE_EFFECT_SET = new Set<string>(SIDE_EFFECTS);

/**
 * Trimmed and lower-cased; anything unknown becomes `out_of_workspace`, the most critical side
 * effect, so a misspelt value is never treated as harmless.
 */
export function normalizeSideEffect(value: unknown): SideEffectName {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
  return SIDE_EFFECT_SET.has(text) ? (text as SideEffectName) : 'out_of_workspace';
}

/** Fail closed: only a (trimmed, case-insensitive) `allow` is allow; anything else is deny. */
export function normalizeNetworkMode(value: unknown): 'allow' | 'deny' {
  return typeof value === 'string' && value.trim().toLowerCase() === 'allow' ? 'allow' : 'deny';
}
