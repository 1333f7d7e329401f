#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Copies the bash grammar compiled to WebAssembly (tree-sitter-bash.wasm, shipped by the
// tree-sitter-bash devDependency) and its licence into dist/lib/bash/, where lib/bash/parse.ts loads
// it with web-tree-sitter. Shipping the .wasm instead of depending on tree-sitter-bash at run time
// keeps the package free of install scripts and native code for parsing: tree-sitter-bash's own
// install step compiles C where its prebuilds do not fit (musl, older libstdc++).
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(join(root, 'package.json'));
const grammarDir = dirname(require.resolve('tree-sitter-bash/package.json'));
const outDir = join(root, 'dist', 'lib', 'bash');
mkdirSync(outDir, { recursive: true });
copyFileSync(join(grammarDir, 'tree-sitter-bash.wasm'), join(outDir, 'tree-sitter-bash.wasm'));
copyFileSync(join(grammarDir, 'LICENSE'), join(outDir, 'tree-sitter-bash.LICENSE'));
