// SPDX-License-Identifier: MIT
// A stand-in for a started sandbox in tests of the shared lifecycle: its output streams end and it
// exits 0 on the next turn of the event loop.
import { PassThrough } from 'node:stream';

import type { OsExit, OsProcess, StartIo } from '../../lib/sandbox/contract.js';

export function exitingProcess(io: StartIo, onExit: (exit: OsExit) => void): OsProcess {
  const stdout = io.stdio[1] === 'pipe' ? new PassThrough() : null;
  const stderr = io.stdio[2] === 'pipe' ? new PassThrough() : null;
  setImmediate(() => {
    stdout?.end();
    stderr?.end();
    onExit({ exitCode: 0, signal: null });
  });
  return { pid: 4321, stdio: [new PassThrough(), stdout, stderr], capturesOutput: false, prewarmed: false, kill: () => false, checkProtectedPaths: () => [] };
}
