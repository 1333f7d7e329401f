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

// A clean absolute path (walk::CleanAbsolute): where its last '/' is (its parent is path[0, at),
// "" for "/"); npos when it is not one.
size_t ParentEnd(const std::string& path) {
  return walk::CleanAbsolute(path) ? path.rfind('/') : std::string::npos;
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

// Opens the directory path[from, to) (components, '/' first) below `dirfd` refusing every link:
// one openat2 (Linux 5.6+), else one openat with O_NOFOLLOW per component. -1 and *err.
int OpenBelow(int dirfd, const std::string& path, size_t from, size_t to, int* err) {
  std::string rel(path, from + 1, to - from - 1);
  int fd = walk::OpenNoLinks(dirfd, rel.c_str(), walk::kWalkFlags, err);
  if (fd != -2) return fd;
  Fd cur;
  std::string name;
  for (size_t at = from; at < to;) {
    size_t end = path.find('/', at + 1);
    if (end == std::string::npos || end > to) end = to;
    name.assign(path, at + 1, end - at - 1);
    int next = openat(cur.get() < 0 ? dirfd : cur.get(), name.c_str(), walk::kWalkFlags);
    if (next < 0) {
      *err = errno;
      return -1;
    }
    cur.Reset(next);
    at = end;
  }
  return cur.Release();
}

// The directories held open along the current parent: level k is the prefix parent[0, ends[k])
// ("" for "/"), opened without following a link from the level before it. A level is only taken
// for a prefix the next parent shares, so siblings cost one open each.
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
  // *err; `share` (a component boundary, at most len): how much of it the next parent shares. The
  // levels that are whole-component prefixes of it are kept, the others closed; the prefix up to
  // `share` is opened from the deepest one and held, the rest opened and dropped at the next call.
  int Open(const std::string& path, size_t len, size_t share, int* err) {
    tail_.Reset(-1);
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
    if (ends_.empty()) {
      int fd = open("/", walk::kWalkFlags);
      if (fd < 0) {
        *err = errno;
        return -1;
      }
      fds_.push_back(fd);
      ends_.push_back(0);
    }
    held_.assign(path, 0, std::max(share, ends_.back()));
    if (share > ends_.back() && fds_.size() < kMaxHeld) {
      int fd = OpenBelow(fds_.back(), path, ends_.back(), share, err);
      if (fd < 0) return -1;
      fds_.push_back(fd);
      ends_.push_back(share);
    }
    if (len == ends_.back()) return fds_.back();
    tail_.Reset(OpenBelow(fds_.back(), path, ends_.back(), len, err));
    return tail_.get();
  }

 private:
  static constexpr size_t kMaxHeld = 64;
  std::vector<int> fds_;
  std::vector<size_t> ends_;
  std::string held_;
  Fd tail_;
};

// How much of the directories a[0, an) and b[0, bn) is the same whole components.
size_t Shared(const std::string& a, size_t an, const std::string& b, size_t bn) {
  size_t n = an < bn ? an : bn;
  size_t same = 0;
  while (same < n && a[same] == b[same]) ++same;
  if ((same == an || a[same] == '/') && (same == bn || b[same] == '/')) return same;
  // They part inside a component: back to the separator before it.
  while (same > 0) {
    --same;
    if (a[same] == '/') break;
  }
  return same;
}

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
  auto same_parent = [&](size_t a, size_t b) {
    return parent_end[a] == parent_end[b] &&
           paths[a].compare(0, parent_end[a], paths[b], 0, parent_end[b]) == 0;
  };
  OpenChain chain;
  int dir = -1;
  int dir_err = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    const std::string& path = paths[i];
    size_t len = parent_end[i];
    if (k == 0 || !same_parent(order[k - 1], i)) {
      // What the next parent shares with this one is held open for it.
      size_t next = k + 1;
      while (next < order.size() && same_parent(order[next], i)) ++next;
      size_t share =
          next == order.size() ? 0 : Shared(path, len, paths[order[next]], parent_end[order[next]]);
      dir_err = 0;
      dir = chain.Open(path, len, share, &dir_err);
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
