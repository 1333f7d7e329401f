// SPDX-License-Identifier: MIT
// inotify queues for remembered directories (see dir_watch.h).
#include "linux/dir_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>

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

// The share of the user's inotify watches each of the two queues may take (editors and build tools
// need theirs).
size_t Budget() {
  size_t budget = 8192 / 8;
  FILE* f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");
  if (f != nullptr) {
    long max = 0;
    if (fscanf(f, "%ld", &max) == 1 && max > 0)
      budget = static_cast<size_t>(max / 8 < 32768 ? max / 8 : 32768);
    fclose(f);
  }
  return budget;
}

}  // namespace

bool Queue::Ready() {
  if (failed_) return false;
  if (fd_ >= 0) return true;
  mounts_ = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  fd_ = mounts_ < 0 ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    if (mounts_ >= 0) close(mounts_);
    mounts_ = -1;
    failed_ = true;
    return false;
  }
  budget_ = Budget();
  live_.clear();
  return true;
}

int Queue::Add(int fd) {
  if (!Ready() || live_.size() >= budget_ || !Notifies(fd)) return -1;
  // The descriptor's own directory, whatever its path leads to now.
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int wd = inotify_add_watch(fd_, path, kMask);
  if (wd < 0) return -1;
  live_.insert(wd);
  return wd;
}

void Queue::Remove(int wd) {
  // Counted down when its IN_IGNORED event is read.
  if (fd_ >= 0 && wd >= 0) inotify_rm_watch(fd_, wd);
}

bool Queue::DrainWith(void* ctx, void (*each)(void*, int, uint32_t, const char*)) {
  if (!Ready()) return false;
  bool complete = true;
  // The mount table reports a change as POLLERR | POLLPRI, once per change (it is always readable).
  // A signal (a profiler's timer, SIGCHLD) can interrupt even a poll that does not wait, and an
  // interrupted poll says nothing about the table: it is asked again, not taken as a change.
  struct pollfd mounts = {mounts_, POLLPRI, 0};
  int polled;
  do {
    polled = poll(&mounts, 1, 0);
  } while (polled < 0 && errno == EINTR);
  if (polled < 0 || (mounts.revents & (POLLERR | POLLPRI | POLLNVAL)) != 0) complete = false;
  // Nothing queued: no read, so no take to count (a sandbox copying a template checks both).
  int queued = 0;
  if (ioctl(fd_, FIONREAD, &queued) == 0 && queued == 0) return complete;
  takes_.fetch_add(1);
  alignas(struct inotify_event) char buf[65536];
  for (;;) {
    ssize_t n = read(fd_, buf, sizeof buf);
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
        each(ctx, event->wd, event->mask, event->len > 0 ? event->name : "");
      if ((event->mask & IN_IGNORED) != 0) live_.erase(event->wd);
      at += static_cast<ssize_t>(sizeof(struct inotify_event)) + event->len;
    }
  }
  return complete;
}

void Queue::Reset() {
  takes_.fetch_add(1);
  if (fd_ >= 0) close(fd_);
  if (mounts_ >= 0) close(mounts_);
  fd_ = mounts_ = -1;
  live_.clear();
}

namespace {

Queue& ScanQueue() {
  static auto* queue = new Queue();
  return *queue;
}

}  // namespace

int Add(int fd) { return ScanQueue().Add(fd); }

void Remove(int wd) { ScanQueue().Remove(wd); }

bool Drain(std::vector<int>* changed) {
  return ScanQueue().Drain([changed](int wd, uint32_t, const char*) { changed->push_back(wd); });
}

void Reset() { ScanQueue().Reset(); }

}  // namespace dir_watch
