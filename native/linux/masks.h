// SPDX-License-Identifier: MIT
// The masks over hidden paths (credential stores, deny-read entries), applied by the sandbox's
// first process between clone() and execve() (raw system calls only): each hidden file, and each
// file of a hidden directory, is an empty read-only file under a name of its own whose opens the
// host's inotify instance sees, so a read of it is reported as a denial naming the path.
#pragma once

#include "linux/child_setup.h"

namespace child_setup {

// Where the staging of the file masks is attached while they are made: the sandbox's own /dev/shm
// tmpfs, mounted before any mask (nothing of the host's is hidden there), uncovered again by
// FinishMasks.
constexpr const char* kStaging = "/dev/shm";

// The masks applied so far: the staging tmpfs of the file masks (-1 until the first), the name of
// its one file, how many of its mounts are attached at kStaging, the watch of its directory (-1:
// none) and how many watch slots are taken (one per file mask, one per stand-in of a directory
// mask).
struct MaskState {
  int staging = -1;
  char first[16] = {0};
  int attached = 0;
  int watch = -1;
  int count = 0;
  // Whether a snapshot of a write root (its pins' source, see Snapshot) is attached at kStaging.
  bool snapshot = false;
};

// Attaches a recursive bind of the write root step.path at kStaging and makes it the working
// directory: the source of the pins in that root (PinFromSnapshot), taken before any of them.
// A bind copies the mounts beneath its source, and the kernel finds them by going through every
// mount directly on the source's mount: pinning from the root itself made the n-th pin go through
// the n - 1 pins before it (1,000 pins were half a million checks). The snapshot holds only the
// mounts the root had before the pins. One before it is taken away first.
int Snapshot(MaskState* masks, const MountStep& step);

// A pin from a snapshot: the directory step.data of the snapshot (the same directory, relative to
// the root) bound with what is mounted beneath it onto step.path, writable and nosuid as the root
// is. mount(2) follows a symbolic link at the end of the target, mount_setattr is told not to: on a
// link it finds no mount root and fails, so a directory swapped for a link is refused instead of
// left unpinned. `checked`: in an open link window (link_window.h), where the mount call itself
// refuses a link, the mount_setattr is left out.
int PinFromSnapshot(const MaskState* masks, const MountStep& step, bool checked);

// Takes the snapshot away from kStaging, if one is there (before any step that is not a pin).
int DropSnapshot(MaskState* masks);

// A file mask: a link "m<slot>" to the one empty read-only file of the staging (made at the first
// mask, readable through a Landlock rule on its inode), bound read-only over step.path. Its opens
// are seen by the watch on the staging directory, under its own name.
int MaskFile(ChildPlan* plan, MaskState* masks, const MountStep& step);

// Takes the staging away from kStaging once every mount step is done (the masks stay).
int FinishMasks(MaskState* masks);

// A directory mask: an empty, read-only tmpfs over step.path whose root is search-only (mode 0111:
// its names cannot be listed), holding one empty read-only stand-in per name of step.data
// ('/'-separated, the regular files the hidden directory held), readable through a Landlock rule
// on the tmpfs root and each watched like a file mask.
int MaskDirectory(ChildPlan* plan, MaskState* masks, const MountStep& step);

}  // namespace child_setup
