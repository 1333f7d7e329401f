// SPDX-License-Identifier: MIT
// `check`, `grants` and `policy` as the Go Zero CLI's tests drive its `zero sandbox ...` commands
// (test/fixtures/policy/cli.json): exit codes, text and the JSON fields a client of either reads.
// Each vector runs its steps in a fresh home, config and grants file, seeded as it says.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAnalyzer } from '../../lib/policy/engine/analyzer.js';
import { GrantStore } from '../../lib/policy/grants/grants-store.js';
import { runCli } from '../helpers/cli.js';
import { loadVectors, makePlaces } from '../fixtures/policy/vectors.js';

type V = Record<string, any>;

const analyzer = await loadAnalyzer();

/** The value at a dotted path; `a[].b` maps over the array at `a`. */
function at(value: unknown, path: string): unknown {
  const each = /^(.*)\[\]\.(.*)$/.exec(path);
  if (each !== null) {
    const list = at(value, each[1] as string);
    return Array.isArray(list) ? list.map((item) => at(item, each[2] as string)) : undefined;
  }
  return path.split('.').reduce<unknown>((obj, key) => (obj === undefined || obj === null ? undefined : (obj as Record<string, unknown>)[key]), value);
}

/** Checks the JSON fields a step names: equal, present, non-empty, falsy, or (key ending in ~) contains. */
function checkJson(json: unknown, fields: Record<string, unknown>, where: string): void {
  for (const [raw, want] of Object.entries(fields)) {
    const contains = raw.endsWith('~');
    const got = at(json, contains ? raw.slice(0, -1) : raw);
    const label = `${where}: ${raw} is ${JSON.stringify(got)}`;
    if (contains) assert.ok(Array.isArray(got) ? got.includes(want) : typeof got === 'string' && got.includes(want as string), label);
    else if (want === 'present') assert.ok(got !== undefined && got !== null, label);
    else if (want === 'nonempty') assert.ok(typeof got === 'string' && got !== '', label);
    else if (want === 'falsy') assert.not.ok(got, label);
    // As JSON sees it: a missing field inside a list compares as null.
    else assert.equal(JSON.parse(JSON.stringify(got ?? null)), want, label);
  }
}

for (const vector of loadVectors<V>('cli.json')) {
  test(`cli ${vector.id}`, async () => {
    const places = makePlaces();
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'zs-cli-vectors-')));
    try {
      const v = places.subDeep(vector);
      const ws = join(root, 'ws');
      const config = join(root, 'config');
      const grants = join(root, 'grants', 'sandbox-grants.json');
      mkdirSync(ws);
      mkdirSync(config);
      const env = { PATH: process.env.PATH, HOME: root, XDG_CONFIG_HOME: config, XDG_CACHE_HOME: join(root, 'cache'), ZERO_SANDBOX_GRANTS_PATH: grants, NO_COLOR: '1' };
      if (v.config !== undefined) {
        mkdirSync(join(config, 'zero'), { recursive: true });
        writeFileSync(join(config, 'zero', 'config.json'), JSON.stringify(v.config));
      }
      const store = new GrantStore(grants, { validatePrefix: (prefix) => analyzer.validateCommandPrefix(prefix) });
      for (const g of v.seed?.grants ?? []) {
        store.grant({ toolName: g.toolName, decision: g.decision, ...(g.scope === undefined ? {} : { scope: g.scope, scopeKind: g.scopeKind }), ...(g.reason === undefined ? {} : { reason: g.reason }) });
      }
      for (const p of v.seed?.prefixes ?? []) store.grantCommandPrefix(p.toolName, p.prefix, p.reason);
      if (v.brokenGrants === true) {
        mkdirSync(dirname(grants), { recursive: true });
        writeFileSync(grants, '{"schemaVersion":3,"grants":{"bash":[{"toolName":"ba');
      }
      for (const step of v.steps) {
        const where = step.args.join(' ');
        const before = step.expect.grantsUnchanged === true ? JSON.stringify(store.list()) : undefined;
        const r = await runCli(step.args, { env, cwd: ws });
        const x = step.expect;
        const shown = `${where}\n${r.stdout}\n${r.stderr}`;
        if (x.exit !== undefined) assert.is(r.code, x.exit, shown);
        if (x.exitNot !== undefined) assert.is.not(r.code, x.exitNot, shown);
        for (const part of x.stdoutContains ?? []) assert.ok(r.stdout.includes(part), `stdout lacks ${part}: ${shown}`);
        for (const part of x.stdoutNotContains ?? []) assert.not.ok(r.stdout.includes(part), `stdout has ${part}: ${shown}`);
        for (const part of x.stderrContains ?? []) assert.ok(r.stderr.includes(part), `stderr lacks ${part}: ${shown}`);
        if (x.stderrEmpty === true) assert.is(r.stderr, '', shown);
        if (x.stdoutNonEmpty === true) assert.ok(r.stdout !== '', shown);
        if (x.json !== undefined) checkJson(JSON.parse(r.stdout), x.json, where);
        if (before !== undefined) assert.is(JSON.stringify(store.list()), before, `${where} changed the grants`);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
      places.cleanup();
    }
  });
}

test.run();
