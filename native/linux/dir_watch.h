// SPDX-License-Identifier: MIT
// Change notification for directories the host side remembers something about, Linux only
// (inotify): the repository scan's listings (git_scan.cc) and the watched looks at write roots
// (watched_looks.cc), each through a queue of its own. A remembered answer whose directory has
// had no event since it was taken is still exact. Events are queued by the kernel inside the call
// that changes the directory, on whatever mount or namespace it came through, so once every
// process of a sandbox is gone its changes are in the queue; a full queue or a changed mount table
// counts as every directory changed. Elsewhere (and when inotify is unavailable) nothing is
// watched and every remembered directory is looked at as before. No napi here.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace dir_watch {

#if defined(__linux__)
// One inotify queue, and this process's mount table watched beside it.
class Queue {
 public:
  // Watches the directory open as `fd` (any kind of descriptor) if its filesystem reports every
  // change through inotify and the watch budget allows: the watch id, else -1. Add the watch
  // before reading the directory's stamp or entries, so that no change after them goes unreported.
  int Add(int fd);
  // Stops watching `wd` (its directory was replaced or forgotten).
  void Remove(int wd);
  // Takes every queued event, calling each(wd, mask, name) ("" for an event on the directory
  // itself); returns false when anything may have changed unreported (a full queue, a mount table
  // change, a read error): then nothing remembered may be trusted.
  template <typename Each>
  bool Drain(Each&& each) {
    return DrainWith(&each, [](void* ctx, int wd, uint32_t mask, const char* name) {
      (*static_cast<Each*>(ctx))(wd, mask, name);
    });
  }
  // Drops every watch (what was remembered starts over).
  void Reset();
  // The inotify descriptor (-1 before the first watch), and a count bumped before any read that
  // takes events from it (and at a reset): a process that saw the queue empty and the count
  // unchanged since a drain knows no event queued meanwhile was taken unseen. Read without the
  // memo's lock by a sandbox's first process (see mount_templates.h).
  int fd() const { return fd_; }
  const std::atomic<uint64_t>* takes() const { return &takes_; }

 private:
  bool Ready();
  bool DrainWith(void* ctx, void (*each)(void*, int, uint32_t, const char*));
  int fd_ = -1;
  // /proc/self/mountinfo: poll() reports a change of this process's mount table (a filesystem
  // mounted over a watched directory changes what a path leads to without any inotify event).
  int mounts_ = -1;
  // Watches taken and not yet reported removed (adding one to a watched directory returns its id).
  std::unordered_set<int> live_;
  size_t budget_ = 0;
  bool failed_ = false;
  std::atomic<uint64_t> takes_{0};
};

// The repository scan's queue (git_scan.cc): the ids of watches that saw a change are appended
// to `changed`.
int Add(int fd);
void Remove(int wd);
bool Drain(std::vector<int>* changed);
void Reset();
#else
inline int Add(int) { return -1; }
inline void Remove(int) {}
inline bool Drain(std::vector<int>*) { return false; }
inline void Reset() {}
#endif

}  // namespace dir_watch
