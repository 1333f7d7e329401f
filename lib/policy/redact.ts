// SPDX-License-Identifier: MIT
// Scrubs secrets out of free text stored in grants (reasons): provider keys, api_key assignments,
// bearer tokens.

const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_-]{16,}/g, '[REDACTED]'],
  [/\b(api[_-]?key\s*[=:]\s*)["']?[^\s"']{12,}["']?/gi, '$1[REDACTED]'],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/g, '$1[REDACTED]'],
];

/** Returns `text` with secrets replaced by `[REDACTED]`. */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
