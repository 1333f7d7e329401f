// SPDX-License-Identifier: MIT
// Builds the JSON Schema of the config file from the zod schema (shipped as schema/config.schema.json
// so editors can complete and check the `sandbox` settings).
import { z } from 'zod';

import { ConfigFileSchema } from '../schema.js';

/** The JSON Schema (draft 2020-12) of Zero's config.json as far as the `sandbox` key goes. */
export function buildConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: 'https://unpkg.com/zero-sandbox/schema/config.schema.json',
    title: 'Zero config (sandbox settings)',
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema')),
  };
}
