// SPDX-License-Identifier: MIT
// A kept policy's mounts and Landlock rules are converted by the addon once (preparePolicy) and
// each later cold spawn names that copy instead of handing them over again. The copy must enforce
// exactly what the spec would: every deny entry and write root of a policy run cold again and
// again from it, checked on the host; and the addon must refuse a spec that gives both the handle
// and the fields, or something else as the handle.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { preparedPolicyCount } from '../../lib/backend/linux/prepared-policy.js';
import { assertEnforceable, prepareLinux } from '../../lib/backend/linux/start.js';
import { buildLinuxSpec, hostViewOf } from '../../lib/backend/linux/spec.js';
import { HostFacts } from '../../lib/host-facts.js';
import { loadNative, nativeBindingPath } from '../../lib/native/load.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

sandboxTest('cold runs of a kept policy spawn from one prepared copy and still enforce every entry', async () => {
  const t = makeTree();
  assert.type(loadNative().preparePolicy, 'function');
  const before = preparedPolicyCount();
  try {
    const secret = join(t.ws, 'secret.env');
    const locked = join(t.ws, 'locked.txt');
    const dist = join(t.outside, 'dist');
    mkdirSync(dist);
    writeFileSync(secret, 'SECRET-VALUE\n');
    writeFileSync(locked, 'original\n');
    const options = { workspace: t.ws, prewarm: false, denyRead: [secret], denyWrite: [locked], allowWrite: [dist] };
    const script = `cat secret.env; echo evil > locked.txt; echo built > ${dist}/out; echo outside > ${t.outside}/stray; echo done`;
    for (let i = 0; i < 6; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', script], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.not.match(r.stdout, /SECRET-VALUE/, `run ${i} read the denied file`);
      assert.is(readFileSync(locked, 'utf8'), 'original\n', `run ${i} wrote the write-protected file`);
      assert.is(readFileSync(join(dist, 'out'), 'utf8'), 'built\n', `run ${i} could not write its write root`);
      assert.throws(() => readFileSync(join(t.outside, 'stray')), undefined, `run ${i} wrote outside its write roots`);
    }
    const prepared = preparedPolicyCount() - before;
    assert.ok(prepared >= 1, 'the policy was prepared');
    assert.ok(prepared <= 2, `prepared once kept, not at every run (${prepared} times in 6 runs)`);
  } finally {
    t.cleanup();
  }
});

sandboxTest('the addon refuses a spec with both a prepared policy and its fields, or a handle of something else', () => {
  const t = makeTree();
  const run = prepareLinux(['/bin/true'], { workspace: t.ws });
  try {
    const binding = loadNative();
    const context = assertEnforceable(run.plan);
    const spec = buildLinuxSpec(run.plan, ['ignore', 'ignore', 'ignore'], { landlockAbi: context.abi, isRoot: context.isRoot, arch: context.arch, bindingPath: nativeBindingPath() ?? '' }, hostViewOf(new HostFacts()));
    const handle = binding.preparePolicy!({ mounts: spec.linux.mounts, landlockRules: spec.linux.landlockRules });
    const refused = (linux: object, pattern: RegExp) =>
      assert.throws(
        () => binding.spawn({ ...spec, linux }, () => {}),
        (error: unknown) => error instanceof TypeError && pattern.test(error.message),
      );
    refused({ ...spec.linux, prepared: handle }, /prepared replaces mounts and landlockRules/);
    const { mounts: _m, landlockRules: _r, ...rest } = spec.linux;
    refused({ ...rest, prepared: { mounts: [] } }, /prepared must be a preparePolicy handle/);
    refused({ ...rest, prepared: binding.prepareWarm(spec) }, /prepared must be a preparePolicy handle/);
    assert.throws(() => binding.preparePolicy!({ mounts: [{ kind: 1 }], landlockRules: [] } as never), (error: unknown) => error instanceof TypeError && /policy\.mounts/.test((error as Error).message));
  } finally {
    run.release();
    t.cleanup();
  }
});

test.run();
