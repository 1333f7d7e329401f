// SPDX-License-Identifier: MIT
// The new mount API calls the sandbox's first process makes between clone() and execve(): raw
// system calls only (async-signal-safe), each returning 0 or -1 with errno set.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/kernel_compat.h"

namespace child_setup {

inline int SetAttr(int dirfd, const char* path, unsigned flags, uint64_t set, uint64_t clr) {
  struct mount_attr_compat attr;
  memset(&attr, 0, sizeof attr);
  attr.attr_set = set;
  attr.attr_clr = clr;
  return static_cast<int>(
      syscall(SYS_mount_setattr_compat, dirfd, path, flags, &attr, sizeof attr));
}

inline int OpenTreeClone(int dirfd, const char* path) {
  return static_cast<int>(
      syscall(SYS_open_tree, dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
}

// A detached clone of the detached mount tree `fd` with what is mounted in it (the kernel allows it
// only in the mount namespace the tree was cloned in).
inline int OpenTreeCloneOf(int fd) {
  return static_cast<int>(syscall(
      SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
}

inline int MoveOnto(int fd, const char* path) {
  return static_cast<int>(syscall(SYS_move_mount, fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH));
}

// Binds a detached clone of (dirfd, path) read-only onto `target`.
inline int BindReadonly(int dirfd, const char* path, const char* target) {
  int fd = OpenTreeClone(dirfd, path);
  if (fd < 0) return -1;
  int rc = SetAttr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
  if (rc == 0) rc = MoveOnto(fd, target);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

// Binds `path` onto itself read-only, with what is mounted beneath it: two calls where a detached
// clone takes four. For a path that was its own real path when the plan was made (a denyWrite
// entry): mount(2) follows a symbolic link at the end of `path`, mount_setattr is told not to, so
// a path swapped for a link since is refused (no mount root there) instead of protecting the place
// the link leads to.
inline int BindReadonlyInPlace(const char* path) {
  if (mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  return SetAttr(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_RECURSIVE,
                 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
}

// Binds the directory `path` onto itself, writable, with what is mounted beneath it: two calls
// where a detached clone takes three. mount(2) follows a symbolic link at the end of `path`,
// mount_setattr is told not to: on a link it finds no mount root and fails, so a directory
// swapped for a link is refused (as moving a clone onto a link is) instead of left unpinned.
// `checked`: in an open link window (link_window.h) the mount call has refused a link already.
inline int PinOntoItself(const char* path, bool checked) {
  if (mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  if (checked) return 0;
  return SetAttr(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, MOUNT_ATTR_NOSUID, 0);
}

}  // namespace child_setup
