// SPDX-License-Identifier: MIT
// A per-run pids cgroup: the process limit for a root caller, whom the kernel exempts from
// RLIMIT_NPROC. Found from /proc/self/cgroup and the mount table (cgroup v1 `pids`, or a v2
// cgroup whose subtree already delegates `pids`); created before the run, removed after it.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { SandboxError } from '../errors.js';

/** The directory under which this process may create a pids cgroup, or undefined. */
export function findPidsCgroupParent(
  cgroupFile = '/proc/self/cgroup',
  mountinfoFile = '/proc/self/mountinfo',
): string | undefined {
  let cgroups: string;
  let mounts: string;
  try {
    cgroups = readFileSync(cgroupFile, 'utf8');
    mounts = readFileSync(mountinfoFile, 'utf8');
  } catch {
    return undefined;
  }
  const mountOf = (match: (fsType: string, superOptions: string) => boolean): string | undefined => {
    for (const line of mounts.split('\n')) {
      const [left, right] = line.split(' - ');
      if (left === undefined || right === undefined) continue;
      const [fsType, , superOptions] = right.split(' ');
      if (fsType !== undefined && match(fsType, superOptions ?? '')) return left.split(' ')[4];
    }
    return undefined;
  };
  for (const line of cgroups.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(',').includes('pids')) {
      const mount = mountOf((type, options) => type === 'cgroup' && options.split(',').includes('pids'));
      if (mount !== undefined) return join(mount, path);
    }
  }
  const unified = cgroups.split('\n').find((line) => line.startsWith('0::'));
  const mount = mountOf((type) => type === 'cgroup2');
  if (unified !== undefined && mount !== undefined) {
    const dir = join(mount, unified.slice(3));
    try {
      if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface PidsLimit {
  /** cgroup.procs of the new cgroup, opened for the sandbox's first process to write "0" to. */
  fd: number;
  dir: string;
  /** Closes our descriptor; call once the native spawn has returned. */
  closeFd(): void;
  /** Removes the cgroup once every process in it is gone (retries briefly while init exits). */
  remove(): void;
}

let counter = 0;

/** Empty cgroups left by processes that died before removing them (best effort). */
function removeOrphans(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^zero-sandbox-(\d+)-\d+$/.exec(name);
    if (match === null || Number(match[1]) === process.pid) continue;
    try {
      process.kill(Number(match[1]), 0);
    } catch {
      try {
        rmdirSync(join(parent, name));
      } catch {
        // still in use, or not ours to remove
      }
    }
  }
}

/** Creates a pids cgroup limited to `max` processes, or refuses (fail closed) naming why. */
export function createPidsLimit(max: number, parent = findPidsCgroupParent()): PidsLimit {
  if (parent === undefined || !existsSync(parent)) {
    throw new SandboxError(
      'sandbox_unavailable',
      'limits.processes cannot be enforced for a root caller: the kernel exempts root from RLIMIT_NPROC and no writable pids cgroup was found. Run as an ordinary user or drop the limit.',
      { layer: 'limits' },
    );
  }
  removeOrphans(parent);
  const dir = join(parent, `zero-sandbox-${process.pid}-${++counter}`);
  let fd = -1;
  try {
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, 'pids.max'), `${max}\n`);
    fd = openSync(join(dir, 'cgroup.procs'), 'w');
  } catch (error) {
    try {
      rmdirSync(dir);
    } catch {
      // nothing was created
    }
    throw new SandboxError('sandbox_unavailable', `limits.processes: cannot set up the pids cgroup ${dir}: ${(error as Error).message}`, {
      layer: 'limits',
      path: dir,
      cause: error,
    });
  }
  const closeFd = () => {
    if (fd >= 0) closeSync(fd);
    fd = -1;
  };
  const remove = (attempt = 0): void => {
    try {
      rmdirSync(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EBUSY' && attempt < 100) setTimeout(() => remove(attempt + 1), 10).unref();
    }
  };
  return { fd, dir, closeFd, remove: () => remove() };
}
