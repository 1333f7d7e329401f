// SPDX-License-Identifier: MIT
// The link-refusing window of the write root with most pins and denyWrite entries (see
// link_window.h). Runs between clone() and execve(): raw system calls, no allocation.
#include "linux/link_window.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "linux/kernel_compat.h"
#include "linux/mount_calls.h"

namespace child_setup {
namespace {

constexpr char kNoSymfollow[] = ",nosymfollow";  // as /proc/self/mountinfo lists the flag
constexpr size_t kTokenLength = sizeof kNoSymfollow - 1;

// Whether a mount of this namespace already refuses links: 1 when one does or the table cannot
// be read (the window is then not used), 0 when none does. The table is read in chunks, keeping
// the end of each so that a token split between two reads is still found.
int SomeMountRefusesLinks() {
  int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  char buf[4096 + kTokenLength];
  size_t kept = 0;
  int found = 0;
  for (;;) {
    ssize_t n = read(fd, buf + kept, sizeof buf - kept);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) found = 1;
    if (n <= 0) break;
    size_t total = kept + static_cast<size_t>(n);
    if (memmem(buf, total, kNoSymfollow, kTokenLength) != nullptr) {
      found = 1;
      break;
    }
    kept = total < kTokenLength - 1 ? total : kTokenLength - 1;
    memmove(buf, buf + total - kept, kept);
  }
  close(fd);
  return found;
}

}  // namespace

int OpenLinkWindow(const ChildPlan* plan, int index, LinkWindow* window, MaskState* masks) {
  if (!window->looked) {
    window->usable = SomeMountRefusesLinks() == 0;
    window->looked = true;
  }
  if (!window->usable) return 0;
  // A pin snapshot of another root is done with: the read-only one goes beneath the next.
  if (DropSnapshot(masks) != 0) return -1;
  if (SetAttr(AT_FDCWD, plan->window_root, AT_RECURSIVE | AT_SYMLINK_NOFOLLOW,
              MOUNT_ATTR_NOSYMFOLLOW, 0) != 0) {
    return -1;
  }
  window->open = true;
  if (window->readonly_taken || index > plan->readonly_snapshot_last) return 0;
  // Taken after the flag is set, so that lookups in it refuse links too; before the pins, so
  // that it holds none of them (a copy of each would cost as much as the pin itself).
  if (mount(plan->window_root, kStaging, nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
  window->readonly_snapshot = true;
  window->readonly_taken = true;
  return SetAttr(AT_FDCWD, kStaging, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0);
}

int CloseLinkWindow(const ChildPlan* plan, LinkWindow* window) {
  if (!window->open) return 0;
  window->open = false;
  return SetAttr(AT_FDCWD, plan->window_root, AT_RECURSIVE | AT_SYMLINK_NOFOLLOW, 0,
                 MOUNT_ATTR_NOSYMFOLLOW);
}

int DropReadonlySnapshot(LinkWindow* window, MaskState* masks) {
  if (!window->readonly_snapshot) return 0;
  // A pin snapshot above it goes first; the working directory may be its root.
  if (DropSnapshot(masks) != 0 || chdir("/") != 0 || umount2(kStaging, MNT_DETACH) != 0) return -1;
  window->readonly_snapshot = false;
  return 0;
}

int BindFromReadonlySnapshot(const LinkWindow* window, const MaskState* masks,
                             const MountStep& step) {
  if (!window->open || !window->readonly_snapshot || masks->snapshot || masks->attached > 0 ||
      step.data == nullptr) {
    errno = EINVAL;
    return -1;
  }
  return mount(step.data, step.path, nullptr, MS_BIND | MS_REC, nullptr);
}

}  // namespace child_setup
