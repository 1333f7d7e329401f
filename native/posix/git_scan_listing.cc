// SPDX-License-Identifier: MIT
// Reading one directory for the repository scan (see git_scan_listing.h).
#include "posix/git_scan_listing.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include <memory>
#include <vector>

namespace git_scan {
namespace listing {
namespace {

// Names git looks up: on macOS volumes are case-insensitive by default, so `OBJECTS` or `.GIT`
// is what git finds there too (a false match elsewhere only guards more).
bool NameIs(const char* name, const char* wanted) {
#if defined(__APPLE__)
  return strcasecmp(name, wanted) == 0;
#else
  return strcmp(name, wanted) == 0;
#endif
}

bool EndsWith(const char* name, const std::string& suffix) {
  size_t len = strlen(name);
  if (len <= suffix.size()) return false;
  return NameIs(name + len - suffix.size(), suffix.c_str());
}

bool IsWanted(const char* name) {
  const Wanted& wanted = LastWanted();
  for (const std::string& exact : wanted.exact)
    if (NameIs(name, exact.c_str())) return true;
  for (const std::string& suffix : wanted.suffixes)
    if (EndsWith(name, suffix)) return true;
  return false;
}

bool IsDir(int dirfd, const char* name, unsigned char type) {
  if (type == DT_DIR) return true;
  if (type != DT_UNKNOWN) return false;
  struct stat st;
  return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

#if defined(__linux__)
// The kernel's linux_dirent64, read by offset (no libc header: musl no longer names dirent64, and
// a 32-bit glibc's dirent differs): d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), name.
constexpr size_t kReclenAt = 16, kTypeAt = 18, kNameAt = 19;

// Calls each(name, d_type) for the entries of the open directory `fd`, read straight from the
// kernel: no duplicated descriptor and DIR stream per directory (a first scan lists every
// directory of the workspace, and a one-run process's scan is always a first). False on a read
// error.
template <typename Each>
bool ForEachEntry(int fd, Each each) {
  alignas(8) static thread_local char buffer[32768];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0;
    for (long at = 0; at < n;) {
      uint16_t reclen;
      memcpy(&reclen, buffer + at + kReclenAt, sizeof reclen);
      if (reclen == 0) return false;  // a record the kernel never makes: no endless loop
      each(buffer + at + kNameAt, static_cast<unsigned char>(buffer[at + kTypeAt]));
      at += reclen;
    }
  }
}
#else
template <typename Each>
bool ForEachEntry(int fd, Each each) {
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return false;
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    close(dup_fd);
    return false;
  }
  bool ok = true;
  for (;;) {
    errno = 0;
    struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      ok = errno == 0;
      break;
    }
    each(entry->d_name, entry->d_type);
  }
  closedir(dir);
  return ok;
}
#endif

}  // namespace

Wanted& LastWanted() {
  static auto* wanted = new Wanted();
  return *wanted;
}

bool IsSkipped(const std::string& name) {
  for (const std::string& skip : LastWanted().skip)
    if (NameIs(name.c_str(), skip.c_str())) return true;
  return false;
}

bool List(int fd, memory::Listing* out) {
  bool head = false, objects = false, refs = false, objects_dir = false, refs_dir = false;
  auto subdirs = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<std::string>> named;
  bool ok = ForEachEntry(fd, [&](const char* name, unsigned char type) {
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) return;
    if (NameIs(name, ".git")) {
      out->has_git = true;
      return;
    }
    if (IsWanted(name)) {
      if (named == nullptr) named = std::make_shared<std::vector<std::string>>();
      named->emplace_back(name);
    }
    bool is_dir = IsDir(fd, name, type);
    if (NameIs(name, "HEAD")) head = true;
    if (NameIs(name, "objects")) {
      objects = true;
      objects_dir = objects_dir || is_dir;
    }
    if (NameIs(name, "refs")) {
      refs = true;
      refs_dir = refs_dir || is_dir;
    }
    if (is_dir) subdirs->emplace_back(name);
  });
  out->subdirs = std::move(subdirs);
  out->named = std::move(named);
  out->is_git_dir = head && objects_dir && refs_dir;
  out->may_be_git_dir = head && objects && refs && !out->is_git_dir;
  return ok;
}

int OpenRelative(int base, const std::string& rel, int flags) {
  int fd = base;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    bool last = slash == std::string::npos;
    std::string part = rel.substr(start, last ? std::string::npos : slash - start);
    int next = openat(fd, part.c_str(), last ? flags : kLookFlags);
    if (fd != base) close(fd);
    if (next < 0 || last) return next;
    fd = next;
    start = slash + 1;
  }
}

}  // namespace listing
}  // namespace git_scan
