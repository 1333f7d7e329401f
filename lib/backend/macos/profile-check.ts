// SPDX-License-Identifier: MIT
// The probe's seatbelt check with the real profile: the native probe only proves that sandbox-exec
// applies a trivial profile, so a rule of ours that this macOS does not know (an operation, filter
// or service it rejects) would fail every command. This compiles the profile this package builds
// for a workspace (deny rules tagged for the denial log, as every run's are) and runs
// /usr/bin/true under it; the backend is available only when it works.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { NativeFact } from '../../native/types.js';
import { buildDenialTag } from './denial-log.js';
import { PROTECTED_METADATA_NAMES } from '../../protected-names.js';
import { buildSandboxExecArgs, SANDBOX_EXEC } from './sandbox-exec.js';
import { readDarwinUserDirs, type DarwinUserDirs } from './user-dirs.js';

/** Runs `/usr/bin/true` under the real profile of a scratch workspace, both network modes. */
export function checkSeatbeltProfile(sandboxExec: string = SANDBOX_EXEC, userDirs: DarwinUserDirs = readDarwinUserDirs()): NativeFact {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'zero-sandbox-profile-check-')));
  try {
    const ws = join(base, 'ws');
    const tmp = join(base, 'tmp');
    mkdirSync(ws);
    mkdirSync(tmp);
    for (const network of ['deny', 'allow'] as const) {
      const args = buildSandboxExecArgs({
        argv: ['/usr/bin/true'], cwd: ws, env: {}, network, workspace: ws,
        writeRoots: [{ root: ws, readOnlySubpaths: [], protectedNames: [...PROTECTED_METADATA_NAMES] }],
        readRoots: ['/'], denyRead: [join(base, 'denied')], denyWrite: [], blockUnixSockets: network === 'deny', limits: {},
      }, { tmpDir: tmp, darwinUserDirs: userDirs, denialTag: buildDenialTag() });
      const result = spawnSync(sandboxExec, args, { cwd: ws, encoding: 'utf8', timeout: 10_000 });
      if (result.status !== 0) {
        const why = result.error?.message ?? (result.stderr.split('\n', 1)[0] || `exit ${result.status ?? result.signal}`);
        return { attempted: true, ok: false, errno: result.status ?? 0, syscall: `sandbox-exec with the ${network === 'deny' ? 'network deny' : 'network allow'} profile: ${why}`, value: 0 };
      }
    }
    return { attempted: true, ok: true, errno: 0, value: 0 };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
