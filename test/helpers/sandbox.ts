// SPDX-License-Identifier: MIT
// Helpers for tests that run real sandboxes and then look at the host.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test as uvuTest } from 'uvu';

import { runSandboxed, type RunResult } from '../../lib/sandbox/run.js';
import type { RunOptions } from '../../lib/sandbox/options.js';
import { linuxSandboxTestsEnabled } from './probe.js';

/** `test` where a real Linux sandbox can run (always under ZERO_SANDBOX_MUST_WORK=1), else skip. */
export const sandboxTest = (name: string, fn: () => Promise<void> | void): void =>
  linuxSandboxTestsEnabled() ? uvuTest(name, fn) : uvuTest.skip(name, fn);

/**
 * Base for test trees: visible (read-only) inside the sandbox, unlike Linux's private /tmp.
 * Windows has no /var/tmp; its temp directory is not hidden from the command there.
 */
export const TREE_BASE = process.env.ZERO_SANDBOX_TEST_BASE ?? (process.platform === 'win32' ? tmpdir() : '/var/tmp');

export interface Tree {
  base: string;
  /** The workspace (writable inside the sandbox). */
  ws: string;
  /** A sibling directory outside every write root. */
  outside: string;
  cleanup(): void;
}

export function makeTree(prefix = 'zs-test-'): Tree {
  const base = mkdtempSync(join(TREE_BASE, prefix));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  return {
    base,
    ws,
    outside,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Runs a shell script in the sandbox with the tree's workspace. */
export function sh(tree: Tree, script: string, options: RunOptions = {}): Promise<RunResult> {
  return runSandboxed(['/bin/sh', '-c', script], { workspace: tree.ws, ...options });
}

/** Runs a Python snippet in the sandbox (python3 is on every CI machine we use). */
export function py(tree: Tree, code: string, options: RunOptions = {}): Promise<RunResult> {
  return runSandboxed(['python3', '-c', code], { workspace: tree.ws, ...options });
}

/** Awaits a promise that must reject and returns its error (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; layer?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; layer?: string };
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** Resolves once `path` exists (sandboxed commands say where they are through files in the workspace). */
export async function until(path: string): Promise<void> {
  for (let i = 0; i < 6000 && !existsSync(path); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(existsSync(path), `${path} appeared`);
}

/** A shell script that says it started (the file `name`), then waits for `go` on the host before it ends. */
export const waitFor = (name: string, go: string): string => `touch ${name}; while [ ! -e ${go} ]; do sleep 0.05; done`;
