// SPDX-License-Identifier: MIT
// A process whose OS start finishes after the synchronous call that decided it: spawnSandboxed
// returns at once with its streams, as child_process.spawn does, while the OS work that can take
// long (Windows: propagating inheritable ACEs through a large tree) runs off the caller's thread.
// Everything that decides the start has happened by the time this wrapper exists; what is left can
// only fail (nothing ran: the exit carries the failure) or be cancelled (a kill before the process
// exists: nothing is started).
import type { Readable, Writable } from 'node:stream';

import { fromNative } from '../errors.js';
import type { OsExit, OsProcess } from './contract.js';

/** What a deferred start is given and must do. */
export interface DeferredStart {
  /** Our ends of the streams, there from the start (they connect once the process exists). */
  stdio: OsProcess['stdio'];
  /**
   * Finishes the start: resolves with the process, or with undefined when `cancelled()` was true
   * at the last point before the process would exist (then nothing ran and nothing is left).
   * Rejects when the sandbox could not be set up; then nothing ran either.
   */
  finish(cancelled: () => boolean): Promise<OsProcess | undefined>;
  /** The protected-path check when no process came to exist (nothing ran; releases the guard). */
  checkWithoutProcess(): ReturnType<OsProcess['checkProtectedPaths']>;
}

/**
 * An OsProcess in front of a start that finishes later. `pid` is 0 until the process exists
 * (`started` resolves then); a kill before that cancels the start and the exit says SIGKILL; a
 * failure of the rest of the start is the exit's `startFailure` (nothing ran).
 */
export function deferredProcess(deferred: DeferredStart, onExit: (exit: OsExit) => void): OsProcess {
  let os: OsProcess | undefined;
  let over = false;
  let cancelled = false;
  const end = (exit: OsExit): void => {
    over = true;
    onExit(exit);
  };
  const started = deferred.finish(() => cancelled).then(
    (process) => {
      if (process === undefined) {
        end({ exitCode: null, signal: 'SIGKILL' });
        return false;
      }
      os = process;
      // A kill that came while the start was handing the process over: it stands.
      if (cancelled) process.kill(9);
      return true;
    },
    (error: unknown) => {
      end({ exitCode: null, signal: null, startFailure: fromNative(error) });
      return false;
    },
  );
  return {
    get pid(): number {
      return os?.pid ?? 0;
    },
    stdio: deferred.stdio as [Writable | null, Readable | null, Readable | null],
    capturesOutput: false,
    prewarmed: false,
    started,
    kill: (signal) => {
      if (os !== undefined) return os.kill(signal);
      if (over) return false;
      // Signal 0 asks whether the process is there: it is about to be.
      if (signal !== 0) cancelled = true;
      return true;
    },
    checkProtectedPaths: () => (os !== undefined ? os.checkProtectedPaths() : deferred.checkWithoutProcess()),
    prepareCheck: () => os?.prepareCheck?.(),
  };
}
