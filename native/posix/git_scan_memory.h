// SPDX-License-Identifier: MIT
// What the repository scan (git_scan.h) remembers between walks: each directory's listing with its
// stamp and watch, by path, and the summaries of unchanged trees; and how a reported change or a
// new listing makes them be looked at again. Shared by every thread that loads the addon, under
// the scan's lock. No napi here.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace git_scan {
namespace memory {

struct Stamp {
  uint64_t dev = 0, ino = 0;
  int64_t mtime = 0, ctime = 0;
  bool operator==(const Stamp& o) const {
    return dev == o.dev && ino == o.ino && mtime == o.mtime && ctime == o.ctime;
  }
};

using Names = std::shared_ptr<const std::vector<std::string>>;

// What a walk found in the tree below a directory whose listings were all remembered, watched and
// unchanged (Walker::Remember): the same listings give the same walk, so while none of them
// reports a change the tree is answered whole, without a look at each directory (a workspace's
// node_modules holds tens of thousands of them). Made in one context (the caller's skip and named
// asks) and used only in the same one, and only where its depth and counts stay within the
// walk's limits (a walk that would be cut short walks it).
struct Summary {
  uint64_t dirs_below = 0;
  // The deepest frame below, counted from the directory's own.
  size_t depth = 0;
  bool skip = false;
  bool report_named = false;
  // The directory's own finds first, in the order the walk makes them.
  std::vector<std::string> worktrees, git_dirs, named;
};

// Trees smaller than this are walked (the summary would cost more than it saves), and trees with
// more finds than this are not summarised (each summary above holds copies of them).
constexpr uint64_t kMinSummaryDirs = 16;
constexpr size_t kMaxSummaryFinds = 256;
// Nor trees whose finds' paths add up to more than this: a tree the command made (hundreds of
// levels deep, with repositories at the bottom) would otherwise have every level above keep a
// copy of the same long paths.
constexpr size_t kMaxSummaryBytes = 16 * 1024;

struct Listing {
  Stamp stamp;
  // Shared with the memory: a remembered listing is walked without copying its names.
  Names subdirs = std::make_shared<const std::vector<std::string>>();
  // Its entries the caller asked for (Wanted): usually none, so usually not allocated.
  Names named;
  bool has_git = false;
  // HEAD, and objects/ and refs/ as real directories: a git dir, whose insides the caller guards.
  bool is_git_dir = false;
  // HEAD, objects and refs present but not both real directories: git still takes it for a git
  // dir when they are links to directories (it tests them with access(), which follows links) or
  // executable files, so it is reported as one; it is walked too, in case git does not.
  bool may_be_git_dir = false;
  // The inotify watch taken before the stamp was read (-1: none), and whether it has reported
  // nothing since the stamp was last found unchanged: then the listing is exact without a stat.
  int wd = -1;
  bool fresh = false;
  // The tree below, while every listing in it holds (dropped by DropSummaries).
  std::shared_ptr<const Summary> summary;
};

// The remembered listings by path, and the remembered path of each watch.
std::unordered_map<std::string, Listing>& Memory();
std::unordered_map<int, std::string>& Watched();

// Drops every listing and watch.
void Forget();

// A change at `path` (reported, or seen by a new listing): the summaries of its tree and of every
// tree it lies in no longer hold.
void DropSummaries(const std::string& path);

// Before a walk: listings whose directory reported a change (or all, when changes may have gone
// unreported) are stat'ed again before they are used, and no summary of a tree holding one is.
void TakeChanges();

int64_t Nanos(const struct timespec& ts);
Stamp StampOf(const struct stat& st);

}  // namespace memory
}  // namespace git_scan
