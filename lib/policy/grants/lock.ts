// SPDX-License-Identifier: MIT
// A cross-process exclusive lock without native code: exclusive creation of `<file>.lockfile`
// holding the owner's pid and a random token, with stale-owner detection.
//
// Why not flock: Node has no flock and the addon does not export one; exclusive creation (O_EXCL)
// is atomic on every local filesystem we support. A lock whose owner process is gone, or that is
// older than STALE_AFTER_MS (pid reuse, another host), or that holds no owner at all (the Go
// implementation leaves an empty flock file in place) is broken under a second short-lived
// "breaker" lock, after re-reading it, so two waiters can never both remove a fresh lock.
// A worker thread's lock also names its thread (Linux), so that a worker terminated while holding
// it (termination skips every finally) leaves a lock that counts as abandoned at once, not one its
// still-running process seems to hold.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';

import { SandboxError } from '../../errors.js';
import { currentHolder, threadStart } from '../../sandbox/runtime-lease.js';

/** How long a lock may be held before it counts as abandoned. */
const STALE_AFTER_MS = 30_000;
/** An ownerless lock file (not ours) counts as abandoned after this long. */
const OWNERLESS_STALE_MS = 2_000;

/**
 * `<pid>:<16 random hex digits>` naming a lock's owner, and ` thread <tid>-<start time>` after it
 * in a worker thread (earlier versions read the pid alone). node:crypto is required only here,
 * when a lock is taken: importing it costs ~4 ms of every CLI start, and most runs never write
 * grants.
 */
function ownerToken(): string {
  const { randomBytes } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const holder = currentHolder();
  const thread = holder.tid === undefined ? '' : ` thread ${holder.tid}-${holder.tidStart ?? ''}`;
  return `${process.pid}:${randomBytes(8).toString('hex')}${thread}\n`;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` milliseconds (the lock API is synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function readOwner(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isStale(path: string, content: string): boolean {
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch {
    return false; // gone already: the next attempt will create it
  }
  if (ageMs > STALE_AFTER_MS) return true;
  const match = /^(\d+):[0-9a-f]*(?: thread (\d+)-(\d+))?/.exec(content);
  if (match === null) return ageMs > OWNERLESS_STALE_MS;
  const pid = Number(match[1]);
  if (!processAlive(pid)) return true;
  return match[2] !== undefined && threadStart(pid, Number(match[2])) !== match[3];
}

function tryCreate(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new SandboxError('grants_locked', `cannot create the sandbox grants lock at ${path}: ${(error as Error).message}`, {
      path,
      cause: error,
    });
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function breakStale(path: string, seen: string): void {
  const breaker = `${path}.break`;
  if (!tryCreate(breaker, ownerToken())) {
    const content = readOwner(breaker);
    if (content !== undefined && isStale(breaker, content)) {
      try {
        unlinkSync(breaker);
      } catch {
        // another waiter removed it
      }
    }
    return;
  }
  try {
    if (readOwner(path) === seen) unlinkSync(path);
  } catch {
    // removed meanwhile
  } finally {
    try {
      unlinkSync(breaker);
    } catch {
      // nothing to do
    }
  }
}

/** Options of acquireLock. */
export interface LockOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Wait this long between attempts (default 10 ms). */
  retryMs?: number;
}

/**
 * Takes the exclusive lock `lockPath`, retrying every `retryMs` for up to `timeoutMs`; returns the
 * release function. Throws SandboxError `grants_locked` on timeout.
 */
export function acquireLock(lockPath: string, options: LockOptions = {}): () => void {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const retryMs = options.retryMs ?? 10;
  const token = ownerToken();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (tryCreate(lockPath, token)) break;
    const content = readOwner(lockPath);
    if (content !== undefined && isStale(lockPath, content)) {
      breakStale(lockPath, content);
      if (tryCreate(lockPath, token)) break;
    }
    if (Date.now() >= deadline) {
      throw new SandboxError('grants_locked', `timed out waiting for sandbox grants lock at ${lockPath}`, { path: lockPath });
    }
    sleepSync(retryMs);
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (readOwner(lockPath) === token) {
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  };
}
