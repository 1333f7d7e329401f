// SPDX-License-Identifier: MIT
// Classification and analyzer vectors taken from the Go Zero CLI's behaviour (test/fixtures/bash/classify.json):
// a command both tools see must get the same class.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { analyzeCommand } from '../../lib/bash/analyze.js';
import { classifyRisk } from '../../lib/bash/risk.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { loadShellParser } from '../../lib/bash/parse.js';

// The WebAssembly parser instantiates asynchronously; the analysis below is synchronous.
await loadShellParser();

interface Vector {
  id: string;
  layer: 'classify' | 'analyzer';
  request?: { toolName: string; sideEffect: string; argKey?: string; args?: Record<string, unknown>; permissionMode?: string; workspaceRoot?: string };
  command: string | null;
  expect: {
    level?: string;
    categories?: string[];
    notCategories?: string[];
    exactCategories?: string[];
    analysis?: { interactive: boolean; destructive: boolean; network: boolean; tooComplex: boolean };
  };
}

const vectors = JSON.parse(readFileSync(`${REPO_ROOT}/test/fixtures/bash/classify.json`, 'utf8')) as Vector[];

test('the fixture holds the classify vectors', () => {
  assert.ok(vectors.length >= 80, `only ${vectors.length} vectors`);
});

for (const vector of vectors) {
  test(`${vector.id}: ${JSON.stringify(vector.command)}`, () => {
    const request = vector.request ?? { toolName: 'bash', sideEffect: 'shell' };
    const args: Record<string, unknown> = { ...(request.args ?? {}) };
    if (vector.command !== null) args[request.argKey ?? 'command'] = vector.command;
    const risk = classifyRisk({
      toolName: request.toolName,
      sideEffect: request.sideEffect,
      args,
      ...(request.workspaceRoot !== undefined ? { workspaceRoot: '/tmp/ws' } : {}),
      ...(request.permissionMode !== undefined ? { permissionMode: request.permissionMode } : {}),
    });
    const { expect } = vector;
    if (expect.level !== undefined) assert.is(risk.level, expect.level, `level: ${risk.reason}`);
    for (const category of expect.categories ?? []) {
      assert.ok(risk.categories.includes(category as never), `missing ${category}: ${risk.reason}`);
    }
    for (const category of expect.notCategories ?? []) {
      assert.not.ok(risk.categories.includes(category as never), `unexpected ${category}: ${risk.reason}`);
    }
    if (expect.exactCategories !== undefined) assert.equal(risk.categories, expect.exactCategories);
    if (expect.analysis !== undefined && vector.command !== null) {
      const analysis = analyzeCommand(vector.command);
      assert.equal(
        { interactive: analysis.interactive, destructive: analysis.destructive, network: analysis.network, tooComplex: analysis.tooComplex },
        expect.analysis,
      );
    }
    assert.ok(risk.reason.startsWith(risk.level), risk.reason);
  });
}

test.run();
