// SPDX-License-Identifier: MIT
// fsListRoots (see root_walk.h): a plan with thousands of write roots resolves and lists them in
// one call instead of an lstat per path component and a readdir per root through node:fs.
#include "posix/root_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>

#include "posix/fs_walk.h"

#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace root_walk {
namespace {

using fs_beneath::walk::Fd;

char KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return 'd';
  if (S_ISREG(mode)) return 'f';
  if (S_ISLNK(mode)) return 'l';
  return 'o';
}

// The kind of <name>/.git (the same look an lstat of that path takes).
char GitKind(int dirfd, const std::string& name) {
  std::string path = name + "/.git";
  struct stat st;
  if (fstatat(dirfd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? 'm' : 'x';
  char kind = KindOf(st.st_mode);
  return kind == 'l' ? 'o' : kind;
}

// No empty, "." or ".." component in an absolute path (the walk reaches what it names).
bool Clean(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() == 1) return true;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// The entry list in the order the glue reports it: sorted by byte, as libuv's scandir gives.
using Entries = std::vector<std::pair<std::string, char>>;

#if defined(__linux__)
// The entries of the directory open as `dirfd` by getdents64 itself (no DIR stream: three system
// calls fewer per root than fdopendir), or false and *err.
bool ReadDents(int dirfd, std::vector<char>* buf, Entries* out, int* err) {
  for (;;) {
    long got = syscall(__NR_getdents64, dirfd, buf->data(), buf->size());
    if (got == 0) return true;
    if (got < 0) {
      *err = errno;
      return false;
    }
    for (long at = 0; at < got;) {
      const struct dirent64* entry = reinterpret_cast<const struct dirent64*>(buf->data() + at);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      char kind;
      switch (entry->d_type) {
        case DT_DIR:
          kind = 'd';
          break;
        case DT_REG:
          kind = 'f';
          break;
        case DT_LNK:
          kind = 'l';
          break;
        case DT_UNKNOWN: {
          struct stat st;
          kind = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? KindOf(st.st_mode) : 'o';
          break;
        }
        default:
          kind = 'o';
      }
      out->emplace_back(name, kind);
    }
  }
}
#endif

// The entries of the directory open as `dirfd` through the shared walk's listing (an lstat per
// entry: the path where openat2 is missing), or false and *err.
bool ReadListed(int dirfd, Entries* out, int* err) {
  std::vector<std::pair<std::string, fs_beneath::Kind>> listed;
  if (!fs_beneath::walk::ReadEntries(dirfd, SIZE_MAX, &listed, err)) return false;
  for (auto& [name, kind] : listed) {
    char letter = static_cast<char>(kind);
    out->emplace_back(std::move(name),
                      letter == 'd' || letter == 'f' || letter == 'l' ? letter : 'o');
  }
  return true;
}

// The listing of `entries` (sorted here) with the looks at <name>/.git through `dirfd`.
void Encode(int dirfd, Entries* entries, size_t max_looks, std::string* out) {
  std::sort(entries->begin(), entries->end());
  for (size_t i = 0; i < entries->size(); ++i) {
    const std::string& name = (*entries)[i].first;
    char kind = (*entries)[i].second;
    char git = '-';
    if (i < max_looks && kind == 'd' && name != ".git" && name != "node_modules")
      git = GitKind(dirfd, name);
    out->push_back(kind);
    out->push_back(git);
    *out += name;
    out->push_back('/');
  }
}

Listing ListOne(const std::string& path, size_t max_looks, std::vector<char>* buf) {
  Listing found;
  if (!Clean(path)) {
    found.err = EINVAL;
    return found;
  }
  Entries entries;
#if defined(__linux__)
  // The whole root by one openat2 refusing every symlink (the fewest system calls per root).
  int whole = fs_beneath::walk::OpenNoLinks(AT_FDCWD, path.c_str(), fs_beneath::walk::kReadDirFlags,
                                            &found.err);
  if (whole == -1) return found;
  if (whole >= 0) {
    Fd dir(whole);
    if (ReadDents(dir.get(), buf, &entries, &found.err))
      Encode(dir.get(), &entries, max_looks, &found.entries);
    return found;
  }
#else
  (void)buf;
#endif
  // No link anywhere on the way (one openat2 refusing symlinks, or openat with O_NOFOLLOW per
  // component): an open directory is then its own real path.
  Fd walked(fs_beneath::OpenDirectory(path, &found.err));
  if (walked.get() < 0) return found;
  // Listed through a descriptor of its own (the walk's may be O_PATH); the walk's answers the
  // looks at <name>/.git.
  Fd dir(openat(walked.get(), ".", fs_beneath::walk::kReadDirFlags));
  if (dir.get() < 0) {
    found.err = errno;
    return found;
  }
  if (ReadListed(dir.get(), &entries, &found.err))
    Encode(walked.get(), &entries, max_looks, &found.entries);
  return found;
}

}  // namespace

std::vector<Listing> ListRoots(const std::vector<std::string>& paths, size_t max_looks) {
  std::vector<Listing> out;
  out.reserve(paths.size());
  std::vector<char> buf(32768);
  for (const std::string& path : paths) out.push_back(ListOne(path, max_looks, &buf));
  return out;
}

}  // namespace root_walk
