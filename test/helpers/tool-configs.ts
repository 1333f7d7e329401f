// SPDX-License-Identifier: MIT
// What the attack tests of agent and editor configs share: the vectors (test/fixtures/agent-tool-configs)
// and the shell line that writes one from inside the sandbox.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from './cli.js';
import type { Tree } from './sandbox.js';

const FIXTURES = `${REPO_ROOT}/test/fixtures/agent-tool-configs`;
const load = (file: string) => (JSON.parse(readFileSync(`${FIXTURES}/${file}`, 'utf8')) as { vectors: Record<string, string> }).vectors;

/** One config per protected file at the top of a write root. */
export const TOP = load('vectors.json');
/** Configs written below the top, workspace files, and files of the protected directories. */
export const NESTED = load('nested-vectors.json');

/** A vector with its command made one that leaves a marker (`ran`) in the tree's outside dir. */
export function payload(t: Tree, vector: string | undefined): string {
  return (vector as string).replaceAll('@CMD@', `touch ${join(t.outside, 'ran')}`);
}

/** A shell line that writes `content` to `file` (created with its directory). */
export function write(file: string, content: string): string {
  return `mkdir -p "$(dirname ${file})" && printf '%s' '${content.replaceAll("'", `'\\''`)}' > ${file}`;
}
