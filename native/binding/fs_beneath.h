// SPDX-License-Identifier: MIT
// Host-side file work inside write roots, with directory descriptors (handles) only: every path is
// walked one component at a time from the file system's root, each opened relative to the one
// before without following a link, so a link the sandboxed command left anywhere on the way stops
// the walk instead of leading it elsewhere. Nothing here throws or recurses on the C stack: a tree
// of any depth or size (beyond PATH_MAX, symlink loops, names with newlines) ends in a result. No
// napi here; the glue is binding/fs_verbs_glue.cc. Implemented twice: native/posix/ (openat with
// O_NOFOLLOW; Linux, macOS) and native/windows/ (NtCreateFile relative to the directory handle
// with FILE_OPEN_REPARSE_POINT, refusing every reparse point on the way). Error numbers are the
// platform's errno values (on Windows the C runtime's, which are os.constants.errno there).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fs_beneath {

enum class Kind : char {
  kMissing = 'm',
  kFile = 'f',
  kDir = 'd',
  kLink = 'l',
  kOther = 'o',
  kError = 'e'
};

struct Info {
  Kind kind = Kind::kError;
  int err = 0;
  uint64_t size = 0;
  // "dev:ino:size:mtime_ns:ctime_ns": equal stamps mean the entry was not changed (ctime cannot be
  // set by a process, so a rewrite and an undo of mtime still differ).
  std::string stamp;
};

// Paths are byte strings: `root` absolute, `rel` relative to it ("" for the root itself), with no
// empty, "." or ".." component (refused with EINVAL). On Windows they are UTF-8, `root` a drive
// (C:\) or share (\\server\share\) with or without components, separators '\' or '/'.
Info Inspect(const std::string& root, const std::string& rel);

// Inspect of each absolute path (no empty, "." or ".." component), as the calls one by one would
// answer: paths sharing a parent directory share one no-follow open of it, parents sharing
// ancestors share their opens too (a pass holds the directories on the way to the current parent,
// a few dozen levels at most), and the paths below a parent that cannot be opened share its answer
// (missing for ENOENT, else an error). The order of the answers is the order of `paths`.
std::vector<Info> InspectMany(const std::vector<std::string>& paths);

// A regular file of at most `max` bytes (O_NOFOLLOW|O_NONBLOCK: never a FIFO or device).
bool ReadFile(const std::string& root, const std::string& rel, size_t max, std::string* out,
              int* err);

// At most `max` entries of a directory (not "." or ".."), each with its kind (no link followed).
bool List(const std::string& root, const std::string& rel, size_t max,
          std::vector<std::pair<std::string, Kind>>* out, int* err);

struct RemoveResult {
  bool ok = true;
  // The first failure (errno) and how many entries were removed.
  int err = 0;
  uint64_t removed = 0;
};

// Removes the entry at rel (a whole directory tree included) without following any link and
// without leaving the file system of its parent. A missing entry is ok with removed = 0.
RemoveResult Remove(const std::string& root, const std::string& rel);

// Puts a new regular file with `data` (permission bits `mode`) at rel, after removing whatever is
// there (a link or tree included, nothing followed); false and *err when it could not.
bool Replace(const std::string& root, const std::string& rel, const std::string& data,
             unsigned mode, int* err);

// Makes a directory (mode `mode`) at rel, or a symlink to *link_target when it is given, in the
// parent reached without following any link; an existing directory is fine for the first, nothing
// existing is for the second. False and *err when it could not.
bool Make(const std::string& root, const std::string& rel, const std::string* link_target,
          unsigned mode, int* err);

}  // namespace fs_beneath
