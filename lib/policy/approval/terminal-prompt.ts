// SPDX-License-Identifier: MIT
// Asks a permission question on the terminal (once, session, always, deny) for `zero-sandbox run`,
// reading the answer from /dev/tty so the command's own stdin is left alone.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

import type { PermissionPrompt } from './authorize.js';
import type { ApprovalAnswer } from '../engine/constants.js';

const KEYS: Array<[string, ApprovalAnswer, string]> = [
  ['o', 'allow', '[o]nce'],
  ['s', 'allow_for_session', '[s]ession'],
  ['a', 'always_allow', '[a]lways'],
  ['d', 'deny', '[d]eny'],
];

/** Maps a typed answer to an approval answer; undefined when it is not one of the offered keys. */
export function parseTerminalAnswer(line: string, offered: readonly ApprovalAnswer[]): ApprovalAnswer | undefined {
  const key = line.trim().toLowerCase();
  const hit = KEYS.find(([k, answer]) => (key === k || key === answer || key === answer.replace(/_/g, ' ')) && offered.includes(answer));
  if (hit !== undefined) return hit[1];
  if (key === 'once' && offered.includes('allow')) return 'allow';
  if (key === 'session' && offered.includes('allow_for_session')) return 'allow_for_session';
  if (key === 'always' && offered.includes('always_allow')) return 'always_allow';
  return undefined;
}

/** The question line for a prompt, e.g. "Allow? [o]nce, [s]ession, [a]lways, [d]eny: ". */
export function buildTerminalQuestion(offered: readonly ApprovalAnswer[]): string {
  return `Allow? ${KEYS.filter(([, answer]) => offered.includes(answer)).map(([, , label]) => label).join(', ')}: `;
}

/**
 * Asks on the controlling terminal; end of input or an unreadable terminal is `deny`. `ttyPath`
 * is for tests.
 */
export function askOnTerminal(prompt: PermissionPrompt, ttyPath = '/dev/tty'): ApprovalAnswer {
  let fd: number;
  try {
    fd = openSync(ttyPath, 'r+');
  } catch {
    return 'deny';
  }
  try {
    writeSync(fd, `\n${prompt.text}`);
    for (let attempt = 0; attempt < 3; attempt++) {
      writeSync(fd, buildTerminalQuestion(prompt.availableDecisions));
      const line = readLine(fd);
      if (line === undefined) return 'deny';
      const answer = parseTerminalAnswer(line, prompt.availableDecisions);
      if (answer !== undefined) return answer;
    }
    return 'deny';
  } finally {
    closeSync(fd);
  }
}

function readLine(fd: number): string | undefined {
  const buffer = Buffer.alloc(1);
  let line = '';
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buffer, 0, 1, null);
    } catch {
      return line === '' ? undefined : line;
    }
    if (n === 0) return line === '' ? undefined : line;
    const ch = buffer.toString('utf8');
    if (ch === '\n') return line;
    line += ch;
    if (line.length > 256) return line;
  }
}
