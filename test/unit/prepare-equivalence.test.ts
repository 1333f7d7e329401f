// SPDX-License-Identifier: MIT
// The Linux preparation (plan, runtime state, env, spec, protected paths, prewarm key) derives
// exactly what it derived before it was made cheaper (golden snapshots recorded from the earlier
// code), and observes the filesystem afresh on every call. When the preparation changes on
// purpose, re-record with `ZS_UPDATE_PREPARE_GOLDEN=1 node scripts/run-tests.mjs prepare-equivalence`
// and review the diff of test/fixtures/prepare/golden.json.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { REPO_ROOT } from '../helpers/cli.js';
import { outsideTempBase } from '../helpers/outside.js';
import { buildPrepareTree, snapshotPrepare, type PrepareSnapshot } from '../helpers/prepare-tree.js';
import type { SandboxOptions } from '../../lib/sandbox/options.js';

const GOLDEN = join(REPO_ROOT, 'test', 'fixtures', 'prepare', 'golden.json');
const update = process.env.ZS_UPDATE_PREPARE_GOLDEN === '1';

interface Golden {
  first: PrepareSnapshot;
  networkAllow: PrepareSnapshot;
  afterChanges: PrepareSnapshot;
}

if (process.platform === 'linux') {
  test('the preparation is unchanged for the same filesystem, and sees every change', () => {
    const base = realpathSync(mkdtempSync(join(outsideTempBase(), '.zs-prepare-eq-')));
    const savedEnv = { ...process.env };
    try {
      const { home, ws, extra } = buildPrepareTree(base);
      // Our own environment decides the user cache dir and the credential baseline: pin it.
      for (const name of Object.keys(process.env)) delete process.env[name];
      Object.assign(process.env, { HOME: home, XDG_CACHE_HOME: join(base, 'cache'), PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' });
      const options: SandboxOptions = {
        workspace: ws,
        allowWrite: [extra],
        denyRead: [join(ws, 'private.txt')],
        denyWrite: [join(ws, 'src', 'locked.txt')],
        env: { PATH: '/usr/bin:/bin', HOME: home, FOO: 'bar', GITHUB_TOKEN: 'gh', DEPLOY_TOKEN: 'kept', OPENAI_api_key: 'k', KUBECONFIG: '' },
        envPass: ['deploy_token'],
      };
      const first = snapshotPrepare(base, ['/bin/sh', '-c', 'npm test'], options);
      // The second call takes the lingering lease (no runtime preparation): the same result.
      const again = snapshotPrepare(base, ['/bin/sh', '-c', 'npm test'], options);
      assert.equal(again, first, 'a second call on the same filesystem prepares the same sandbox');
      const unshared = snapshotPrepare(base, ['/bin/sh', '-c', 'npm test'], options, false);
      assert.equal(unshared, first, 'the facts shared within a call change nothing');
      const networkAllow = snapshotPrepare(base, ['make'], { ...options, network: 'allow', cwd: 'src', limits: { openFiles: 64 } });

      // What a command could do between two calls: make a repository, plant a credential, point
      // .zero somewhere (dangling), give the nested repository its hooks dir.
      mkdirSync(join(ws, 'src', '.git', 'hooks'), { recursive: true });
      writeFileSync(join(ws, 'src', '.git', 'config'), '[core]\n');
      writeFileSync(join(home, '.git-credentials'), 'https://u:p@example.com\n');
      symlinkSync(join(base, 'gone'), join(ws, '.zero'));
      mkdirSync(join(ws, 'vendor', '.git', 'hooks'));
      const afterChanges = snapshotPrepare(base, ['/bin/sh', '-c', 'npm test'], options);
      assert.not.equal(afterChanges, first, 'the changes are seen');
      assert.equal(snapshotPrepare(base, ['/bin/sh', '-c', 'npm test'], options, false), afterChanges, 'shared facts, after the changes');
      const plan = afterChanges.plan as { denyRead: string[]; writeRoots: Array<{ readOnlySubpaths: string[] }> };
      assert.ok(plan.denyRead.includes('<base>/home/.git-credentials'), 'a new credential file is masked');
      assert.ok(plan.writeRoots[0]?.readOnlySubpaths.includes('<base>/ws/src/.git/hooks'), 'a new nested repository is protected');

      const golden: Golden = { first, networkAllow, afterChanges };
      if (update) {
        mkdirSync(join(REPO_ROOT, 'test', 'fixtures', 'prepare'), { recursive: true });
        writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 1)}\n`);
      }
      const expected = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Golden;
      assert.equal(first, expected.first, 'first call');
      assert.equal(networkAllow, expected.networkAllow, 'network allow, cwd, limits');
      assert.equal(afterChanges, expected.afterChanges, 'after the filesystem changed');
    } finally {
      for (const name of Object.keys(process.env)) delete process.env[name];
      Object.assign(process.env, savedEnv);
      rmSync(base, { recursive: true, force: true });
    }
  });
}

test.run();
