// SPDX-License-Identifier: MIT
// The mount steps of a sandbox's set-up (see mount_steps.h). Runs in the sandbox's first process
// after clone(), on the parent's memory: raw system calls on precomputed data only.
#include "linux/mount_steps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/kernel_compat.h"
#include "linux/link_window.h"
#include "linux/mount_calls.h"

namespace child_setup {
namespace {

int MakeDirs(const char* path) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    buf[i] = saved;
  }
  return 0;
}

// A write root's tree, cloned detached (nosuid) into its slot until its attach step.
int DetachClone(ChildPlan* plan, const MountStep& step) {
  if (step.slot < 0 || step.slot >= kMountSlots) {
    errno = EINVAL;
    return -1;
  }
  int fd = OpenTreeClone(AT_FDCWD, step.path);
  if (fd < 0) return -1;
  if (SetAttr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_NOSUID, 0) != 0) return -1;
  plan->mount_slots[step.slot] = fd;
  return 0;
}

int MountTmpfs(ChildPlan* plan, const MountStep& step) {
  if (mount("tmpfs", step.path, "tmpfs", MS_NOSUID | MS_NODEV,
            step.data != nullptr ? step.data : "mode=1777") != 0) {
    return -1;
  }
  if (step.slot < 0 || step.slot >= kWatchSlots) return 0;
  // Its root, before anything is mounted over or under it: the init reads how full it is.
  // Kept at 10 and up, clear of the descriptors InstallStdio moves into 0..4.
  int fd = open(step.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  plan->watch_fds[step.slot] = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  int saved = errno;
  close(fd);
  errno = saved;
  return plan->watch_fds[step.slot] < 0 ? -1 : 0;
}

int MountDevpts(const MountStep& step) {
  if (mount("devpts", step.path, "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=620") != 0) {
    return -1;
  }
  int pts = open(step.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (pts < 0) return -1;
  int rc = BindReadonly(pts, "ptmx", "/dev/ptmx");
  int saved = errno;
  close(pts);
  errno = saved;
  // The ptmx node must stay writable: undo the read-only flag on the new bind.
  if (rc == 0) rc = SetAttr(AT_FDCWD, "/dev/ptmx", 0, 0, MOUNT_ATTR_RDONLY);
  return rc;
}

int ApplyMount(ChildPlan* plan, const MountStep& step, MaskState* masks, const LinkWindow& window) {
  // In an open link window a link on either path fails the mount itself: no check of its own.
  bool checked = window.open && (step.flags & kStepInWindow) != 0;
  switch (step.kind) {
    case kMountDetachClone:
      return DetachClone(plan, step);
    case kMountReadonlyAll:
      return SetAttr(AT_FDCWD, "/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
    case kMountTmpfs:
      return MountTmpfs(plan, step);
    case kMountMkdirs:
      return MakeDirs(step.path);
    case kMountAttach:
      if (step.slot < 0 || step.slot >= kMountSlots || plan->mount_slots[step.slot] < 0) {
        errno = EINVAL;
        return -1;
      }
      return MoveOnto(plan->mount_slots[step.slot], step.path);
    case kMountReadonlyBind:
      // A detached clone moved onto the path itself, not followed: a link the user made stays a
      // link, protected (it cannot be replaced) and read-only where it leads.
      return BindReadonly(AT_FDCWD, step.path, step.path);
    case kMountReadonlyReal:
      if (checked && (step.flags & kStepFromReadonly) != 0 && window.readonly_snapshot) {
        return BindFromReadonlySnapshot(&window, masks, step);
      }
      return BindReadonlyInPlace(step.path);
    case kMountSnapshot:
      return Snapshot(masks, step);
    case kMountPin:
      // A root with few pins takes no snapshot: each is bound from its own path.
      return step.data == nullptr ? PinOntoItself(step.path, checked)
                                  : PinFromSnapshot(masks, step, checked);
    case kMountMaskFile:
      return MaskFile(plan, masks, step);
    case kMountMaskDir:
      return MaskDirectory(plan, masks, step);
    case kMountProc:
      return mount("proc", step.path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    case kMountDevpts:
      return MountDevpts(step);
    default:
      errno = EINVAL;
      return -1;
  }
}

// Opens the link window before a step of it, closes it before any other step, and takes the
// read-only snapshot away once its last bind is made.
int StepWindow(const ChildPlan* plan, int index, LinkWindow* window, MaskState* masks) {
  bool inside = (plan->mounts[index].flags & kStepInWindow) != 0;
  if (!inside && CloseLinkWindow(plan, window) != 0) return -1;
  if (index > plan->readonly_snapshot_last && DropReadonlySnapshot(window, masks) != 0) return -1;
  if (inside && !window->open && OpenLinkWindow(plan, index, window, masks) != 0) return -1;
  // The first of a run of binds from the read-only snapshot: their paths are relative to its root.
  bool readonly = (plan->mounts[index].flags & kStepFromReadonly) != 0;
  if (readonly && window->readonly_snapshot &&
      (index == 0 || (plan->mounts[index - 1].flags & kStepFromReadonly) == 0)) {
    return chdir(kStaging);
  }
  return 0;
}

}  // namespace

int ApplyMounts(ChildPlan* plan, MaskState* masks, int32_t* stage) {
  LinkWindow window;
  *stage = kStageMount;
  for (int i = 0; i < plan->mount_count; ++i) {
    const MountStep& step = plan->mounts[i];
    // A snapshot serves the pins right after it; nothing else may find it at the staging place.
    bool keeps = step.kind == kMountPin || step.kind == kMountSnapshot;
    if ((!keeps && DropSnapshot(masks) != 0) || StepWindow(plan, i, &window, masks) != 0 ||
        ApplyMount(plan, step, masks, window) != 0) {
      // The failing step's index travels in the high bits so the parent can name the path.
      *stage = kStageMount | ((i + 1) << 8);
      return -1;
    }
  }
  if (CloseLinkWindow(plan, &window) != 0 || DropReadonlySnapshot(&window, masks) != 0) return -1;
  return 0;
}

}  // namespace child_setup
