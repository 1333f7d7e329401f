// SPDX-License-Identifier: MIT
// File and directory masks (see masks.h). Runs between clone() and execve(): raw system calls, no
// allocation, no formatting library.
#include "linux/masks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/kernel_compat.h"
#include "linux/mount_calls.h"

namespace child_setup {
namespace {

constexpr uint64_t kLandlockReadFile = 1ULL << 2;  // LANDLOCK_ACCESS_FS_READ_FILE

// A detached tmpfs of 4 KiB with root directory mode `mode` ("0111"...), nosuid, nodev, noexec:
// the staging of the file masks (OpenStaging), or a directory mask.
int MakeDetachedTmpfs(const char* mode) {
  int fs = static_cast<int>(syscall(SYS_fsopen_compat, "tmpfs", FSOPEN_CLOEXEC_COMPAT));
  if (fs < 0) return -1;
  int rc = static_cast<int>(
      syscall(SYS_fsconfig_compat, fs, FSCONFIG_SET_STRING_COMPAT, "size", "4k", 0));
  if (rc == 0)
    rc = static_cast<int>(
        syscall(SYS_fsconfig_compat, fs, FSCONFIG_SET_STRING_COMPAT, "mode", mode, 0));
  if (rc == 0)
    rc = static_cast<int>(
        syscall(SYS_fsconfig_compat, fs, FSCONFIG_CMD_CREATE_COMPAT, nullptr, nullptr, 0));
  int mnt = -1;
  if (rc == 0) {
    mnt = static_cast<int>(syscall(SYS_fsmount_compat, fs, FSMOUNT_CLOEXEC_COMPAT,
                                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  }
  int saved = errno;
  close(fs);
  errno = saved;
  return mnt;
}

// Lets the sandbox read the mask whose inode `fd` names (its file, or the files beneath its root):
// a Landlock rule on that inode, never looked up by path again. A path could by then lead to the
// hidden file itself, if the host replaced it by a rename (a rename carries a mount away).
int AllowReading(const ChildPlan* plan, int fd) {
  // A template's masks: each run adds the rule to its own ruleset (the inode is kept open).
  if (plan->template_build) return 0;
  struct landlock_path_beneath_attr_compat attr;
  attr.allowed_access = kLandlockReadFile;
  attr.parent_fd = fd;
  return static_cast<int>(
      syscall(SYS_landlock_add_rule, plan->landlock_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0));
}

// Creates `name` in `dir` empty and read-only (mode 0444 whatever the umask: readable by everyone,
// writable by no one).
int MakeEmptyReadonly(int dir, const char* name) {
  int file = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
  if (file < 0) return -1;
  close(file);
  return fchmodat(dir, name, 0444, 0);
}

// Copies the next name of a '/'-separated list into `name` (NUL-terminated, at most size - 1
// bytes) and moves `cursor` past it; false at the end of the list.
bool NextName(const char** cursor, char* name, size_t size) {
  const char* c = *cursor;
  if (*c == '\0') return false;
  size_t n = 0;
  while (*c != '\0' && *c != '/' && n < size - 1) name[n++] = *c++;
  if (*c == '/') ++c;
  name[n] = '\0';
  *cursor = c;
  return true;
}

// Adds the IN_OPEN watch of the next mask slot (the file at dir/name) to the host's inotify
// instance and records its descriptor. No watch instance: nothing.
int WatchMask(ChildPlan* plan, MaskState* masks, const char* dir, const char* name) {
  int slot = masks->count++;
  if (plan->mask_watch_fd < 0 || slot >= plan->mask_count) return 0;
  char path[4096];
  size_t n = 0;
  for (const char* c = dir; *c != '\0' && n < sizeof path - 1; ++c) path[n++] = *c;
  if (n < sizeof path - 1) path[n++] = '/';
  for (const char* c = name; *c != '\0' && n < sizeof path - 1; ++c) path[n++] = *c;
  path[n] = '\0';
  int wd = static_cast<int>(syscall(SYS_inotify_add_watch, plan->mask_watch_fd, path, IN_OPEN));
  if (wd < 0) return -1;
  plan->mask_wds[slot] = wd;
  return 0;
}

// Writes the staging name of the file mask in watch slot `slot` ("m<slot>", the name the host
// reads back from the watch's events) into `name` (at least 16 bytes). No formatting library here:
// this runs between clone and exec.
void SlotName(int slot, char* name) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + slot % 10);
    slot /= 10;
  } while (slot > 0 && n < 11);
  name[0] = 'm';
  for (int i = 0; i < n; ++i) name[1 + i] = digits[n - 1 - i];
  name[1 + n] = '\0';
}

// The staging of the file masks, made at the first (whose name is `first`): a detached tmpfs
// holding one empty read-only file, readable through a Landlock rule on its inode; attached at
// kStaging with a read-only bind of itself on top, which becomes the working directory. Each file
// mask is then a link to that file (a name of its own, so the watch on the staging directory
// reports which mask was opened) bound from the read-only top: one link and one mount per mask.
int OpenStaging(ChildPlan* plan, MaskState* masks, const char* first) {
  masks->staging = MakeDetachedTmpfs("0755");
  if (masks->staging < 0 || MakeEmptyReadonly(masks->staging, first) != 0) return -1;
  int file = openat(masks->staging, first, O_PATH | O_CLOEXEC);
  if (file < 0) return -1;
  int rc = AllowReading(plan, file);
  int saved = errno;
  close(file);
  errno = saved;
  if (rc != 0 || MoveOnto(masks->staging, kStaging) != 0) return -1;
  masks->attached = 1;
  // A bind of an attached mount (not a detached one) works on every kernel with the new mount API.
  if (mount(kStaging, kStaging, nullptr, MS_BIND, nullptr) != 0) return -1;
  masks->attached = 2;
  int readonly = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
  if (SetAttr(AT_FDCWD, kStaging, AT_SYMLINK_NOFOLLOW, readonly, 0) != 0) return -1;
  if (chdir(kStaging) != 0) return -1;
  if (plan->mask_watch_fd < 0) return 0;
  masks->watch =
      static_cast<int>(syscall(SYS_inotify_add_watch, plan->mask_watch_fd, ".", IN_OPEN));
  return masks->watch < 0 ? -1 : 0;
}

}  // namespace

int Snapshot(MaskState* masks, const MountStep& step) {
  if (DropSnapshot(masks) != 0) return -1;
  if (mount(step.path, kStaging, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  masks->snapshot = true;
  return chdir(kStaging);
}

int PinFromSnapshot(const MaskState* masks, const MountStep& step, bool checked) {
  if (!masks->snapshot || step.data == nullptr || step.data[0] == '\0' || step.data[0] == '/') {
    errno = EINVAL;
    return -1;
  }
  // step.data is resolved from the working directory: the snapshot's root.
  if (mount(step.data, step.path, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  // The root's clone is nosuid throughout, and so is each bind of it.
  if (checked) return 0;
  return SetAttr(AT_FDCWD, step.path, AT_SYMLINK_NOFOLLOW, MOUNT_ATTR_NOSUID, 0);
}

int DropSnapshot(MaskState* masks) {
  if (!masks->snapshot) return 0;
  if (chdir("/") != 0 || umount2(kStaging, MNT_DETACH) != 0) return -1;
  masks->snapshot = false;
  return 0;
}

int FinishMasks(MaskState* masks) {
  if (DropSnapshot(masks) != 0) return -1;
  // The top (read-only bind) first, then the staging under it: the masks keep their own mounts.
  for (; masks->attached > 0; --masks->attached) {
    if (umount2(kStaging, MNT_DETACH) != 0) return -1;
  }
  if (masks->staging >= 0) close(masks->staging);
  masks->staging = -1;
  return 0;
}

int MaskFile(ChildPlan* plan, MaskState* masks, const MountStep& step) {
  int slot = masks->count++;
  char name[16];
  SlotName(slot, name);
  if (masks->staging < 0) {
    if (OpenStaging(plan, masks, name) != 0) return -1;
    SlotName(slot, masks->first);
  } else if (linkat(masks->staging, masks->first, masks->staging, name, 0) != 0) {
    return -1;
  }
  // A clone of the read-only top (read-only, nosuid, nodev, noexec), resolved from the working
  // directory: the target path is looked up once, by this call. A link at its end is followed:
  // the mask then lies over the file the link leads to, which is what the path shows.
  if (mount(name, step.path, nullptr, MS_BIND, nullptr) != 0) return -1;
  // A denyWrite entry too (step.data set): planned as a real path, so a link found at its end now
  // is refused, not masked where it leads (which would leave the link free to be replaced). Told
  // not to follow it, mount_setattr finds no mount root on a link and fails. The flags are the
  // mask's own already (a clone of the read-only top).
  if (step.data != nullptr && SetAttr(AT_FDCWD, step.path, AT_SYMLINK_NOFOLLOW,
                                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0) != 0) {
    return -1;
  }
  // The host's inotify instance learns of every open of the mask (the path now resolves to it):
  // the command reading a hidden file is reported as a denial naming that file.
  if (masks->watch >= 0 && slot < plan->mask_count) plan->mask_wds[slot] = masks->watch;
  return 0;
}

int MaskDirectory(ChildPlan* plan, MaskState* masks, const MountStep& step) {
  int mnt = MakeDetachedTmpfs("0111");
  if (mnt < 0) return -1;
  char name[256];
  const char* names = step.data != nullptr ? step.data : "";
  int rc = 0;
  for (const char* c = names; rc == 0 && NextName(&c, name, sizeof name);)
    rc = MakeEmptyReadonly(mnt, name);
  if (rc == 0) rc = AllowReading(plan, mnt);
  if (rc == 0) rc = SetAttr(mnt, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0);
  if (rc == 0) rc = MoveOnto(mnt, step.path);
  // A template's directory mask: its root is kept for each run's Landlock rule.
  bool kept = false;
  if (rc == 0 && plan->template_build) {
    kept = plan->template_dir_used < plan->template_dir_count;
    if (kept) plan->template_dir_fds[plan->template_dir_used++] = mnt;
    if (!kept) {
      errno = E2BIG;
      rc = -1;
    }
  }
  int saved = errno;
  if (!kept) close(mnt);
  errno = saved;
  if (rc != 0) return -1;
  for (const char* c = names; NextName(&c, name, sizeof name);) {
    if (WatchMask(plan, masks, step.path, name) != 0) return -1;
  }
  return 0;
}

}  // namespace child_setup
