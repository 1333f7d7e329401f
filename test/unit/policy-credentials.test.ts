// SPDX-License-Identifier: MIT
// Credential deny-read vectors from the Go Zero CLI's tests (fixtures/policy/credentials.json):
// for an environment (HOME, XDG_CONFIG_HOME and the override variables) and the stores on disk,
// whether the plan hides a path from the command, as a mask, the read tree or a guarded directory.
// An explicit allowRead at or above a store opts it out.
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { isSshPublicEntry } from '../../lib/credentials.js';
import { HostFacts } from '../../lib/host-facts.js';
import { isWithin } from '../../lib/path-within.js';
import { resolvePlan } from '../../lib/sandbox/plan.js';
import { applySetup, loadVectors, makePlaces, type VectorSetup } from '../fixtures/policy/vectors.js';

interface Vector {
  id: string;
  env?: Record<string, string>;
  envs?: Array<Record<string, string>>;
  cwd?: string;
  setup?: VectorSetup;
  allowRead: string[];
  path: string;
  expect: { covered: boolean; notCreated?: string };
}

/** The path with its deepest existing ancestor resolved, as the plan resolves a missing store. */
function resolvedAsFarAsExists(path: string): string {
  let rest = '';
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      lstatSync(dir);
      const real = realpathSync(dir);
      return (real === '/' ? '' : real) + rest;
    } catch {
      if (dir === dirname(dir)) return path;
      rest = `/${basename(dir)}${rest}`;
    }
  }
}

/** Zero's config directory keeps these readable inside it (the guarded directory's carve-outs). */
const zeroKeeps = (name: string) => name === 'plugins' || name === 'specialists' || name === 'commands';

/** Whether the plan hides `raw`: a mask or read-tree entry at or above it, or a guarded directory's entry. */
function hidden(plan: ReturnType<typeof resolvePlan>, raw: string): boolean {
  const path = resolvedAsFarAsExists(raw);
  if ([...plan.denyRead, ...(plan.denyReadTree?.denied ?? [])].some((denied) => isWithin(denied, path))) return true;
  return (plan.denyReadTree?.guarded ?? []).some((dir) => {
    if (path === dir) return true;
    if (!isWithin(dir, path)) return false;
    const entry = path.slice(dir.length + 1).split('/')[0] as string;
    return basename(dir) === '.ssh' ? !isSshPublicEntry(entry) : !zeroKeeps(entry);
  });
}

const vectors = loadVectors<Vector>('credentials.json');

test('the fixture holds the credential vectors', () => {
  assert.ok(vectors.length >= 70, `only ${vectors.length}`);
});

for (const vector of vectors) {
  test(`credentials ${vector.id}: ${vector.path} ${vector.expect.covered ? 'hidden' : 'readable'}`, () => {
    const places = makePlaces();
    const cwd = process.cwd();
    try {
      const v = places.subDeep(vector);
      applySetup(v.setup);
      // Relative overrides resolve against the working directory the plan is made in.
      if (v.cwd !== undefined) process.chdir(v.cwd);
      const options = { workspace: places.map.$WORKSPACE as string, cwd: undefined, network: 'deny' as const, allowWrite: [], allowRead: v.allowRead, denyRead: [], denyReadIfAppears: [], denyWrite: [], envPass: [], limits: {}, timeoutMs: undefined };
      const plan = resolvePlan({ argv: ['/bin/true'], options, envs: v.envs ?? [v.env ?? {}], commandEnv: {}, runtimeWriteRoots: [], facts: new HostFacts() });
      process.chdir(cwd);
      assert.is(hidden(plan, v.path), v.expect.covered, JSON.stringify({ denyRead: plan.denyRead, tree: plan.denyReadTree }));
      if (v.expect.notCreated !== undefined) assert.not.ok(existsSync(v.expect.notCreated), `${v.expect.notCreated} was created`);
    } finally {
      process.chdir(cwd);
      places.cleanup();
    }
  });
}

test.run();
