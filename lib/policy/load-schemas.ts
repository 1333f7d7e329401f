// SPDX-License-Identifier: MIT
// Lazy access to the policy zod schemas: importing the package must not load zod (~47 ms), so the
// schemas are reached through this loader (the types are exported directly, at no cost).

/** Loads the zod schemas of the policy data shapes (Policy, Request, Decision, Risk, Block, Grant, ...). */
export function loadPolicySchemas(): Promise<typeof import('./schema.js')> {
  return import('./schema.js');
}
