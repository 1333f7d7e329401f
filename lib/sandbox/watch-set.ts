// SPDX-License-Identifier: MIT
// Watch sets: whether anything that could change what some paths lead to has happened since a
// moment, answered from inotify (native/linux/watch_sets.h; Linux only). A memo or a prepared
// sandbox that depends on paths makes a set BEFORE it looks at them (a change between a look and
// the watch would go unseen) and trusts what it kept only while the set is quiet. Counted: entries
// made, removed, renamed or given other attributes in a watched directory (or at a watched entry,
// or on the way to either), a mount-table change and lost events; not a file's content written (a
// memo of a file's content must read or stamp the file every time).
import { loadNative } from '../native/load.js';
import type { NativeBinding } from '../native/types.js';
import { toBytes } from './beneath.js';

export interface WatchSet {
  /** True only when nothing the set watches has changed since it was made (false once released). */
  quiet(): boolean;
  /**
   * A new set over the same paths, made without looking at them again; only while this one is
   * quiet (then the paths still lead where they did), else undefined.
   */
  again(): WatchSet | undefined;
  /** Frees the set: the live sets are bounded. */
  release(): void;
}

type Verbs = Required<Pick<NativeBinding, 'fsWatchSet' | 'fsWatchSetAgain' | 'fsWatchSetQuiet' | 'fsWatchSetRelease'>>;

let verbs: Verbs | null | undefined;

function watchVerbs(): Verbs | null {
  if (verbs !== undefined) return verbs;
  try {
    const binding = loadNative();
    const { fsWatchSet, fsWatchSetAgain, fsWatchSetQuiet, fsWatchSetRelease } = binding;
    verbs = fsWatchSet === undefined || fsWatchSetAgain === undefined || fsWatchSetQuiet === undefined || fsWatchSetRelease === undefined ? null : { fsWatchSet, fsWatchSetAgain, fsWatchSetQuiet, fsWatchSetRelease };
  } catch {
    verbs = null;
  }
  return verbs;
}

function wrap(v: Verbs, id: number): WatchSet | undefined {
  if (typeof id !== 'number' || id < 0) return undefined;
  let released = false;
  return {
    quiet: () => !released && v.fsWatchSetQuiet(id),
    again: () => (released ? undefined : wrap(v, v.fsWatchSetAgain(id))),
    release: () => {
      if (released) return;
      released = true;
      v.fsWatchSetRelease(id);
    },
  };
}

function make(dirs: readonly string[], entries: readonly string[] | undefined): WatchSet | undefined {
  const v = watchVerbs();
  return v === null ? undefined : wrap(v, v.fsWatchSet(dirs.map(toBytes), entries?.map(toBytes)));
}

/**
 * A set over directories (absolute, no link on the way): every entry of each counts, and the entry
 * leading down to it from every directory above it. Undefined where the platform, the watch budget
 * or a directory's filesystem cannot watch them all, or when one is missing: then remember nothing.
 */
export function watchDirs(dirs: readonly string[]): WatchSet | undefined {
  return make(dirs, undefined);
}

/**
 * A set over paths as entries: each path's own entry counts (made, removed, renamed over or away,
 * attributes), not what is inside it, and the entry leading down to it from every directory above
 * it. A path may be missing (the deepest directory on its way is watched for the name leading
 * down) or a link to a path without links; undefined as for watchDirs, or for another link.
 */
export function watchEntries(paths: readonly string[], dirs: readonly string[] = []): WatchSet | undefined {
  return make(dirs, paths);
}
