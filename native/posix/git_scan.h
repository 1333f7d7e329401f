// SPDX-License-Identifier: MIT
// Finds every git repository inside a write root before a run, so that the host side can guard
// the files through which host git would run code (config, hooks, pointer files). Walks with
// directory descriptors and O_NOFOLLOW, never recursing on the C stack. A directory's listing is
// remembered with its identity and times (dev, ino, mtime, ctime): while those are unchanged its
// entries are too (a process can set mtime but not ctime), so a repeated scan costs one fstatat
// per directory: an unchanged directory is not opened, its subdirectories are looked up by path
// from the nearest opened ancestor (see Frame in git_scan.cc). Where directories can be watched
// (linux/dir_watch.h), one that reported no change since its stamp was checked, below a parent
// whose listing is unchanged too, is not even stat'ed, and a tree of such directories walked once
// that way is answered whole while none of them reports a change (Summary in git_scan.cc). The same
// walk reports the entries whose names the caller asks for (agent and editor configs in
// subdirectories), at no extra look. No napi here (addon.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace git_scan {

struct Result {
  // Directories holding a `.git` entry (of any kind) and directories that are git dirs themselves
  // (HEAD, objects and refs: a bare repository; objects or refs may be links or files, which git
  // accepts too); absolute byte strings.
  std::vector<std::string> worktrees;
  std::vector<std::string> git_dirs;
  // Entries (of any kind) named as Wanted asks, below no directory it skips; absolute byte strings.
  std::vector<std::string> named;
  uint64_t dirs = 0;
  // Of those, the directories answered by the kept summary of an unchanged tree, each not looked
  // at (tests count them).
  uint64_t summarised = 0;
  // A limit was reached (directories, depth, repositories or named entries): the answer is
  // incomplete.
  bool truncated = false;
  int err = 0;
};

// Which entries the walk reports besides repositories: those named `exact`, or ending in one of
// `suffixes`, in directories below none named in `skip` (whose entries are not reported; they
// are still walked for repositories). Names compare as NameIs does (case-folded on macOS).
struct Wanted {
  std::vector<std::string> exact;
  std::vector<std::string> suffixes;
  std::vector<std::string> skip;
  uint64_t max = 0;
  bool operator==(const Wanted& o) const {
    return exact == o.exact && suffixes == o.suffixes && skip == o.skip;
  }
};

// Whether directories listed from now on take a watch (linux/dir_watch.h; on by default). A process
// that runs one sandbox turns it off: taking a watch costs more than its one later scan saves by
// it (that scan reads each remembered directory's stamp instead, as where nothing can be watched).
void SetWatching(bool on);

// Scans `root` (absolute, walked from "/" without following links). Not entered: `.git`
// directories and git dirs whose objects/ and refs/ are real directories (the caller guards their
// insides), links, unreadable directories (host git cannot enter them either). With `busy`, a scan
// that would wait for another thread's scan does not: it sets *busy and returns an empty Result.
Result Scan(const std::string& root, uint64_t max_dirs, uint64_t max_repos, const Wanted& wanted,
            bool* busy = nullptr);

}  // namespace git_scan
