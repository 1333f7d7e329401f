// SPDX-License-Identifier: MIT
// The masks over hidden paths (credential stores, deny-read entries), applied by the sandbox's
// first process between clone() and execve() (raw system calls only): each hidden file, and each
// file of a hidden directory, is an empty read-only file of its own whose opens the host's inotify
// instance sees, so a read of it is reported as a denial naming the path.
#pragma once

#include "linux/child_setup.h"

namespace child_setup {

// The masks applied so far: the staging tmpfs of the file masks (-1 until the first) and how many
// watch slots are taken (one per file mask, one per stand-in of a directory mask).
struct MaskState {
  int staging = -1;
  int count = 0;
};

// A file mask: an empty read-only file of its own (in a staging tmpfs made at the first) bound over
// step.path, readable through a Landlock rule on its own inode, watched for opens.
int MaskFile(ChildPlan* plan, MaskState* masks, const MountStep& step);

// A directory mask: an empty, read-only tmpfs over step.path whose root is search-only (mode 0111:
// its names cannot be listed), holding one empty read-only stand-in per name of step.data
// ('/'-separated, the regular files the hidden directory held), readable through a Landlock rule
// on the tmpfs root and each watched like a file mask.
int MaskDirectory(ChildPlan* plan, MaskState* masks, const MountStep& step);

}  // namespace child_setup
