// SPDX-License-Identifier: MIT
// The gitlinks (submodule entries, mode 160000) of a git index file: host `git status`, `diff`
// and `commit` enter every populated gitlink of the index and run git there, so these are the
// nested repositories whose config and hooks matter. Reads index versions 2-4 with SHA-1 or
// SHA-256 object names; a file it cannot read is one git cannot read either.

import { join } from 'node:path';

import { inspect, readSmall } from './beneath.js';

/** Largest index read for gitlinks (a 64 MB index is a repository of about half a million files). */
export const MAX_INDEX_BYTES = 64 << 20;

const HEADER = 12;
/** ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each). */
const STAT_BYTES = 40;

export interface IndexLinks {
  /** Worktree-relative paths of gitlink entries, as byte strings. */
  gitlinks: string[];
  /** The shared index (split index) this one extends: its gitlinks count too. */
  sharedIndex?: string;
}

/** Gitlinks of an index, or undefined when the bytes are not an index git would read. */
export function indexGitlinks(buf: Buffer): IndexLinks | undefined {
  return parseWith(buf, 20) ?? parseWith(buf, 32);
}

function parseWith(buf: Buffer, hashBytes: number): IndexLinks | undefined {
  if (buf.length < HEADER + hashBytes || buf.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashBytes;
  const gitlinks: string[] = [];
  let pos = HEADER;
  let previous = '';
  for (let i = 0; i < count; i++) {
    const start = pos;
    if (pos + STAT_BYTES + hashBytes + 2 > end) return undefined;
    const mode = buf.readUInt32BE(pos + 24);
    pos += STAT_BYTES + hashBytes;
    const flags = buf.readUInt16BE(pos);
    pos += 2;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      pos += 2;
    }
    let name: string;
    if (version === 4) {
      let strip = 0;
      let c: number;
      let guard = 0;
      do {
        if (pos >= end || ++guard > 9) return undefined;
        c = buf[pos++] as number;
        strip = guard === 1 ? c & 127 : ((strip + 1) * 128) + (c & 127);
      } while (c & 128);
      const nul = buf.indexOf(0, pos);
      if (nul < 0 || nul >= end || strip > previous.length) return undefined;
      name = previous.slice(0, previous.length - strip) + buf.toString('latin1', pos, nul);
      pos = nul + 1;
    } else {
      const nul = buf.indexOf(0, pos);
      if (nul < 0 || nul >= end) return undefined;
      name = buf.toString('latin1', pos, nul);
      // Entries are NUL-padded to a multiple of 8 bytes (at least one NUL).
      pos = start + ((pos - start + (nul - pos) + 8) & ~7);
    }
    previous = name;
    if ((mode >>> 12) === 0o16) gitlinks.push(name);
  }
  const out: IndexLinks = { gitlinks };
  // Extensions: 4-byte signature, 4-byte size. "link" names the shared index of a split index.
  while (pos + 8 <= end) {
    const sig = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    if (pos + 8 + size > end) return undefined;
    if (sig === 'link' && size >= hashBytes) out.sharedIndex = buf.toString('hex', pos + 8, pos + 8 + hashBytes);
    pos += 8 + size;
  }
  return pos === end ? out : undefined;
}

/**
 * Gitlinks per index identity (dev:ino:size:mtime:ctime), so a large index is parsed once, not at
 * every run: git replaces an index by renaming a new file over it (a new inode), and no process
 * can set a ctime, so an unchanged stamp is an unchanged file.
 */
const gitlinkMemo = new Map<string, string[]>();
const GITLINK_MEMO_LIMIT = 32;

/** Gitlink paths of a git dir's index (and of its shared index, for a split index). */
export function readGitlinks(gitDir: string): string[] {
  const stamp = inspect(join(gitDir, 'index')).stamp;
  const key = `${gitDir}\0${stamp}`;
  const known = stamp === '' ? undefined : gitlinkMemo.get(key);
  if (known !== undefined) return known;
  const links = parseGitlinks(gitDir);
  if (stamp !== '' && inspect(join(gitDir, 'index')).stamp === stamp) {
    if (gitlinkMemo.size >= GITLINK_MEMO_LIMIT) gitlinkMemo.delete(gitlinkMemo.keys().next().value as string);
    gitlinkMemo.set(key, links);
  }
  return links;
}

function parseGitlinks(gitDir: string): string[] {
  const buf = readSmall(join(gitDir, 'index'), MAX_INDEX_BYTES);
  if (buf === undefined) return [];
  const parsed = indexGitlinks(buf);
  if (parsed === undefined) return [];
  const out = [...parsed.gitlinks];
  if (parsed.sharedIndex !== undefined) {
    const shared = readSmall(join(gitDir, `sharedindex.${parsed.sharedIndex}`), MAX_INDEX_BYTES);
    if (shared !== undefined) out.push(...(indexGitlinks(shared)?.gitlinks ?? []));
  }
  // A path git would never check out (absolute, dot segments) is not entered by it either.
  return out.filter((link) => link !== '' && !link.startsWith('/') && !link.split('/').some((part) => part === '' || part === '.' || part === '..'));
}
