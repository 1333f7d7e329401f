// SPDX-License-Identifier: MIT
// NativeBinding: the hand-maintained mirror of what native/binding/addon.cc exports.

/** One capability the native probe tried for real. */
export interface NativeFact {
  attempted: boolean;
  ok: boolean;
  /** errno of the failing POSIX call (0 when it succeeded, was not tried, or was a Windows API). */
  errno: number;
  /** A failed Windows API's Win32 error code (never stored as an errno: the two overlap). */
  win32Error?: number;
  /** A failed Windows API's HRESULT. */
  hresult?: number;
  /** The call that failed, when one did. */
  syscall?: string;
  /** A numeric result, e.g. the Landlock ABI version. */
  value: number;
}

export interface NativeProbe {
  platform: string;
  arch: string;
  release: string;
  /** Effective uid, or -1 where that is not meaningful. */
  uid: number;
  facts: Record<string, NativeFact>;
}

/** What the init helper and the kernel said about a finished sandbox. */
export interface NativeExit {
  exitCode: number | null;
  signal: number | null;
  /** errno of a failed execvp of the command inside the sandbox, 0 otherwise. */
  execErrno: number;
  /** False when the sandbox was killed before the command finished. */
  commandExited: boolean;
  /** Packets the sandbox's network namespace had no route for while the command ran (Linux; absent when none). */
  noRouteSends?: number;
  /** The private /tmp (size-capped tmpfs) was full when every other process was gone (Linux). */
  tmpFull?: boolean;
  /** The same for the private /dev/shm. */
  shmFull?: boolean;
  /** The process cap was the PID namespace's pid_max and the init's probe fork was refused at it. */
  processCapHit?: boolean;
  /** Indices (in mount order) of the file masks a process of the sandbox opened (Linux; absent when none). */
  maskedReads?: number[];
  /**
   * Output of a stream spawned with 'capture' (UTF-8 decoded): all of it, or past `maxBuffer` its
   * head (cut on a character boundary), with the tail in `stdoutTail`/`stderrTail`.
   */
  stdout?: string;
  stderr?: string;
  /** Bytes the captured stream produced in all. */
  stdoutBytes?: number;
  stderrBytes?: number;
  /** Past `maxBuffer`: the kept end of the stream (starts on a character boundary). */
  stdoutTail?: string;
  stderrTail?: string;
  /** A write to the spill file failed. */
  spillFailed?: boolean;
  /** The captured stream that went over `maxBuffer` first; the sandbox was killed. */
  overflow?: 'stdout' | 'stderr';
}

/** Parent-side descriptors of the streams spawned with 'pipe'. */
export interface NativeSpawned {
  pid: number;
  stdin?: number;
  stdout?: number;
  stderr?: number;
}

/** What preparePolicy returns: the addon's parsed copy of a policy's mounts and Landlock rules. */
export type PreparedPolicy = { readonly __preparedPolicy: unique symbol };

/** What prepareWarm returns: the addon's parsed copy of a spec, usable only by spawnWarm. */
export type PreparedWarmSpec = { readonly __preparedWarmSpec: unique symbol };

export interface NativeBinding {
  probe(): Promise<NativeProbe>;
  probeSync(): NativeProbe;
  spawn(spec: object, onExit: (exit: NativeExit) => void): NativeSpawned;
  /**
   * `spawn` with the clone and the sandbox's setup on the addon's spawn threads: the spec is converted and
   * the pipes made within the call, the rest does not hold the JavaScript thread (Linux).
   */
  spawnAsync?(spec: object, onExit: (exit: NativeExit) => void): Promise<NativeSpawned>;
  /**
   * Converts a kept policy's mounts and Landlock rules once: the handle goes in a cold spawn's
   * spec as `linux.prepared`, in place of both fields (Linux's spec; absent from older builds).
   */
  preparePolicy?(policy: { mounts: readonly unknown[]; landlockRules: readonly unknown[] }): PreparedPolicy;
  /** Converts a spec once, for the refills of a prewarm pool (an opaque handle for spawnWarm). */
  prepareWarm(spec: object): PreparedWarmSpec;
  /**
   * A prewarmed sandbox set up on the addon's spawn threads; its init waits for one `launch`. With
   * `cgroupProcsFd` (kept open until the promise settles), its first process joins that pids cgroup
   * before anything else, as a cold start's does.
   */
  spawnWarm(spec: object | PreparedWarmSpec, onExit: (exit: NativeExit) => void, cgroupProcsFd?: number): Promise<{ pid: number }>;
  /**
   * Linux: mkdir(dir, 0755) and `${max}\n` into its pids.max, off the caller's thread and the libuv
   * pool; resolves with 0 or the errno of the step that failed (a directory it made is removed).
   */
  cgroupMake?(dir: string, max: number): Promise<number>;
  /** Linux: rmdir(dir) as cgroupMake runs; resolves with 0 or its errno. */
  cgroupRemove?(dir: string): Promise<number>;
  /**
   * Linux: the environment as process.env on the main thread gives it, in one walk, as one string
   * (name, value, name, value, ... joined by NULs); null when not called on the process's first
   * thread.
   */
  environ?(): string | null;
  /**
   * Linux, for tests: the mount templates built and the starts of a resting policy made without
   * one since the process started, and the templates held now with their descriptors (a bounded
   * cache, which the bench's count of leaked descriptors leaves out) and how many a sandbox uses.
   */
  mountTemplateCounts?(): { built: number; rested: number; held: number; fds: number; busy: number };
  /** Hands a command to a prewarmed sandbox; null when it is gone or already used. */
  launch(pid: number, launch: object): NativeSpawned | null;
  kill(pid: number, signal: number): boolean;
  activeCount(): number;
  /** The Landlock ABI the kernel offers (0 when absent), from one system call. */
  landlockAbi(): number;
  /**
   * Windows only: applies (`apply`) or strips (`revert`) a container's ACL plan, or deletes its
   * profile (`delete-profile`), on the thread pool. The SID is derived from `container` unless
   * `sid` (an AppContainer SID, S-1-15-2-...) is given. Resolves with the DACLs changed.
   */
  windowsAcl?(request: { op: 'apply' | 'revert' | 'delete-profile'; container: string; sid?: string; kinds: string[]; paths: string[]; redo: boolean }): Promise<{ changed: number }>;
  /**
   * macOS only: the pids of the user's processes under the one seatbelt profile that allows
   * reading `allowedPath` and denies reading `deniedPath` (a run's mark), and how many listed
   * processes could not be told apart (a check failed; `undecidedErrno` is the first errno).
   */
  macosRunMembers?(allowedPath: string, deniedPath: string): { members: number[]; undecided: number; undecidedErrno: number };
  /** Calls `onHangup` once when the reader of `fd` has gone; false where that cannot be watched. */
  watchHangup(fd: number, onHangup: () => void): boolean;
  /**
   * Descriptor-relative file verbs for host-side checks of write roots (POSIX; Windows all but
   * fsScanGit). `root` is an absolute path and `rel` a relative one without `.`/`..`, both byte
   * strings (one char code per byte); every component is opened with O_NOFOLLOW (Windows: from the
   * drive or share root, relative to the directory handle before it, a reparse point refused).
   * Errno values are the platform's. They never throw (null on an internal fault).
   */
  fsInspect?(root: string, rel: string): NativeFsInfo | null;
  /**
   * fsInspect of each absolute path at once (paths sharing a parent share its no-follow open): per
   * path its kind letter followed by its stamp; null when an argument is not a byte string.
   */
  fsInspectMany?(paths: string[]): string[] | null;
  /**
   * Linux: fsInspectMany's answers, some kept from earlier calls while inotify reports no change
   * that could alter them, followed by how many were kept ones.
   */
  fsInspectManyWatched?(paths: string[]): Array<string | number> | null;
  /**
   * Linux: a watch set (native/linux/watch_sets.h) over `dirs` (every entry of each counts) and
   * `entries` (only the entry itself counts: made, removed, renamed over or away, attributes
   * changed; an entry may be missing, or a link to a path without links), and through them the
   * entry leading down from every directory on the way from "/". The watches are the watched
   * looks' (same inotify queue and budget). Its id >= 0, or -1 when one of them cannot be watched
   * (budget, a filesystem whose changes may bypass inotify, not a directory, missing, another link)
   * or 64 sets are live: then the caller must not remember anything on its strength.
   */
  fsWatchSet?(dirs: string[], entries?: string[]): number;
  /**
   * A new set over the same watches as the set `id`, made only while that set is quiet (what
   * fsWatchSet of the same paths would watch, without looking at them again); else -1.
   */
  fsWatchSetAgain?(id: number): number;
  /**
   * Takes the queued events, then true only when nothing the set asks about changed since it was
   * made: no event on its entries or its directories' entries (file content writes are not
   * events), no mount-table change, no events lost. False for a released or unknown id.
   */
  fsWatchSetQuiet?(id: number): boolean;
  /** Frees the set (its watches stay the watched looks'). */
  fsWatchSetRelease?(id: number): void;
  /** A regular file of at most `max` bytes, or the errno why not. */
  fsRead?(root: string, rel: string, max: number): Buffer | { errno: number } | null;
  /** At most `max` entries as [name (byte string), kind], or the errno why not. */
  fsList?(root: string, rel: string, max: number): Array<[string, NativeFsKind]> | { errno: number } | null;
  /** Removes the entry (a whole tree included) without following links or crossing mounts. */
  fsRemove?(root: string, rel: string): { ok: boolean; errno: number; removed: number } | null;
  /**
   * fsRemove on a thread of the addon's own (POSIX): the caller's thread does not wait for a large
   * tree. Never rejects (null: a fault).
   */
  fsRemoveAsync?(root: string, rel: string): Promise<{ ok: boolean; errno: number; removed: number } | null> | { kind: string; errno: number } | null;
  /** A new regular file with `data` in place of whatever is at rel (nothing followed). */
  fsReplace?(root: string, rel: string, data: Buffer, mode: number): { ok: boolean; errno: number } | null;
  /** A directory at rel (an existing one will do), or a symlink to `linkTarget` (nothing may exist there). */
  fsMake?(root: string, rel: string, mode: number, linkTarget?: string): { ok: boolean; errno: number } | null;
  /**
   * POSIX only: each absolute path (byte strings) opened as a directory without following any
   * link on the way, and listed: per path the errno why not, or its entries sorted by byte as
   * `<kind><git><name>/` (kind d f l o; git the kind of `<name>/.git` for a subdirectory among
   * the first `maxLooks` entries other than .git and node_modules: d f m o x, else `-`). Null for
   * bad arguments or an internal fault. `watched` (Linux): some listings may be kept from earlier
   * calls while inotify reports no change that could alter them, and how many follows the listings.
   */
  fsListRoots?(paths: string[], maxLooks: number, watched?: boolean): Array<string | number> | null;
  /**
   * Every repository under root: directories with a `.git`, and git dirs themselves (bare).
   * ifFree: while another thread walks, {kind: 'e', errno: EBUSY} at once instead of waiting.
   */
  fsScanGit?(root: string, rel: '', maxDirs: number, maxRepos: number, names?: readonly string[], suffixes?: readonly string[], skip?: readonly string[], maxNamed?: number, ifFree?: boolean): NativeGitScan | { kind: string; errno: number } | null;
  /**
   * fsScanGit's walk on a thread of its own: resolves with what fsScanGit would answer when the walk
   * runs (never rejects; null for an internal fault). Bad arguments may answer at once, unwrapped.
   */
  fsScanGitAsync?(root: string, rel: '', maxDirs: number, maxRepos: number, names?: readonly string[], suffixes?: readonly string[], skip?: readonly string[], maxNamed?: number): Promise<NativeGitScan | { kind: string; errno: number } | null> | { kind: string; errno: number } | null;
  /**
   * Whether the repository scan's new listings take an inotify watch (on by default); a process
   * that runs one sandbox turns it off (see SetWatching in native/posix/git_scan.h).
   */
  fsScanWatching?(on: boolean): void;
}

/** What fsScanGit found; paths are absolute byte strings. */
export interface NativeGitScan {
  worktrees: string[];
  gitDirs: string[];
  /** Entries named as asked (names, suffixes), below no directory named in skip. */
  named?: string[];
  dirs: number;
  /** Of `dirs`, those answered by the kept summary of an unchanged tree, not looked at (tests count them). */
  summarised?: number;
  truncated: boolean;
  errno: number;
}

/** m missing, f file, d directory, l symlink, o other, e error. */
export type NativeFsKind = 'm' | 'f' | 'd' | 'l' | 'o' | 'e';

export interface NativeFsInfo {
  kind: NativeFsKind;
  errno: number;
  size: number;
  /** dev:ino:size:mtime:ctime; equal stamps: the entry did not change. */
  stamp: string;
}
