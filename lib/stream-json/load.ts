// SPDX-License-Identifier: MIT
// Lazy access to the stream-json schemas: importing the package must not load zod (~47 ms).

/**
 * Loads the stream-json v2 zod schemas (`OutputEventSchema`, `InputEventSchema`, one schema per
 * event type) and the strict input reader, and `SandboxDenialSchema` (one entry of RunResult.denials), so a Node client can validate every line it receives.
 */
export function loadStreamJsonSchemas(): Promise<typeof import('./public.js')> {
  return import('./public.js');
}
