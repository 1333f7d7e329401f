#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Writes the JSON Schemas in schema/ from the compiled zod schemas (run `npm run compile` first):
// config.schema.json (the config file) and run-options.schema.json (the options of runSandboxed and
// spawnSandboxed; values only JavaScript can hold, functions, AbortSignal, Engine, Uint8Array, are
// marked with "x-js-type"). With --check, exits 1 when a shipped file differs from what the
// schemas generate, so the files, the types and the validation cannot drift.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { buildConfigJsonSchema } = await import(pathToFileURL(join(root, 'dist', 'lib', 'policy', 'config', 'config-schema.js')).href);
const { buildRunOptionsJsonSchema } = await import(pathToFileURL(join(root, 'dist', 'lib', 'sandbox', 'options-json-schema.js')).href);
const outputs = [
  [join(root, 'schema', 'config.schema.json'), buildConfigJsonSchema()],
  [join(root, 'schema', 'run-options.schema.json'), buildRunOptionsJsonSchema()],
];
for (const [target, schema] of outputs) {
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing counts as different
    }
    if (current !== text) {
      process.stderr.write(`${target} is out of date; run npm run gen:schema\n`);
      process.exitCode = 1;
    }
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    process.stdout.write(`wrote ${target}\n`);
  }
}
