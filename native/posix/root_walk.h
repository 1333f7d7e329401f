// SPDX-License-Identifier: MIT
// One look at many write roots while a plan is resolved (fsListRoots): each root opened whole
// without following any link, listed, and, for its first subdirectories, the kind of their `.git`.
// Plain C++ (no napi); the glue is posix/fs_glue_posix.cc.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace root_walk {

// What one root gave: an errno when it could not be opened as a directory reached without any
// link (ELOOP or ENOTDIR for a link on the way, ENOENT, ...), else its listing.
struct Listing {
  int err = 0;
  // Every entry but "." and "..", sorted by byte (as libuv's scandir gives them), each as
  // <kind><git><name>/, kind one of d f l o (no link followed), git the kind of <name>/.git for
  // a subdirectory among the first `max_looks` entries (other than .git and node_modules): d, f,
  // m (missing), o (link or other), x (could not be looked at); '-' for every other entry.
  std::string entries;
};

// Listing of each absolute path, in the order of `paths`; at most one directory open at a time.
std::vector<Listing> ListRoots(const std::vector<std::string>& paths, size_t max_looks);

}  // namespace root_walk
