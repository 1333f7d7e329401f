// SPDX-License-Identifier: MIT
// Windows only: the native probe really creates an AppContainer profile, prepares the security
// capabilities, creates a kill-on-close job and runs cmd.exe inside a container. With
// ZERO_SANDBOX_MUST_WORK=1 (CI) every fact must hold. Registers nothing on other platforms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { selectBackend, WINDOWS_REQUIRED_FACTS } from '../../lib/backend/select.js';
import { callNative } from '../../lib/native/load.js';

const MUST_WORK = process.env.ZERO_SANDBOX_MUST_WORK === '1';

if (process.platform === 'win32') {
  test('the AppContainer facts are measured, and hold where the backend must work', () => {
    const probe = callNative((native) => native.probeSync());
    assert.is(probe.platform, 'win32');
    const info = selectBackend({ platform: 'win32', facts: probe.facts });
    assert.is(info.name, 'windows-appcontainer');
    for (const name of WINDOWS_REQUIRED_FACTS) {
      const fact = probe.facts[name];
      assert.ok(fact !== undefined, `fact ${name} is missing from the probe`);
      if (MUST_WORK) assert.ok(fact.attempted && fact.ok, `${name}: ${JSON.stringify(fact)}`);
    }
    assert.is(info.available, WINDOWS_REQUIRED_FACTS.every((name) => probe.facts[name]?.ok === true), info.message);
    if (MUST_WORK) assert.ok(info.available, info.message);
  });
}

test.run();
