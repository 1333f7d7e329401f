// Windows API failures reach JavaScript as Win32 errors, not as errno values (the two number
// spaces overlap: 5 is EIO in one and "access denied" in the other): the message says
// "win32 error N (<system text>)" and the error carries `win32Error` (or `hresult`), never `errno`.
// The native check runs where the addon is the Windows build (Windows, or Wine with the MinGW
// build: npm run test:wine); the conversion check runs everywhere.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError, fromNative } from '../../lib/errors.js';
import { callNative } from '../../lib/native/load.js';

test('the one conversion keeps a Win32 code or an HRESULT as such', () => {
  const win32 = fromNative(Object.assign(new Error('CreateFileW(x) failed: win32 error 5 (Access is denied.)'), {
    code: 'spawn_failed', win32Error: 5, syscall: 'CreateFileW(x)', layer: 'stdio',
  }));
  assert.instance(win32, SandboxError);
  assert.is(win32.win32Error, 5);
  assert.is(win32.errno, undefined);
  assert.is(win32.hresult, undefined);
  const hresult = fromNative(Object.assign(new Error('CreateAppContainerProfile(x) failed: HRESULT 0x80070005'), {
    code: 'sandbox_unavailable', hresult: 0x80070005,
  }));
  assert.is(hresult.hresult, 0x80070005);
  assert.is(hresult.win32Error, undefined);
  assert.is(hresult.errno, undefined);
});

// Only the Windows build has this path: on Linux the same spawn would need a Linux spec.
if (process.platform === 'win32') {
  test('a pipe that does not exist fails as win32 error 2 with the system text', () => {
    const pipe = `\\\\.\\pipe\\zero-sandbox-missing-${process.pid}-${randomBytes(8).toString('hex')}`;
    const spec = {
      env: [],
      cwd: 'C:\\',
      windows: {
        containerName: 'zero-sandbox.test', displayName: 'zero-sandbox test', capabilitySids: [],
        commandLine: 'cmd.exe /d /c exit 0', aclKinds: [], aclPaths: [], aclRedo: false, jobMemoryBytes: 0, jobProcessLimit: 0,
      },
      stdio: [{ pipe, nonce: 'n' }, 'ignore', 'ignore'],
    };
    let caught: unknown;
    try {
      callNative((native) => native.spawn(spec, () => {}));
    } catch (error) {
      caught = error;
    }
    assert.instance(caught, SandboxError);
    const error = caught as SandboxError;
    assert.is(error.code, 'spawn_failed');
    assert.is(error.win32Error, 2, 'ERROR_FILE_NOT_FOUND');
    assert.is(error.errno, undefined);
    assert.is(error.syscall, `CreateFileW(${pipe})`);
    assert.match(error.message, /^CreateFileW\(.*\) failed: win32 error 2 \([^()]+\)$/);
  });
} else {
  process.stdout.write('win32-errors: not the Windows build, native check not run\n');
}

test.run();
