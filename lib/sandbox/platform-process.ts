// SPDX-License-Identifier: MIT
// The SandboxedProcess contract of the macOS and Windows backends, with the timeout and abort
// watch and the private temp dir removal both use.
import { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

import { SandboxError } from '../errors.js';
import type { SandboxBackendName } from '../backend/types.js';
import type { SandboxOptions } from './options.js';
import type { SandboxExit } from './process.js';

/** Removes a command's private temp dir (when it has ended). */
export function removeTmpDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The SandboxedProcess contract for the macOS and Windows backends. */
export class PlatformProcess extends EventEmitter {
  /** The command's pid (macOS: also its process-group id). */
  readonly pid: number;
  /** The command's stdin when spawned with 'pipe', else null. */
  readonly stdin: Writable | null;
  /** The command's stdout when spawned with 'pipe', else null. */
  readonly stdout: Readable | null;
  /** The command's stderr when spawned with 'pipe', else null. */
  readonly stderr: Readable | null;
  /** `macos-seatbelt` or `windows-appcontainer`. */
  readonly backend: SandboxBackendName;
  /** The network mode the command runs under. */
  readonly network: 'deny' | 'allow';
  /** Always false: prewarming exists on Linux only. */
  readonly prewarmed = false;
  /** Names of the caller's variables scrubbed as secrets (never their values). */
  readonly scrubbedEnv: readonly string[];
  /** Resolves once the command and everything it started are gone. */
  readonly exited: Promise<SandboxExit>;
  readonly #kill: () => boolean;
  #done = false;

  /** @internal */
  constructor(init: {
    pid: number;
    streams: [Writable | null, Readable | null, Readable | null];
    backend: SandboxBackendName;
    network: 'deny' | 'allow';
    kill: () => boolean;
    exited: Promise<SandboxExit>;
    scrubbedEnv?: readonly string[];
  }) {
    super();
    this.scrubbedEnv = init.scrubbedEnv ?? [];
    this.pid = init.pid;
    [this.stdin, this.stdout, this.stderr] = init.streams;
    this.stdin?.on('error', () => {}); // a command that exits without reading its input
    this.backend = init.backend;
    this.network = init.network;
    this.#kill = init.kill;
    this.exited = init.exited.then((exit) => {
      this.#done = true;
      this.emit('exit', exit);
      return exit;
    });
  }

  /** Kills every process of the command (any signal kills: the platforms have no signal choice here). */
  kill(signal: NodeJS.Signals | number = 'SIGKILL'): boolean {
    if (typeof signal === 'string' && !/^SIG[A-Z0-9]+$/.test(signal)) throw new SandboxError('invalid_argument', `unknown signal ${signal}`);
    if (this.#done) return false;
    return this.#kill();
  }
}

/** Timeout and abort for one process: both kill it and are remembered for the exit record. */
export function watchLimits(options: SandboxOptions, kill: () => void): { flags: { timedOut: boolean; aborted: boolean }; stop: () => void } {
  const flags = { timedOut: false, aborted: false };
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => {
    flags.timedOut = true;
    kill();
  }, options.timeoutMs);
  const onAbort = (): void => {
    flags.aborted = true;
    kill();
  };
  if (options.signal?.aborted === true) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  return { flags, stop: () => {
    if (timer !== undefined) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  } };
}
