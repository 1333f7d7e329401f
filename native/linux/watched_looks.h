// SPDX-License-Identifier: MIT
// InspectMany (binding/fs_beneath.h) with its answers kept across the calls of this process and
// given again without a look while inotify (linux/dir_watch.h) reports no change that could alter
// them. Only two kinds of answer are kept: "missing" below a watched directory and "directory"
// for a watched directory (its stamp moves only with its entries and attributes, which queue an
// event); a file's answer (its content can change through a shared mapping with no event) is
// looked at every time. The same for a write root's listing (names and kinds of its entries, and
// the kind of its first subdirectories' .git). Linux only; no napi here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "binding/fs_beneath.h"
#include "posix/root_walk.h"

namespace watched_looks {

// The answers fs_beneath::InspectMany gives for `paths`; *answered: how many came from the memo.
std::vector<fs_beneath::Info> InspectMany(const std::vector<std::string>& paths, size_t* answered);

// The listings root_walk::ListRoots gives for `paths`, one kept while its directory, and each
// subdirectory whose .git it holds, reported no change; *answered: how many were kept ones.
std::vector<root_walk::Listing> ListRoots(const std::vector<std::string>& paths, size_t max_looks,
                                          size_t* answered);

// A watch set (watch_sets.h) over `dirs` and `entries`, taking the memo's watches: its id, or -1
// when one of them cannot be watched or kMaxSets are live.
int MakeSet(const std::vector<std::string>& dirs, const std::vector<std::string>& entries);
// Takes the queued events, then a set like `id` (watch_sets::Registry::Again), or -1.
int SetAgain(int id);
// Takes the queued events, then whether nothing the set asks about changed since it was made.
bool SetQuiet(int id);
void ReleaseSet(int id);

// SetQuiet, and with it (in the same hold of the memo's lock, after the events were taken) where a
// process that must know of any event queued later looks: the queue's descriptor and its count of
// takes (dir_watch::Queue::takes) with its value now.
struct QueueMark {
  int fd = -1;
  const std::atomic<uint64_t>* takes = nullptr;
  uint64_t seen = 0;
};
bool SetQuietMarked(int id, QueueMark* mark);

}  // namespace watched_looks
