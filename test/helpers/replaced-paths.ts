// SPDX-License-Identifier: MIT
// The body shared by the attacks where a path a policy names is replaced by rename after the
// sandbox set-up that used it was made (a mount template, a prewarmed sandbox): a denied file's new
// content must stay hidden, a write-protected file's new version must stay read-only. Each attack
// gives how the set-up is made (its options and warm-up) and how many runs follow the change.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import type { RunResult } from '../../lib/sandbox/run.js';
import { makeTree } from './sandbox.js';

export interface ReplacedPathCase {
  /** The options besides the workspace and the entry (prewarm on or off). */
  options: RunOptions;
  /** Runs `script` under `options` until the set-up made before the change exists. */
  warmUp(script: string, options: RunOptions): Promise<void>;
  /** How many runs after the change are checked. */
  runs: number;
  /** What a failure message says about the run, beside its number. */
  label?(result: RunResult): string;
  /** Cleanup after the tree is checked (for example emptying the prewarm pool). */
  after?(): void;
}

/** Writes `content` beside `path`, then renames it over `path`: an editor's atomic save. */
export function renameOnHost(path: string, content: string): void {
  const next = `${path}.new`;
  writeFileSync(next, content);
  renameSync(next, path);
}

const name = (c: ReplacedPathCase, i: number, r: RunResult) => `run ${i}${c.label === undefined ? '' : ` (${c.label(r)})`}`;

/** A denied secret.env is made and warmed up on, `replace` swaps it for new content, the next runs read it. */
export async function replacedSecretStaysHidden(c: ReplacedPathCase, replace: (ws: string, secret: string) => Promise<void>): Promise<void> {
  const t = makeTree();
  try {
    const secret = join(t.ws, 'secret.env');
    writeFileSync(secret, 'OLD-SECRET\n');
    const options: RunOptions = { ...c.options, workspace: t.ws, denyRead: [secret] };
    const read = 'cat secret.env; echo done';
    await c.warmUp(read, options);
    await replace(t.ws, secret);
    assert.is(readFileSync(secret, 'utf8'), 'NEW-SECRET\n');
    for (let i = 0; i < c.runs; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', read], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.not.match(r.stdout, /SECRET/, `${name(c, i, r)} read the file`);
    }
  } finally {
    c.after?.();
    t.cleanup();
  }
}

/** A write-protected locked.txt is warmed up on, replaced by rename on the host, and the next runs try to write it. */
export async function replacedLockedStaysReadOnly(c: ReplacedPathCase): Promise<void> {
  const t = makeTree();
  try {
    const locked = join(t.ws, 'locked.txt');
    writeFileSync(locked, 'original\n');
    const options: RunOptions = { ...c.options, workspace: t.ws, denyWrite: [locked] };
    const write = 'echo evil > locked.txt; echo done';
    await c.warmUp(write, options);
    assert.is(readFileSync(locked, 'utf8'), 'original\n');
    renameOnHost(locked, 'host-new\n');
    for (let i = 0; i < c.runs; i++) {
      const r = await runSandboxed(['/bin/sh', '-c', write], options);
      assert.match(r.stdout, /done/, r.stderr);
      assert.is(readFileSync(locked, 'utf8'), 'host-new\n', `${name(c, i, r)} wrote the file`);
    }
  } finally {
    c.after?.();
    t.cleanup();
  }
}
