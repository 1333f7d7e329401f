// SPDX-License-Identifier: MIT
// The walking primitives that fs_beneath.cc (inspect, read, list) and fs_remove.cc (remove,
// replace) share: every directory is opened from "/" one component at a time with O_NOFOLLOW (or
// one openat2 refusing every symlink), so no link the sandboxed command left is ever followed.
// Internal to native/posix; the API is fs_beneath.h.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "binding/fs_beneath.h"

namespace fs_beneath {

// A descriptor for the directory `root` (absolute), walked without following links; -1 and *err.
int OpenDirectory(const std::string& root, int* err);

namespace walk {

#ifdef O_PATH
inline constexpr int kWalkFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
inline constexpr int kWalkFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#endif
inline constexpr int kReadDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Closes the descriptor it holds when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(-1); }
  void Reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// The parent directory of rel (opened) and the last component; an empty rel names the root.
struct Target {
  int parent = -1;  // owned by the caller
  std::string name;
};

// Opens the parent of root/rel without following links; false and *err (ENOENT when missing).
bool OpenTarget(const std::string& root, const std::string& rel, Target* t, int* err);

// Opens `path` (relative to `dirfd`, or absolute) with `flags` by one openat2 that refuses every
// symlink on the way and as the last component (Linux 5.6+): the fewest system calls. -1 and *err
// when it fails; -2 when the kernel (or a seccomp filter) lacks openat2 and the caller must walk.
int OpenNoLinks(int dirfd, const char* path, int flags, int* err);

// Whether `path` is absolute, holds no NUL and has no empty, "." or ".." component below "/"
// ("/" itself is not one). With `ends`, where each component ends ("/a/b": 2, 4).
bool CleanAbsolute(const std::string& path, std::vector<size_t>* ends = nullptr);

// Opens the directory root/parts[0..count) component by component, never following a link.
int OpenDir(const std::string& root, const std::vector<std::string>& parts, size_t count, int* err);

// The kind of an entry of mode `mode` (no link followed).
Kind KindOf(mode_t mode);

// "dev:ino:size:mtime_ns:ctime_ns" of an entry (see Info::stamp).
std::string Stamp(const struct stat& st);

// Lists the entries of an open directory (a duplicate descriptor is consumed by the stream).
bool ReadEntries(int dirfd, size_t max, std::vector<std::pair<std::string, Kind>>* out, int* err);

}  // namespace walk
}  // namespace fs_beneath
