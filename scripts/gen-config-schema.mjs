#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Writes schema/config.schema.json from the compiled zod schema (run `npm run compile` first);
// with --check, exits 1 when the shipped file differs from what the schema generates.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { buildConfigJsonSchema } = await import(join(root, 'dist', 'lib', 'policy', 'config-schema.js'));
const target = join(root, 'schema', 'config.schema.json');
const text = `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
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
