// SPDX-License-Identifier: MIT
// The Go Zero CLI's macOS vectors (copied into test/fixtures/sbpl/corpus-backend-facts.json): the
// Homebrew PATH, the runtime rules of the base profile, and the deny-write rule order.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SEATBELT_BASE_PROFILE } from '../../lib/backend/macos/base-profile.js';
import { buildSbplString, buildSeatbeltProfile } from '../../lib/backend/macos/profile.js';
import { buildMacToolPath } from '../../lib/backend/macos/tool-path.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';

interface Vector {
  id: string;
  check: string;
  path?: string;
  writeRoots?: string[];
  policy?: { denyWrite?: string[] };
  expect: { path?: string; contains?: string[]; include?: string[]; appearsAfter?: string; pathContains?: string };
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/sbpl/corpus-backend-facts.json', import.meta.url), 'utf8'),
) as Vector[];
const WORKSPACE = '/Users/dev/project';
const sub = (s: string): string => s.replaceAll('$WORKSPACE', WORKSPACE);

const plan = (denyWrite: string[]): SandboxPlan => posixPlan(WORKSPACE, { argv: ['/usr/bin/true'], denyWrite });

test('the fixture holds the macOS vectors', () => {
  assert.ok(vectors.length >= 8);
});

for (const v of vectors) {
  test(`${v.id} (${v.check})`, () => {
    switch (v.check) {
      case 'ensureMacToolPaths':
        assert.is(buildMacToolPath(v.path!), v.expect.path);
        break;
      case 'sandboxEnvironmentPath':
        assert.ok(buildMacToolPath('/usr/bin:/bin').split(':').includes(v.expect.pathContains!));
        break;
      case 'seatbeltRuntimeRules':
        for (const needle of v.expect.contains!) assert.ok(SEATBELT_BASE_PROFILE.includes(needle), needle);
        break;
      case 'macosPlatformReadRoots':
        // Each root is readable through a subpath rule of the base profile (itself or a parent).
        for (const root of v.expect.include!) {
          const covered = [...SEATBELT_BASE_PROFILE.matchAll(/\(subpath "([^"]+)"\)/g)]
            .some((m) => root === m[1] || root.startsWith(`${m[1]}/`));
          assert.ok(covered, root);
        }
        assert.match(SEATBELT_BASE_PROFILE, /\(allow file-read\* \(subpath "\/bin"\)[^;]*\(subpath "\/opt\/homebrew"\)/);
        break;
      case 'seatbeltProfile': {
        const built = buildSeatbeltProfile(plan((v.policy?.denyWrite ?? []).map(sub)), { tmpDir: '/private/tmp/zs-1' });
        // Paths travel as -D parameters: substitute them back as sandbox-exec would.
        const rendered = built.profile.replace(/\(param "([A-Z_0-9]+)"\)/g, (_, name: string) => buildSbplString(built.params[name]!));
        for (const needle of v.expect.contains!.map(sub)) {
          assert.ok(rendered.includes(needle), needle);
          assert.ok(rendered.indexOf(needle) > rendered.indexOf(v.expect.appearsAfter!), `${needle} must follow ${v.expect.appearsAfter}`);
        }
        break;
      }
      default:
        throw new Error(`unhandled vector kind ${v.check}`);
    }
  });
}

test.run();
