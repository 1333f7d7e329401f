// SPDX-License-Identifier: MIT
// The JSON Schema of runSandboxed's options, generated from the same zod schema that types and
// validates them (shipped as schema/run-options.schema.json; scripts/gen-config-schema.mjs).
import { z } from 'zod';

import { buildOptionSchemas } from './options-schema.js';

/** The JSON Schema (draft 2020-12) of the runSandboxed options (spawnSandboxed: see `stdio`). */
export function buildRunOptionsJsonSchema(): Record<string, unknown> {
  const { run, spawn } = buildOptionSchemas(z);
  const toJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  const runSchema = toJson(run);
  const spawnSchema = toJson(spawn);
  return {
    $schema: runSchema.$schema,
    $id: 'https://unpkg.com/zero-sandbox/schema/run-options.schema.json',
    title: 'zero-sandbox runSandboxed options',
    ...Object.fromEntries(Object.entries(runSchema).filter(([key]) => key !== '$schema')),
    $defs: { spawnSandboxedOptions: Object.fromEntries(Object.entries(spawnSchema).filter(([key]) => key !== '$schema')) },
  };
}
