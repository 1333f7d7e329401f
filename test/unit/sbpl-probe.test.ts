// SPDX-License-Identifier: MIT
// macOS only: the native probe really runs sandbox-exec with a trivial profile and with one that
// denies reading a file. With ZERO_SANDBOX_MUST_WORK=1 (CI) both must hold. Registers nothing
// on other platforms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { MACOS_REQUIRED_FACTS, selectBackend } from '../../lib/backend/select.js';
import { callNative } from '../../lib/native/load.js';

const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1';

if (process.platform === 'darwin') {
  test('the seatbelt facts are measured, and hold where the backend must work', () => {
    const probe = callNative((native) => native.probeSync());
    assert.is(probe.platform, 'darwin');
    const info = selectBackend({ platform: 'darwin', facts: probe.facts });
    assert.is(info.name, 'macos-seatbelt');
    assert.ok(probe.facts.sandboxInit !== undefined);
    for (const name of MACOS_REQUIRED_FACTS) {
      const fact = probe.facts[name];
      assert.ok(fact !== undefined, `fact ${name} is missing from the probe`);
      if (MUST_WORK) assert.ok(fact.attempted && fact.ok, `${name}: ${JSON.stringify(fact)}`);
    }
    assert.is(info.available, MACOS_REQUIRED_FACTS.every((name) => probe.facts[name]?.ok === true), info.message);
    if (MUST_WORK) assert.ok(info.available, info.message);
  });
}

test.run();
