// SPDX-License-Identifier: MIT
// inotify watches for the repository scan's remembered directories (see dir_watch.h).
#include "linux/dir_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <unordered_set>

namespace dir_watch {
namespace {

// Every change of a directory's entries (or of their modes), and the directory itself moved,
// removed or unmounted (IN_IGNORED and IN_UNMOUNT are always reported).
constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
                           IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

// Local filesystems whose every change goes through this kernel's VFS, which queues the events.
// Network and FUSE filesystems change behind it, and an overlay's layers can be changed without
// its own inodes hearing of it: those are stat'ed at every scan.
bool Notifies(int fd) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<uint64_t>(fs.f_type)) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0x01021994:  // tmpfs
    case 0xF2F52010:  // f2fs
      return true;
    default:
      return false;
  }
}

struct State {
  int fd = -1;
  // /proc/self/mountinfo: poll() reports a change of this process's mount table (a filesystem
  // mounted over a watched directory changes what a path leads to without any inotify event).
  int mounts = -1;
  // Watches taken and not yet reported removed (adding one to a watched directory returns its id).
  std::unordered_set<int> live;
  size_t budget = 0;
  bool failed = false;
};

State& Get() {
  static State state;
  return state;
}

// The share of the user's inotify watches the scan may take (editors and build tools need theirs).
size_t Budget() {
  size_t budget = 8192 / 4;
  FILE* f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");
  if (f != nullptr) {
    long max = 0;
    if (fscanf(f, "%ld", &max) == 1 && max > 0)
      budget = static_cast<size_t>(max / 4 < 65536 ? max / 4 : 65536);
    fclose(f);
  }
  return budget;
}

bool Ready() {
  State& s = Get();
  if (s.failed) return false;
  if (s.fd >= 0) return true;
  s.mounts = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  s.fd = s.mounts < 0 ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (s.fd < 0) {
    if (s.mounts >= 0) close(s.mounts);
    s.mounts = -1;
    s.failed = true;
    return false;
  }
  s.budget = Budget();
  s.live.clear();
  return true;
}

}  // namespace

int Add(int fd) {
  State& s = Get();
  if (!Ready() || s.live.size() >= s.budget || !Notifies(fd)) return -1;
  // The descriptor's own directory, whatever its path leads to now.
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int wd = inotify_add_watch(s.fd, path, kMask);
  if (wd < 0) return -1;
  s.live.insert(wd);
  return wd;
}

void Remove(int wd) {
  State& s = Get();
  // Counted down when its IN_IGNORED event is read.
  if (s.fd >= 0 && wd >= 0) inotify_rm_watch(s.fd, wd);
}

bool Drain(std::vector<int>* changed) {
  State& s = Get();
  if (!Ready()) return false;
  bool complete = true;
  // The mount table reports a change as POLLERR | POLLPRI, once per change (it is always readable).
  struct pollfd mounts = {s.mounts, POLLPRI, 0};
  if (poll(&mounts, 1, 0) < 0 || (mounts.revents & (POLLERR | POLLPRI | POLLNVAL)) != 0)
    complete = false;
  alignas(struct inotify_event) char buf[65536];
  for (;;) {
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno != EAGAIN) complete = false;
      break;
    }
    if (n == 0) {
      complete = false;
      break;
    }
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(buf + at);
      if ((event->mask & IN_Q_OVERFLOW) != 0 || event->wd < 0)
        complete = false;
      else
        changed->push_back(event->wd);
      if ((event->mask & IN_IGNORED) != 0) s.live.erase(event->wd);
      at += static_cast<ssize_t>(sizeof(struct inotify_event)) + event->len;
    }
  }
  return complete;
}

void Reset() {
  State& s = Get();
  if (s.fd >= 0) close(s.fd);
  if (s.mounts >= 0) close(s.mounts);
  s.fd = s.mounts = -1;
  s.live.clear();
}

}  // namespace dir_watch
