// SPDX-License-Identifier: MIT
// The shell parser's files: where the bash grammar ships, and the once-per-process check that both
// WebAssembly files (web-tree-sitter's runtime and the grammar) are installed and look like
// WebAssembly, made without loading either.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { PACKAGE_ROOT } from '../native/load.js';

/** Where the bash grammar (tree-sitter-bash compiled to WebAssembly) ships inside the package. */
export const GRAMMAR_PATH = join(PACKAGE_ROOT, 'dist', 'lib', 'bash', 'tree-sitter-bash.wasm');

/** The first line of an error's message (the parser's state and doctor print one line). */
export function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? 'unknown error') : String(error);
}

/** Throws unless `path` starts like a WebAssembly module (its magic number and version 1). */
function assertWasm(path: string): void {
  const head = Buffer.alloc(8);
  const fd = openSync(path, 'r');
  try {
    if (readSync(fd, head, 0, 8, 0) !== 8 || head.readUInt32BE(0) !== 0x0061736d || head.readUInt32LE(4) !== 1) {
      throw new Error(`${path} is not a WebAssembly module`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The directory of the web-tree-sitter package that `require('web-tree-sitter')` from here loads:
 * the first of Node's lookup directories (the node_modules of each ancestor, then the global ones)
 * that holds web-tree-sitter/package.json. One stat per directory instead of require.resolve,
 * whose first call in a process loads Node's package-exports resolver: about 4 ms of every CLI
 * start, most of which never parse. Where no lookup directory has it, require.resolve answers (and
 * throws Node's own error).
 */
function treeSitterDir(require: NodeJS.Require): string {
  for (const dir of require.resolve.paths('web-tree-sitter') ?? []) {
    const candidate = join(dir, 'web-tree-sitter');
    if (statSync(join(candidate, 'package.json'), { throwIfNoEntry: false })?.isFile() === true) return candidate;
  }
  return dirname(require.resolve('web-tree-sitter'));
}

/**
 * What is wrong with the parser's installed files (the first line of the error), or undefined when
 * both are present and are WebAssembly modules.
 */
export function installProblem(): string | undefined {
  try {
    assertWasm(join(treeSitterDir(createRequire(import.meta.url)), 'tree-sitter.wasm'));
    assertWasm(GRAMMAR_PATH);
    return undefined;
  } catch (error) {
    return firstLine(error);
  }
}
