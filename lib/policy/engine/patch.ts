// SPDX-License-Identifier: MIT
// Extracts the target paths of an apply_patch argument: structured `*** Begin Patch` patches and
// unified diffs, skipping hunk bodies by their counts.
import { posix } from 'node:path';

const STRUCTURED = ['*** Add File: ', '*** Delete File: ', '*** Update File: ', '*** Move to: '];

/** The patch text of a request: the first string of `patch`, `diff`. */
export function patchText(args: Record<string, unknown>): string {
  for (const key of ['patch', 'diff']) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return '';
}

function stripPrefix(path: string): string {
  return path.startsWith('a/') || path.startsWith('b/') ? path.slice(2) : path;
}

/** Every target path named by the patch, in order, de-duplicated. */
export function parsePatchPaths(text: string): string[] {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = body.split(/\r?\n/);
  const out: string[] = [];
  const add = (path: string) => {
    const trimmed = path.trim();
    if (trimmed !== '' && trimmed !== '/dev/null' && !out.includes(trimmed)) out.push(trimmed);
  };
  if (body.trimStart().startsWith('*** Begin Patch')) {
    for (const line of lines) {
      const marker = STRUCTURED.find((m) => line.startsWith(m));
      if (marker !== undefined) add(line.slice(marker.length).replace(/\\/g, '/'));
    }
    return out;
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk !== null) {
      let oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      let newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      while ((oldLeft > 0 || newLeft > 0) && i + 1 < lines.length) {
        const next = lines[++i] as string;
        if (next.startsWith('-')) oldLeft--;
        else if (next.startsWith('+')) newLeft--;
        else if (next.startsWith('\\')) continue;
        else {
          oldLeft--;
          newLeft--;
        }
      }
      continue;
    }
    if (line.startsWith('diff --git ')) {
      for (const field of line.slice('diff --git '.length).trim().split(/\s+/)) add(stripPrefix(field));
    } else if (line.startsWith('--- ') || line.startsWith('+++ ')) {
      const field = line.slice(4).trim().split(/\s+/)[0] ?? '';
      if (field !== '/dev/null') add(stripPrefix(field));
    }
  }
  return out;
}

/** True for an absolute path or one that climbs out (`..`, `../…` after cleaning). */
export function isPatchEscape(path: string): boolean {
  if (posix.isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\')) return true;
  const cleaned = posix.normalize(path.replace(/\\/g, '/'));
  return cleaned === '..' || cleaned.startsWith('../');
}
