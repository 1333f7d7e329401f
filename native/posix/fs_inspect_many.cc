// SPDX-License-Identifier: MIT
// InspectMany (see fs_beneath.h): many paths looked at in one pass, each directory on the way
// opened once without following a link, from the one above it, which the pass holds open.
#include "binding/fs_beneath.h"
#include "posix/fs_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fs_beneath {

using walk::Fd;
using walk::KindOf;
using walk::Stamp;

namespace {

// An absolute path with no empty, "." or ".." component below "/": where its last '/' is (its
// parent is path[0, at), "" for "/"); npos when it is not one.
size_t ParentEnd(const std::string& path) {
  if (path.size() < 2 || path[0] != '/' || path.find('\0') != std::string::npos)
    return std::string::npos;
  size_t start = 1;
  size_t last = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    size_t len = end - start;
    if (len == 0 || (len == 1 && path[start] == '.') ||
        (len == 2 && path[start] == '.' && path[start + 1] == '.'))
      return std::string::npos;
    if (end == path.size()) break;
    last = end;
    start = end + 1;
  }
  return last;
}

// Byte order with '/' lowest, so that every directory's paths sort together below it.
bool PathLess(const char* a, size_t an, const char* b, size_t bn) {
  size_t n = an < bn ? an : bn;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = a[i] == '/' ? 0 : static_cast<unsigned char>(a[i]);
    unsigned char y = b[i] == '/' ? 0 : static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return an < bn;
}

// The directories open along the current parent: level k is the prefix parent[0, ends[k]) (""
// for "/"), each opened without following a link from the one before it.
class OpenChain {
 public:
  // Room for every level up front: a descriptor is never lost to a failed allocation.
  OpenChain() {
    fds_.reserve(kMaxHeld);
    ends_.reserve(kMaxHeld);
  }
  ~OpenChain() {
    for (int fd : fds_) close(fd);
  }

  // A descriptor for the directory path[0, len) ("" for "/"; clean, see ParentEnd), or -1 and
  // *err: the levels it shares with the chain are kept, the rest closed, and each new component
  // opened with O_NOFOLLOW from the deepest level kept (at most kMaxHeld levels held; deeper ones
  // are walked in `tail_`).
  int Open(const std::string& path, size_t len, int* err) {
    tail_.Reset(-1);
    // The levels whose prefix is a whole-component prefix of the directory.
    size_t keep = 0;
    while (keep < ends_.size()) {
      size_t e = ends_[keep];
      if (e > len || (e < len && path[e] != '/') || path.compare(0, e, held_, 0, e) != 0) break;
      ++keep;
    }
    while (ends_.size() > keep) {
      close(fds_.back());
      fds_.pop_back();
      ends_.pop_back();
    }
    held_.assign(path, 0, len);
    if (ends_.empty()) {
      int fd = open("/", walk::kWalkFlags);
      if (fd < 0) {
        *err = errno;
        return -1;
      }
      fds_.push_back(fd);
      ends_.push_back(0);
    }
    size_t at = ends_.back();
    int cur = fds_.back();
    std::string name;
    while (at < len) {
      size_t end = path.find('/', at + 1);
      if (end == std::string::npos || end > len) end = len;
      name.assign(path, at + 1, end - at - 1);
      int next = openat(cur, name.c_str(), walk::kWalkFlags);
      if (next < 0) {
        *err = errno;
        held_.resize(ends_.back());
        return -1;
      }
      if (tail_.get() < 0 && fds_.size() < kMaxHeld) {
        fds_.push_back(next);
        ends_.push_back(end);
      } else {
        tail_.Reset(next);
      }
      cur = next;
      at = end;
    }
    held_.resize(ends_.back());
    return cur;
  }

 private:
  static constexpr size_t kMaxHeld = 64;
  std::vector<int> fds_;
  std::vector<size_t> ends_;
  std::string held_;
  Fd tail_;
};

}  // namespace

std::vector<Info> InspectMany(const std::vector<std::string>& paths) {
  std::vector<Info> out(paths.size());
  // Each path as its parent (path[0, parent_end)) and last component; an invalid one is an error.
  std::vector<size_t> parent_end(paths.size(), 0);
  std::vector<size_t> order;
  order.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    size_t at = ParentEnd(paths[i]);
    if (at == std::string::npos) {
      out[i].err = EINVAL;
      continue;
    }
    parent_end[i] = at;
    order.push_back(i);
  }
  // Grouped by parent, and the parents in walk order: each directory is opened once, and the
  // directories above it once for all the parents below them.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return PathLess(paths[a].data(), parent_end[a], paths[b].data(), parent_end[b]);
  });
  OpenChain chain;
  int dir = -1;
  int dir_err = 0;
  size_t open_parent = paths.size();
  for (size_t i : order) {
    const std::string& path = paths[i];
    size_t len = parent_end[i];
    if (open_parent == paths.size() || parent_end[open_parent] != len ||
        paths[open_parent].compare(0, len, path, 0, len) != 0) {
      dir_err = 0;
      dir = chain.Open(path, len, &dir_err);
      open_parent = i;
    }
    Info& info = out[i];
    if (dir < 0) {
      info.err = dir_err;
      info.kind = dir_err == ENOENT ? Kind::kMissing : Kind::kError;
      continue;
    }
    struct stat st;
    if (fstatat(dir, path.c_str() + len + 1, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      info.err = errno;
      info.kind = errno == ENOENT ? Kind::kMissing : Kind::kError;
      continue;
    }
    info.kind = KindOf(st.st_mode);
    info.size = static_cast<uint64_t>(st.st_size);
    info.stamp = Stamp(st);
  }
  return out;
}

}  // namespace fs_beneath
