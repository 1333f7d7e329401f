// SPDX-License-Identifier: MIT
// lib/ has no import cycle: a module's dependencies are loaded before it, so a cycle means a
// module can see another half-initialised, and a reader can no longer tell which way the arrows
// go. Every edge counts: value and type-only imports, re-exports, and lazy loads (import(),
// a createRequire'd require) of another lib module.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';

const LIB = join(REPO_ROOT, 'lib');

function listTs(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTs(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Comments removed (a path in a comment is not an edge); string contents are kept. */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The lib modules `file` loads: every relative specifier in an import, export or require position. */
function importsOf(file: string, source: string, known: ReadonlySet<string>): string[] {
  const specifier = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\)\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;
  const out = new Set<string>();
  for (const match of stripComments(source).matchAll(specifier)) {
    const target = resolve(dirname(file), match[2]!.replace(/\.js$/, '.ts'));
    if (known.has(target)) out.add(target);
  }
  return [...out];
}

/** Every cycle found by a depth-first walk (each strongly connected knot shows at least once). */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

test('the parser sees value, type-only, re-export and lazy edges, and not paths in comments', () => {
  const at = (name: string): string => resolve('/l', name);
  const known = new Set(['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts', 'x/f.ts'].map(at));
  const source = [
    "import { a } from './a.js';",
    "import type {\n  B,\n} from './b.js';",
    "export { c } from './c.js';",
    "const d = await import('./d.js');",
    "const e = createRequire(import.meta.url)('./e.js');",
    "// import { f } from './x/f.js';",
    "import { g } from './missing.js';",
  ].join('\n');
  assert.equal(importsOf(at('m.ts'), source, known).sort(), ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts'].map(at));
  assert.equal(findCycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), [['a', 'b', 'c', 'a']]);
  assert.equal(findCycles(new Map([['a', ['b']], ['b', []]])), []);
});

test('lib/ has no import cycle', () => {
  const files = listTs(LIB);
  assert.ok(files.length > 50, `found only ${files.length} modules under ${LIB}`);
  const known = new Set(files);
  const graph = new Map(files.map((file) => [file, importsOf(file, readFileSync(file, 'utf8'), known)]));
  assert.ok([...graph.values()].reduce((n, edges) => n + edges.length, 0) > files.length, 'the parser found too few edges');
  const cycles = findCycles(graph).map((cycle) => cycle.map((file) => relative(REPO_ROOT, file)).join(' -> '));
  assert.equal(cycles, []);
});

test.run();
