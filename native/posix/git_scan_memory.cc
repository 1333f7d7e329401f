// SPDX-License-Identifier: MIT
// The scan's memory between walks (see git_scan_memory.h).
#include "posix/git_scan_memory.h"

#include "linux/dir_watch.h"

namespace git_scan {
namespace memory {

std::unordered_map<std::string, Listing>& Memory() {
  static auto* memory = new std::unordered_map<std::string, Listing>();
  return *memory;
}

std::unordered_map<int, std::string>& Watched() {
  static auto* watched = new std::unordered_map<int, std::string>();
  return *watched;
}

void Forget() {
  Memory().clear();
  Watched().clear();
  dir_watch::Reset();
}

void DropSummaries(const std::string& path) {
  std::string at = path;
  for (;;) {
    auto known = Memory().find(at);
    if (known != Memory().end()) known->second.summary.reset();
    size_t slash = at.rfind('/');
    if (slash == std::string::npos) return;
    at.resize(slash);
  }
}

void TakeChanges() {
  std::vector<int> changed;
  bool complete = dir_watch::Drain(&changed);
  // With no watch taken, nothing is fresh and no summary was made (each needs its listings
  // watched).
  if (!complete && !Watched().empty()) {
    for (auto& [path, listing] : Memory()) {
      listing.fresh = false;
      listing.summary.reset();
    }
  }
  for (int wd : changed) {
    auto watched = Watched().find(wd);
    if (watched == Watched().end()) continue;
    // Whichever listing the watch now belongs to: its path's trees are not vouched for.
    DropSummaries(watched->second);
    auto known = Memory().find(watched->second);
    if (known != Memory().end() && known->second.wd == wd) known->second.fresh = false;
  }
}

int64_t Nanos(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Stamp StampOf(const struct stat& st) {
#if defined(__APPLE__)
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          Nanos(st.st_mtimespec), Nanos(st.st_ctimespec)};
#else
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), Nanos(st.st_mtim),
          Nanos(st.st_ctim)};
#endif
}

}  // namespace memory
}  // namespace git_scan
