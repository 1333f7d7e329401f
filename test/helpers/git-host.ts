// SPDX-License-Identifier: MIT
// The real git on the host, for tests that check what a sandboxed command left behind: planted
// hooks and commands write a marker file outside every write root, which only the host can do.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Runs host git (never throws); its own config is the test's, hooks and configs the repo's. */
export function hostGit(cwd: string, args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
    encoding: 'utf8',
    input: input ?? '',
    timeout: 20_000,
    env: { ...process.env, GIT_EDITOR: undefined, EDITOR: undefined, VISUAL: undefined, GIT_PAGER: undefined, PAGER: undefined, GIT_TERMINAL_PROMPT: '0' } as NodeJS.ProcessEnv,
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** A repository with one commit. */
export function hostRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  hostGit(dir, ['init', '-q', '-b', 'main']);
  hostGit(dir, ['commit', '-q', '--allow-empty', '-m', 'first']);
  return dir;
}

/** The marker files planted code created on the host (none, when nothing ran). */
export function markers(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith('pwned')).sort() : [];
}

/** A shell command that leaves a marker named `pwned-<tag>` in `dir`; `;:` swallows appended args. */
export function plant(dir: string, tag: string): string {
  return `touch ${join(dir, `pwned-${tag}`)};:`;
}

/** An executable hook script (for a sandboxed `printf`) that leaves a marker. */
export function hookScript(dir: string, tag: string): string {
  return `'#!/bin/sh\\ntouch ${join(dir, `pwned-${tag}`)}\\n'`;
}

/**
 * Runs host git on a terminal (through util-linux `script`), as a user does: git starts a pager
 * (core.pager, pager.<cmd>) only when its output is a terminal, so only this shows whether a
 * planted pager runs.
 */
export function hostGitTty(cwd: string, args: string[]): { status: number | null; stdout: string } {
  const quoted = ['git', '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', quoted, '/dev/null'], {
    cwd,
    encoding: 'utf8',
    input: '',
    timeout: 20_000,
    env: { ...process.env, GIT_PAGER: undefined, PAGER: undefined, GIT_TERMINAL_PROMPT: '0', TERM: 'xterm' } as NodeJS.ProcessEnv,
  });
  return { status: r.status, stdout: r.stdout ?? '' };
}
