// SPDX-License-Identifier: MIT
// zod schema of a structured sandbox denial (RunResult.denials). Separate from denials.ts so the
// run path does not load zod.
import { z } from 'zod';

import { DENIAL_CAPABILITIES, DENIAL_NEXT_ACTIONS, DENIAL_SOURCES } from './denials.js';

/** One structured sandbox denial: capability (kind, scope), source, reason, recoverable, next action. */
export const SandboxDenialSchema = z
  .strictObject({
    capability: z
      .strictObject({
        kind: z.enum(DENIAL_CAPABILITIES).describe('What was blocked.'),
        scope: z.string().min(1).optional().describe('The path, host, variable or cap it concerned.'),
      })
      .describe('The blocked capability.'),
    source: z.enum(DENIAL_SOURCES).describe('Who decided it.'),
    reason: z.string().min(1).describe('Why, naming the path, host, variable or cap.'),
    recoverable: z.boolean().describe('Whether a grant, an approval or a different command can get past it.'),
    nextAction: z.enum(DENIAL_NEXT_ACTIONS).describe('What to do next.'),
  })
  .describe('A structured sandbox denial.');
