// SPDX-License-Identifier: MIT
// Descriptor-relative, no-follow walks for the host-side checks of write roots (see fs_beneath.h).
#include "posix/fs_beneath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace fs_beneath {
namespace {

#ifdef O_PATH
constexpr int kWalkFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kWalkFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#endif
constexpr int kReadDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

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

// One openat2 resolves the whole path refusing every symlink (Linux 5.6+): a handful of system
// calls fewer than the walk below. -2 when the kernel (or a seccomp filter) lacks it.
int OpenDirAtOnce(const std::vector<std::string>& all, int* err) {
  static bool unavailable = false;
  if (unavailable) return -2;
  std::string path = "/";
  for (size_t i = 0; i < all.size(); ++i) path += (i == 0 ? "" : "/") + all[i];
  OpenHow how = {static_cast<uint64_t>(kWalkFlags), 0, kResolveNoSymlinks | kResolveNoMagiclinks};
  int fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd >= 0) return fd;
  if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
    unavailable = errno == ENOSYS;
    return -2;
  }
  *err = errno;
  return -1;
}
#endif

// Opens the directory root/parts[0..count) component by component, never following a link.
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

Kind KindOf(mode_t mode) {
  if (S_ISREG(mode)) return Kind::kFile;
  if (S_ISDIR(mode)) return Kind::kDir;
  if (S_ISLNK(mode)) return Kind::kLink;
  return Kind::kOther;
}

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

std::string Stamp(const struct stat& st) {
  char buf[160];
  snprintf(buf, sizeof buf, "%llu:%llu:%llu:%lld:%lld", static_cast<unsigned long long>(st.st_dev),
           static_cast<unsigned long long>(st.st_ino), static_cast<unsigned long long>(st.st_size),
           static_cast<long long>(ZS_MTIME(st)), static_cast<long long>(ZS_CTIME(st)));
  return buf;
}

// The parent directory of rel (opened) and the last component; an empty rel names the root.
struct Target {
  int parent = -1;  // owned by the caller
  std::string name;
};

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

// Lists the entries of an open directory (a duplicate descriptor is consumed by the stream).
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

}  // namespace

int OpenDirectory(const std::string& root, int* err) { return OpenDir(root, {}, 0, err); }

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

namespace {

// One directory being emptied: its name in its parent, identity, and subdirectories left to do.
struct Level {
  std::string name;
  dev_t dev;
  ino_t ino;
  std::vector<std::string> pending;
};

void NoteError(RemoveResult* r, int err) {
  if (r->ok) r->err = err;
  r->ok = false;
}

// Unlinks every non-directory of an open directory and returns the names of its subdirectories.
// A directory the command made unwritable or unreadable (it ran as this user) is opened up first.
std::vector<std::string> EmptyFiles(int dirfd, const struct stat& st, RemoveResult* r) {
  if ((st.st_mode & S_IRWXU) != S_IRWXU) {
    int rc = fchmod(dirfd, st.st_mode | S_IRWXU);
    (void)rc;  // a failure shows up as the unlink errors below
  }
  std::vector<std::pair<std::string, Kind>> entries;
  int err = 0;
  if (!ReadEntries(dirfd, static_cast<size_t>(-1), &entries, &err)) NoteError(r, err);
  std::vector<std::string> dirs;
  for (const auto& entry : entries) {
    if (entry.second == Kind::kDir) {
      dirs.push_back(entry.first);
    } else if (unlinkat(dirfd, entry.first.c_str(), 0) == 0) {
      r->removed++;
    } else if (errno == EISDIR || errno == EPERM) {
      dirs.push_back(entry.first);
    } else if (errno != ENOENT) {
      NoteError(r, errno);
    }
  }
  return dirs;
}

// Opens a subdirectory for emptying: no link followed, same file system as its parent.
int OpenSubdir(int parent, const std::string& name, dev_t dev, struct stat* st, RemoveResult* r) {
  int fd = openat(parent, name.c_str(), kReadDirFlags);
  if (fd < 0 && errno == EACCES) {
    struct stat lst;
    if (fstatat(parent, name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(lst.st_mode)) {
      // The entry was just seen as a directory and no sandboxed process is left to swap it.
      int rc = fchmodat(parent, name.c_str(), lst.st_mode | S_IRWXU, 0);
      (void)rc;
      fd = openat(parent, name.c_str(), kReadDirFlags);
    }
  }
  if (fd < 0) {
    if (errno == ENOTDIR || errno == ELOOP) {
      // Not a directory after all: remove the entry itself.
      if (unlinkat(parent, name.c_str(), 0) == 0)
        r->removed++;
      else if (errno != ENOENT)
        NoteError(r, errno);
    } else if (errno != ENOENT) {
      NoteError(r, errno);
    }
    return -1;
  }
  if (fstat(fd, st) != 0 || st->st_dev != dev) {
    NoteError(r, EXDEV);  // a mount point: never cross into another file system
    close(fd);
    return -1;
  }
  return fd;
}

// Empties and removes parent/name depth-first with one descriptor open at a time: going back up
// is openat(".."), checked against the identity recorded on the way down.
void RemoveTree(int parent, const std::string& name, RemoveResult* r) {
  struct stat pst;
  if (fstat(parent, &pst) != 0) {
    NoteError(r, errno);
    return;
  }
  struct stat st;
  Fd cur(OpenSubdir(parent, name, pst.st_dev, &st, r));
  if (cur.get() < 0) return;
  std::vector<Level> stack;
  stack.push_back(Level{name, st.st_dev, st.st_ino, EmptyFiles(cur.get(), st, r)});
  while (!stack.empty()) {
    Level& level = stack.back();
    if (!level.pending.empty()) {
      std::string child = std::move(level.pending.back());
      level.pending.pop_back();
      int fd = OpenSubdir(cur.get(), child, level.dev, &st, r);
      if (fd < 0) continue;
      cur.Reset(fd);
      std::vector<std::string> dirs = EmptyFiles(cur.get(), st, r);
      stack.push_back(Level{std::move(child), st.st_dev, st.st_ino, std::move(dirs)});
      continue;
    }
    std::string done = std::move(level.name);
    stack.pop_back();
    int up = parent;
    if (!stack.empty()) {
      up = openat(cur.get(), "..", kReadDirFlags);
      struct stat ust;
      if (up < 0 || fstat(up, &ust) != 0 || ust.st_dev != stack.back().dev ||
          ust.st_ino != stack.back().ino) {
        if (up >= 0) close(up);
        NoteError(r, ESTALE);  // the tree moved under us: stop rather than guess where we are
        return;
      }
      cur.Reset(up);
    } else {
      cur.Reset(-1);
    }
    if (unlinkat(up, done.c_str(), AT_REMOVEDIR) == 0)
      r->removed++;
    else if (errno != ENOENT)
      NoteError(r, errno);
  }
}

}  // namespace

RemoveResult Remove(const std::string& root, const std::string& rel) {
  RemoveResult r;
  Target t;
  int err = 0;
  if (rel.empty()) {
    NoteError(&r, EINVAL);  // never the root itself
    return r;
  }
  if (!OpenTarget(root, rel, &t, &err)) {
    if (err != ENOENT) NoteError(&r, err);
    return r;
  }
  Fd parent(t.parent);
  struct stat st;
  if (fstatat(parent.get(), t.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) NoteError(&r, errno);
    return r;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(parent.get(), t.name.c_str(), 0) == 0)
      r.removed++;
    else if (errno != ENOENT)
      NoteError(&r, errno);
    return r;
  }
  RemoveTree(parent.get(), t.name, &r);
  return r;
}

bool Replace(const std::string& root, const std::string& rel, const std::string& data,
             unsigned mode, int* err) {
  RemoveResult removed = Remove(root, rel);
  if (!removed.ok) {
    *err = removed.err;
    return false;
  }
  Target t;
  if (rel.empty() || !OpenTarget(root, rel, &t, err)) {
    if (rel.empty()) *err = EINVAL;
    return false;
  }
  Fd parent(t.parent);
  // O_EXCL|O_NOFOLLOW: whatever appeared there since the removal is never written through.
  Fd fd(openat(parent.get(), t.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               mode & 0777));
  if (fd.get() < 0) {
    *err = errno;
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace fs_beneath
