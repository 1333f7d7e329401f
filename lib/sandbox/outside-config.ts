// SPDX-License-Identifier: MIT
// The git configs outside every write root (the user's global and system config and what they
// include) are read before every run (git-guard.ts). Only the host can change them, so their
// entries are kept across the runs of this process under the stamp of the file that was read.
import { closeSync, fstatSync, openSync, readFileSync, statSync, type BigIntStats } from 'node:fs';

import { parseGitConfig, type ConfigEntry } from './git-config.js';

/**
 * Configs outside every write root (the user's global and system config, what they include), by
 * path: the stamp (dev, inode, size, mtime, ctime) of the file that was read, and its entries.
 * Only the host changes these files, and they are read on every run: while a stat of the path gives
 * the same stamp, the same unchanged file is there (a write sets mtime and ctime to the current
 * time, no system call sets a ctime back), so its entries are given again without a read. A stamp
 * is kept only when the file was last changed more than CONFIG_RACY_NS before it was read, so a
 * later change lands on a later clock tick and gives another stamp.
 */
const outsideConfigs = new Map<string, { stamp: string; entries: ConfigEntry[] | undefined }>();
const OUTSIDE_CONFIGS_KEPT = 32;
const CONFIG_RACY_NS = 2_000_000_000n;

/** The wall clock the settled rule reads (ns); tests move it to keep a file they just wrote. */
export const outsideConfigClock = { now: (): bigint => BigInt(Date.now()) * 1_000_000n };

/** How often an outside config was read and how often its entries were given again (tests count them). */
export const outsideConfigCounts = { read: 0, reused: 0 };

function stampOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** A config file outside every write root: its entries, or undefined when it cannot be read. */
export function readOutsideConfig(path: string): ConfigEntry[] | undefined {
  const name = Buffer.from(path, 'latin1');
  const known = outsideConfigs.get(path);
  if (known !== undefined) {
    let now: BigIntStats | undefined;
    try {
      now = statSync(name, { bigint: true, throwIfNoEntry: false });
    } catch {
      now = undefined;
    }
    if (now !== undefined && stampOf(now) === known.stamp) {
      outsideConfigCounts.reused++;
      return known.entries;
    }
    outsideConfigs.delete(path);
  }
  let fd: number;
  try {
    fd = openSync(name, 'r');
  } catch {
    return undefined;
  }
  let entries: ConfigEntry[] | undefined;
  try {
    // The stamp and the bytes of the same open file.
    const st = fstatSync(fd, { bigint: true });
    entries = parseGitConfig(readFileSync(fd).toString('latin1'));
    outsideConfigCounts.read++;
    const settled = outsideConfigClock.now() - CONFIG_RACY_NS;
    if (st.isFile() && st.mtimeNs < settled && st.ctimeNs < settled) {
      if (outsideConfigs.size >= OUTSIDE_CONFIGS_KEPT) outsideConfigs.delete(outsideConfigs.keys().next().value as string);
      outsideConfigs.set(path, { stamp: stampOf(st), entries });
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  return entries;
}
