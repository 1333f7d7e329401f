// SPDX-License-Identifier: MIT
// Removal and replacement beneath a write root, for the host-side cleanup after a run (see
// fs_beneath.h): depth-first with one descriptor open at a time, never following a link, never
// crossing into another file system, never recursing on the C stack.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binding/fs_beneath.h"
#include "posix/fs_walk.h"

namespace fs_beneath {

using walk::Fd;
using walk::kReadDirFlags;
using walk::OpenTarget;
using walk::ReadEntries;
using walk::Target;

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

bool Make(const std::string& root, const std::string& rel, const std::string* link_target,
          unsigned mode, int* err) {
  Target t;
  if (rel.empty() || !OpenTarget(root, rel, &t, err)) {
    if (rel.empty()) *err = EINVAL;
    return false;
  }
  Fd parent(t.parent);
  if (link_target != nullptr) {
    // symlinkat never follows a link at the name: it fails with EEXIST instead.
    if (symlinkat(link_target->c_str(), parent.get(), t.name.c_str()) == 0) return true;
    *err = errno;
    return false;
  }
  if (mkdirat(parent.get(), t.name.c_str(), mode & 0777) == 0) return true;
  *err = errno;
  struct stat st;
  // A directory that is already there will do; a link to one will not.
  if (*err == EEXIST && fstatat(parent.get(), t.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR(st.st_mode))
    return true;
  return false;
}

}  // namespace fs_beneath
