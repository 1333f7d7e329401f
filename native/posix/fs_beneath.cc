// SPDX-License-Identifier: MIT
// Descriptor-relative, no-follow walks for the host-side checks of write roots (see fs_beneath.h).
#include "binding/fs_beneath.h"
#include "posix/fs_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace fs_beneath {
namespace {

int64_t Nanos(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
#if defined(__APPLE__)
#define ZS_MTIME(st) Nanos((st).st_mtimespec)
#define ZS_CTIME(st) Nanos((st).st_ctimespec)
#else
#define ZS_MTIME(st) Nanos((st).st_mtim)
#define ZS_CTIME(st) Nanos((st).st_ctim)
#endif

void AppendNumber(std::string* out, unsigned long long n, bool negative) {
  char buf[24];
  size_t at = sizeof buf;
  do {
    buf[--at] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  if (negative) buf[--at] = '-';
  out->append(buf + at, sizeof buf - at);
}

void AppendSigned(std::string* out, long long n) {
  AppendNumber(
      out, n < 0 ? 0ULL - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n),
      n < 0);
}

}  // namespace

namespace walk {

Kind KindOf(mode_t mode) {
  if (S_ISREG(mode)) return Kind::kFile;
  if (S_ISDIR(mode)) return Kind::kDir;
  if (S_ISLNK(mode)) return Kind::kLink;
  return Kind::kOther;
}

// "dev:ino:size:mtime:ctime", without a format string (a batch makes thousands).
std::string Stamp(const struct stat& st) {
  std::string out;
  out.reserve(64);
  AppendNumber(&out, static_cast<unsigned long long>(st.st_dev), false);
  out.push_back(':');
  AppendNumber(&out, static_cast<unsigned long long>(st.st_ino), false);
  out.push_back(':');
  AppendNumber(&out, static_cast<unsigned long long>(st.st_size), false);
  out.push_back(':');
  AppendSigned(&out, static_cast<long long>(ZS_MTIME(st)));
  out.push_back(':');
  AppendSigned(&out, static_cast<long long>(ZS_CTIME(st)));
  return out;
}

namespace {

// Splits on '/', refusing empty, "." and ".." components (a relative walk must stay beneath).
bool Split(const std::string& path, bool absolute, std::vector<std::string>* out) {
  size_t start = 0;
  if (absolute) {
    if (path.empty() || path[0] != '/') return false;
    start = 1;
  }
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string::npos)
      return false;
    out->push_back(std::move(part));
    start = end + 1;
  }
  return true;
}

#if defined(__linux__)
#ifndef SYS_openat2
#define SYS_openat2 437  // the same number on every architecture
#endif
struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t kResolveNoMagiclinks = 0x02;
constexpr uint64_t kResolveNoSymlinks = 0x04;

// The whole path resolved by one openat2 (see OpenNoLinks): a handful of system calls fewer than
// the walk below. -2 when openat2 is missing.
int OpenDirAtOnce(const std::vector<std::string>& all, int* err) {
  std::string path = "/";
  for (size_t i = 0; i < all.size(); ++i) path += (i == 0 ? "" : "/") + all[i];
  return OpenNoLinks(AT_FDCWD, path.c_str(), kWalkFlags, err);
}
#endif

}  // namespace

bool CleanAbsolute(const std::string& path, std::vector<size_t>* ends) {
  if (path.size() < 2 || path[0] != '/' || path.find('\0') != std::string::npos) return false;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    size_t len = end - start;
    if (len == 0 || (len == 1 && path[start] == '.') ||
        (len == 2 && path[start] == '.' && path[start + 1] == '.'))
      return false;
    if (ends != nullptr) ends->push_back(end);
    start = end + 1;
  }
  return true;
}

int OpenNoLinks(int dirfd, const char* path, int flags, int* err) {
#if defined(__linux__)
  static bool unavailable = false;
  if (unavailable) return -2;
  OpenHow how = {static_cast<uint64_t>(flags), 0, kResolveNoSymlinks | kResolveNoMagiclinks};
  int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
  if (fd >= 0) return fd;
  if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
    unavailable = errno == ENOSYS;
    return -2;
  }
  *err = errno;
  return -1;
#else
  (void)dirfd;
  (void)path;
  (void)flags;
  (void)err;
  return -2;
#endif
}

int OpenDir(const std::string& root, const std::vector<std::string>& parts, size_t count,
            int* err) {
  std::vector<std::string> all;
  if (!Split(root, true, &all)) {
    *err = EINVAL;
    return -1;
  }
  all.insert(all.end(), parts.begin(), parts.begin() + static_cast<long>(count));
#if defined(__linux__)
  int once = OpenDirAtOnce(all, err);
  if (once != -2) return once;
#endif
  Fd cur(open("/", kWalkFlags));
  if (cur.get() < 0) {
    *err = errno;
    return -1;
  }
  for (const std::string& part : all) {
    int next = openat(cur.get(), part.c_str(), kWalkFlags);
    if (next < 0) {
      *err = errno;
      return -1;
    }
    cur.Reset(next);
  }
  return cur.Release();
}

bool OpenTarget(const std::string& root, const std::string& rel, Target* t, int* err) {
  std::vector<std::string> parts;
  if (!Split(rel, false, &parts)) {
    *err = EINVAL;
    return false;
  }
  if (parts.empty()) {
    // The root itself: its parent and name, from the root's own components.
    std::vector<std::string> rootParts;
    if (!Split(root, true, &rootParts) || rootParts.empty()) {
      *err = EINVAL;
      return false;
    }
    t->name = rootParts.back();
    rootParts.pop_back();
    std::string parentRoot = "/";
    for (size_t i = 0; i < rootParts.size(); ++i) parentRoot += (i == 0 ? "" : "/") + rootParts[i];
    t->parent = OpenDir(parentRoot, {}, 0, err);
    return t->parent >= 0;
  }
  t->name = parts.back();
  t->parent = OpenDir(root, parts, parts.size() - 1, err);
  return t->parent >= 0;
}

bool ReadEntries(int dirfd, size_t max, std::vector<std::pair<std::string, Kind>>* out, int* err) {
  int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) {
    *err = errno;
    return false;
  }
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    *err = errno;
    close(dup_fd);
    return false;
  }
  rewinddir(dir);
  bool ok = true;
  for (;;) {
    errno = 0;
    struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) {
        *err = errno;
        ok = false;
      }
      break;
    }
    const char* name = entry->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    if (out->size() >= max) break;
    Kind kind = Kind::kOther;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
      kind = KindOf(st.st_mode);
    else
      kind = errno == ENOENT ? Kind::kMissing : Kind::kError;
    out->emplace_back(name, kind);
  }
  closedir(dir);
  return ok;
}

}  // namespace walk

using walk::Fd;
using walk::KindOf;
using walk::kReadDirFlags;
using walk::OpenTarget;
using walk::ReadEntries;
using walk::Stamp;
using walk::Target;

int OpenDirectory(const std::string& root, int* err) { return walk::OpenDir(root, {}, 0, err); }

Info Inspect(const std::string& root, const std::string& rel) {
  Info info;
  Target t;
  if (!OpenTarget(root, rel, &t, &info.err)) {
    info.kind = info.err == ENOENT ? Kind::kMissing : Kind::kError;
    return info;
  }
  Fd parent(t.parent);
  struct stat st;
  if (fstatat(parent.get(), t.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    info.err = errno;
    info.kind = errno == ENOENT ? Kind::kMissing : Kind::kError;
    return info;
  }
  info.kind = KindOf(st.st_mode);
  info.size = static_cast<uint64_t>(st.st_size);
  info.stamp = Stamp(st);
  return info;
}

bool ReadFile(const std::string& root, const std::string& rel, size_t max, std::string* out,
              int* err) {
  Target t;
  if (!OpenTarget(root, rel, &t, err)) return false;
  Fd parent(t.parent);
  Fd file(openat(parent.get(), t.name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) {
    *err = errno;
    return false;
  }
  struct stat st;
  if (fstat(file.get(), &st) != 0) {
    *err = errno;
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = EINVAL;
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > max) {
    *err = EFBIG;
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(file.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    if (n == 0) break;
    if (out->size() + static_cast<size_t>(n) > max) {
      *err = EFBIG;
      return false;
    }
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

bool List(const std::string& root, const std::string& rel, size_t max,
          std::vector<std::pair<std::string, Kind>>* out, int* err) {
  Target t;
  if (!OpenTarget(root, rel, &t, err)) return false;
  Fd parent(t.parent);
  Fd dir(openat(parent.get(), t.name.c_str(), kReadDirFlags));
  if (dir.get() < 0) {
    *err = errno;
    return false;
  }
  return ReadEntries(dir.get(), max, out, err);
}

}  // namespace fs_beneath
