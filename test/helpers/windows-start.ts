// SPDX-License-Identifier: MIT
// Stand-ins for the Windows starter's tests on any OS: an addon that records its ACL calls and
// spawns (with what the ACL journal held at each spawn), and a prepared run of a workspace.
import { readdirSync } from 'node:fs';

import type { WindowsSpawnSpec } from '../../lib/backend/windows/launch-spec.js';
import { SandboxError } from '../../lib/errors.js';
import type { NativeExit } from '../../lib/native/types.js';
import type { PreparedRun } from '../../lib/sandbox/contract.js';
import { posixPlan } from '../fixtures/sbpl/plans.js';

export const WS = 'C:\\Users\\dev\\project';
export const TMP = 'C:\\Users\\dev\\AppData\\Local\\Temp\\zero-sandbox-abc';

export type AclCall = { op: string; container: string; kinds: string[]; paths: string[]; redo: boolean };
export type SpawnCall = { spawn: WindowsSpawnSpec; journal: string[] };

/**
 * A stand-in addon: records the ACL calls and spawns in order. `failOp` makes that ACL verb throw;
 * `gate`, when given, holds every ACL call until it resolves.
 */
export function fakeBinding(dir: string, failOp?: string, gate?: Promise<void>) {
  const calls: Array<AclCall | SpawnCall> = [];
  const kills: number[] = [];
  return {
    calls,
    kills,
    binding: {
      spawn(spec: object, onExit: (exit: NativeExit) => void) {
        calls.push({ spawn: spec as WindowsSpawnSpec, journal: readdirSync(dir).sort() });
        setImmediate(() => onExit({ exitCode: 0, signal: null, execErrno: 0, commandExited: true }));
        return { pid: 7 };
      },
      kill: (pid: number) => {
        kills.push(pid);
        return true;
      },
      async windowsAcl(request: AclCall) {
        calls.push({ ...request });
        if (gate !== undefined) await gate;
        if (request.op === failOp) throw new SandboxError('sandbox_unavailable', `${request.op} refused`);
        return { changed: request.paths.length };
      },
    },
  };
}

export function preparedRun(): PreparedRun {
  const plan = posixPlan(WS, { argv: ['C:\\Windows\\System32\\cmd.exe'], env: {}, writeRoots: [{ root: WS, readOnlySubpaths: [], protectedNames: [] }] });
  return { plan, backend: 'windows-appcontainer', takeFacts: () => { throw new Error('unused'); }, tmpDir: TMP, envs: [], release: () => {} } as unknown as PreparedRun;
}

export const noIo = { stdio: ['ignore', 'ignore', 'ignore'] as const, env: {} } as never;
